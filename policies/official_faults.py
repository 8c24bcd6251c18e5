"""An executor profile on the official envs: the benchmark planner's motions, failed as the profile says.

On ``--backend robomme`` the benchmark's own ``multi_choice`` planner executes each option, so the
scripted executor's failure model (``policies/failure_model.py``) has no motion of ours to change.
:class:`OfficialFaults` changes the planner's instead, in the two places a learned policy's
failure would show:

* **the actions sent to the simulator** (:meth:`OfficialFaults.action`, called by the env's action
  tap under the benchmark's wrappers for every step the planner takes): a grasp whose gripper never
  closes (``miss``), a carry whose gripper opens ``after_steps`` into it (``drop``), a motion that
  stops ``after_steps`` in and holds for the rest of the option (``short``, ``stall``), a press that
  starts ``shift_steps`` late (the arm holds first);
* **the command an option runs** (:meth:`OfficialFaults.runs`): a missed grasp and then the real
  one (``miss_retry``), a press or stick move run twice (``extra``), the same option on the nearest
  other candidate within ``near_m`` (``wrong_object``), a sibling stick move (``wrong_turn``).

Physics and the benchmark's own checker decide every outcome. When the planner, asked for the
next option, finds no motion from where a failed motion left the arm (its screw and RRT* attempts
exhausted), the episode ends as ``fail`` with the planner's message, not ``error``: errors are
infrastructure and left out of every rate, and this one is the executor's failure. The draws are
:func:`policies.failure_model.draw_failure` from the episode's policy stream, one per decision whose
option has a skill, as on our envs. ``early`` (a timed press that skips its waiting) has no
equivalent: the planner's press options do not wait, the decision's time is the composer's; it is
drawn (so the stream stays aligned) and recorded as not applied, like a ``wrong_object`` with no
neighbour near enough.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from envs.official.mapping import Command
from policies.executor_profile import ExecutorProfile
from policies.failure_model import Failure, choose_sibling, draw_failure

OPEN = 1.0
"""The gripper channel of the planner's pd_joint_pos action when open (ManiSkill's motion planner)."""

SKILL_PATTERNS: tuple[tuple[str, str], ...] = (
    ("grasp", r"^pick up\b"),
    ("press", r"^press\b"),
    ("stick", r"^move (left|right|forward|backward|up|down)\b|circling around"),
    ("carry", r"^(put|place|insert|drop|hook)\b|^close gripper and push\b|^move to the top of the target\b"),
)
"""The benchmark's option texts (its ``vqa_options``: a closed set, not a composer's words) by the
skill they exercise, first match wins; any other option (``remain static``, ``move to the top of
the button to prepare``) is never perturbed."""


def official_skill(action_text: str) -> str | None:
    """The skill of an official option's action text (:data:`SKILL_PATTERNS`), or None."""
    text = " ".join(str(action_text or "").lower().split())
    return next((skill for skill, pattern in SKILL_PATTERNS if re.search(pattern, text)), None)


@dataclass(frozen=True)
class Run:
    """One option run by the planner in a decision: the command, and the failure its actions are
    perturbed by (None: the planner's own actions)."""

    command: Command
    perturb: Failure | None = None

    def to_action(self) -> dict:
        return self.command.to_action()


Candidates = Callable[[str], tuple[list, list]]
"""An option label -> (world positions, image points) of its candidates (empty for an option that
takes no object); called only when a wrong object is drawn, since positions cost a query per actor."""


@dataclass
class OfficialFaults:
    """The profile's failures for one official episode (``reset`` per episode with its policy seed)."""

    profile: ExecutorProfile
    task: str
    executor_events: list[dict[str, Any]] = field(default_factory=list)
    """Each failure drawn: the subgoal, option text, skill, kind and parameters; ``applied`` False
    where it had no equivalent in this decision (module docstring)."""

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(0)
        self._armed: Failure | None = None
        self._n = 0
        self._last = None
        self._frozen = None

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.executor_events = []
        self._armed, self._n, self._last, self._frozen = None, 0, None, None

    @property
    def applied(self) -> bool:
        """Whether any failure has changed a motion in this episode so far."""
        return any(e.get("applied") for e in self.executor_events)

    def crash_status(self, error: str) -> tuple[str, str]:
        """(status, reason) of the episode when the planner crashed: ``error`` (infrastructure, left
        out of every rate) unless a failure had changed a motion before it, when the planner found no
        motion from where that left the arm: ``fail``, the executor's (a learned policy would flail
        there until its budget ran out)."""
        if self.applied:
            return "fail", f"after the executor profile's failures, the planner gave up: {error}"
        return "error", error

    # ------------------------------------------------------------------ per decision
    def runs(self, subgoal: str, cmd: Command, options: list[dict], candidates: Candidates) -> list[Run]:
        """The option runs of one decision: ``[Run(cmd)]`` unless a failure is drawn.

        ``options``: the decision's ``{"label", "action"}`` list; ``candidates``: see :data:`Candidates`."""
        choice, point = cmd.choice, cmd.point
        action_text = next((str(o.get("action") or "") for o in options if o.get("label") == choice), "")
        skill = official_skill(action_text)
        failure = draw_failure(self.rng, self.profile.rates(self.task, skill), skill)
        plain = [Run(cmd)]
        if failure is None:
            return plain
        k, p = failure.kind, failure.params
        out: list[Run] | None
        if k == "miss_retry":
            out = [Run(cmd, failure), Run(cmd)]
        elif k == "extra":
            out = [Run(cmd), Run(cmd)]
        elif k == "wrong_object":
            other = nearest_other(point, *candidates(choice), near_m=p["near_m"])
            out = None if other is None else [Run(Command(choice, other))]
            if other is not None:
                p["point"] = list(other)
        elif k == "wrong_turn":
            sib = sibling_choice(choice, options, p.pop("pick"))
            out = None if sib is None else [Run(Command(sib[0], None))]
            if sib is not None:
                p["instead"] = sib[1]
        elif k == "early":
            out = None
        else:  # miss, drop, short, stall, late: the actions of the one run
            out = [Run(cmd, failure)]
        self.executor_events.append(dict(failure.record(subgoal, action_text), applied=out is not None))
        return out or plain

    # ------------------------------------------------------------------ per env step (the action tap)
    def arm(self, run: Run | None) -> None:
        """The next actions the tap sees belong to ``run`` (None: between decisions, unperturbed)."""
        self._armed, self._n, self._frozen = (None if run is None else run.perturb), 0, None

    def action(self, action, hold_steps=None):
        """The action the simulator receives for the planner's ``action`` (the same object when
        nothing is perturbed). ``hold_steps(a, n)`` steps the simulator ``n`` times with ``a``
        beneath the benchmark's recording (``late``)."""
        f, i = self._armed, self._n
        self._n += 1
        out = action
        if f is not None:
            k, p = f.kind, f.params
            if k in ("miss", "miss_retry") and _has_gripper(action):
                out = _with_gripper(action, OPEN)
            elif k == "drop" and i >= p["after_steps"] and _has_gripper(action):
                out = _with_gripper(action, OPEN)
            elif k in ("short", "stall") and i >= p["after_steps"]:
                if self._frozen is None:
                    self._frozen = _copy(self._last if self._last is not None else action)
                out = _copy(self._frozen)
            elif k == "late" and i == 0 and self._last is not None and hold_steps is not None:
                hold_steps(_copy(self._last), int(p["shift_steps"]))
        self._last = out
        return out


def nearest_other(point, positions, points, near_m: float):
    """The image point of the candidate nearest (on the table, metres) to the one at ``point``, other
    than it and within ``near_m``; None when there is none (or ``point`` matches no candidate)."""
    if point is None or not len(points):
        return None
    seen = [(i, p) for i, p in enumerate(points) if p is not None and positions[i] is not None]
    if len(seen) < 2:
        return None
    here_i = min(seen, key=lambda ip: (ip[1][0] - point[0]) ** 2 + (ip[1][1] - point[1]) ** 2)[0]
    here = np.asarray(positions[here_i], dtype=float).reshape(-1)[:2]
    best = None
    for i, p in seen:
        if i == here_i:
            continue
        d = float(np.linalg.norm(np.asarray(positions[i], dtype=float).reshape(-1)[:2] - here))
        if d <= near_m and (best is None or d < best[0]):
            best = (d, tuple(int(v) for v in p))
    return None if best is None else best[1]


def sibling_choice(choice: str, options: list[dict], pick: float) -> tuple[str, str] | None:
    """(label, action text) of another stick move among ``options``, chosen by ``pick`` in [0, 1)."""
    return choose_sibling([(str(o.get("label")), str(o.get("action") or "")) for o in options
                           if o.get("label") != choice and official_skill(str(o.get("action") or "")) == "stick"], pick)


def _has_gripper(action) -> bool:
    return int(np.prod(getattr(action, "shape", (len(action),)))) == 8  # 7 arm joints + the gripper


def _copy(action):
    return action.clone() if hasattr(action, "clone") else np.array(action, copy=True)


def _with_gripper(action, value: float):
    a = _copy(action)
    a[..., -1] = value
    return a
