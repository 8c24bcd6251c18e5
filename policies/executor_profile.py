"""Executor profiles: a declared, seeded model of how a learned low-level policy fails, per skill.

π0.5 cannot run on these machines, and the scripted executor succeeds on almost every oracle
episode, so a memory that counts *commanded* subgoals rather than *observed* events looks perfect
here and fails under a learned policy. A profile makes the scripted executor fail the way a learned
policy does: each kind of failure is a real change of the motion the simulator executes (a grasp
that closes on air, a carry that opens early, a press that stops short or comes twice, a stick move
that goes one node too far or turns the wrong way, a stall), never an edited outcome; physics
decides what follows. The draws come from the episode's policy stream, so the same config and seed
fail the same subgoals.

A profile gives per-skill failure rates (:class:`FailureRates`) with per-task overrides: a learned
policy's reliability differs by task (the published oracle-subgoal column has InsertPeg at 15.6 and
PickXtimes at 100). ``clean`` is the exact scripted executor; ``pi05-like`` is fitted on train
episodes by ``scripts/fit_executor_profile.py`` (its output: ``policies/profiles/pi05_like.json``);
any JSON file of the same shape is a researcher's own profile (``--executor-profile <file>``).

Skills, by the executor option a subgoal selects (``skill_of``):

- ``grasp``: ``pick``; ``carry``: an option that moves a held object (place, put down, move over,
  insert); ``press``: ``press``; ``stick``: a stick or pattern move (``route_*``, ``move_<dir>``,
  ``stick_*``); any other option (``wait``) is never perturbed.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

SKILLS = ("grasp", "carry", "press", "stick")
PROFILE_DIR = Path(__file__).resolve().parent / "profiles"
BUILTIN = {"clean": None, "pi05-like": PROFILE_DIR / "pi05_like.json",
           "pi05-like-official": PROFILE_DIR / "pi05_like_official.json"}
"""Built-in profiles: ``pi05-like`` is fitted on our envs, ``pi05-like-official`` on the benchmark's
own (``scripts/fit_executor_profile.py --backend robomme``: its planner recovers from a failure
differently, so the same rates give a different ceiling there)."""


@dataclass(frozen=True)
class FailureRates:
    """How often each kind of failure happens, per subgoal of the skill it names (probabilities)."""

    miss_retry: float = 0.0
    """grasp: the first attempt closes on air or an edge, lifts, opens; then the real grasp."""
    miss: float = 0.0
    """grasp: the attempt misses and the policy moves on with an empty gripper (no retry)."""
    wrong_object: float = 0.0
    """grasp: the nearest other object of the same kind is picked, when one is within ``near_m``."""
    near_m: float = 0.08
    """grasp: how close another object must be for ``wrong_object`` to apply (metres)."""
    drop: float = 0.0
    """carry: the gripper opens partway through the carry; the object lands where physics puts it."""
    extra: float = 0.0
    """press, stick: the motion runs once more (a second press; one node too far)."""
    short: float = 0.0
    """press, stick: the motion stops partway (a press that does not reach the cap) and holds."""
    wrong_turn: float = 0.0
    """stick: a sibling move (the other side, the other sense, another direction) instead."""
    late: float = 0.0
    """press: the motion starts ``shift_steps`` late (a timed press misses its window)."""
    early: float = 0.0
    """press: up to ``shift_steps`` of the motion's waiting are skipped (a timed press comes early)."""
    shift_steps: int = 12
    """press: how many steps ``late`` and ``early`` move the motion by (at most)."""
    stall: float = 0.0
    """any perturbed skill: the motion stops partway and the arm holds until the subgoal changes."""

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "near_m":
                if not 0.0 < v <= 0.5:
                    raise ValueError(f"near_m must be in (0, 0.5] metres, got {v!r}")
            elif f.name == "shift_steps":
                if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 200:
                    raise ValueError(f"shift_steps must be an int in [1, 200], got {v!r}")
            elif not 0.0 <= v <= 1.0:
                raise ValueError(f"{f.name} must be a probability in [0, 1], got {v!r}")

    @property
    def active(self) -> bool:
        return any(getattr(self, name) > 0 for name in _probabilities())

    def scaled(self, s: float) -> "FailureRates":
        """Every probability times ``s`` (capped at 1): the fit's one knob per task."""
        kw = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in _probabilities():
            kw[name] = min(1.0, float(kw[name]) * float(s))
        return FailureRates(**kw)


NOT_PROBABILITIES = ("near_m", "shift_steps")
"""The fields of :class:`FailureRates` that parameterise a failure rather than give its rate."""


def _probabilities() -> list[str]:
    return [f.name for f in fields(FailureRates) if f.name not in NOT_PROBABILITIES]


CLEAN = FailureRates()


@dataclass(frozen=True)
class ExecutorProfile:
    """Failure rates per skill, with per-task overrides of whole skills."""

    name: str = "clean"
    skills: dict[str, FailureRates] = field(default_factory=dict)
    """skill -> rates, for every task without an override."""
    tasks: dict[str, dict[str, FailureRates]] = field(default_factory=dict)
    """task -> skill -> rates, replacing ``skills[skill]`` on that task."""
    source: str = ""
    """Where the profile came from (a built-in's name or a file path), for the row."""

    def __post_init__(self) -> None:
        for where, table in [("skills", self.skills), *((f"tasks.{t}", s) for t, s in self.tasks.items())]:
            for skill in table:
                if skill not in SKILLS:
                    raise ValueError(f"executor profile {self.name!r}: unknown skill {skill!r} in {where} "
                                     f"(skills: {', '.join(SKILLS)})")

    def rates(self, task: str, skill: str) -> FailureRates:
        return self.tasks.get(task, {}).get(skill) or self.skills.get(skill) or CLEAN

    @property
    def active(self) -> bool:
        return any(r.active for r in self.skills.values()) or any(
            r.active for t in self.tasks.values() for r in t.values())

    def to_dict(self) -> dict:
        return {"name": self.name,
                "skills": {k: asdict(v) for k, v in self.skills.items()},
                "tasks": {t: {k: asdict(v) for k, v in s.items()} for t, s in self.tasks.items()}}

    @classmethod
    def from_dict(cls, d: dict, source: str = "") -> "ExecutorProfile":
        unknown = set(d) - {"name", "skills", "tasks", "fit"}
        if unknown:
            raise ValueError(f"executor profile {source or d.get('name')!r}: unknown keys {sorted(unknown)} "
                             "(expected name, skills, tasks and an optional fit record)")

        def rates(table: dict, where: str) -> dict[str, FailureRates]:
            out = {}
            for skill, kw in (table or {}).items():
                try:
                    out[skill] = FailureRates(**kw)
                except TypeError as exc:
                    raise ValueError(f"executor profile {source!r}: {where}.{skill}: {exc}") from None
            return out

        from envs.episodes import ALL_TASKS as TASKS

        tasks = {}
        for task, table in (d.get("tasks") or {}).items():
            if task not in TASKS:
                raise ValueError(f"executor profile {source!r}: unknown task {task!r}")
            tasks[task] = rates(table, f"tasks.{task}")
        return cls(name=str(d.get("name") or Path(source).stem or "custom"), skills=rates(d.get("skills"), "skills"),
                   tasks=tasks, source=source)


def load_profile(spec: str) -> ExecutorProfile:
    """``clean``, ``pi05-like`` or a path to a JSON profile; a clear error names a bad value."""
    if spec in BUILTIN:
        path = BUILTIN[spec]
        if path is None:
            return ExecutorProfile(name="clean", source="clean")
        if not path.is_file():
            raise ValueError(f"executor profile {spec!r} has not been fitted here ({path} is missing): "
                             "python -m scripts.fit_executor_profile writes it")
        return ExecutorProfile.from_dict(json.loads(path.read_text()), source=spec)
    path = Path(spec)
    if not path.is_file():
        raise ValueError(f"executor profile {spec!r} is neither a built-in ({', '.join(BUILTIN)}) nor a JSON file")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"executor profile {spec!r} is not valid JSON: {exc}") from None
    return ExecutorProfile.from_dict(data, source=str(path))


def skill_of(option: str | None) -> str | None:
    """The skill an executor option exercises (module docstring), or None: never perturbed."""
    if not option:
        return None
    if option == "pick":
        return "grasp"
    if option in ("place", "put_down", "move_over") or option.startswith("insert"):
        return "carry"
    if option == "press":
        return "press"
    if option.startswith(("route_", "move_", "stick_")):
        return "stick"
    return None
