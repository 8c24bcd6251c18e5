"""The experiment configuration: one frozen dataclass of groups, parsed from the command line by tyro.

The groups (``scope``, ``env``, ``composer``, ``policy``, ``specifier``, ``memory``, ``perception``,
``render``, ``execution``, ``logging``) are nested frozen dataclasses, each its own section of
``--help``. Their fields keep flat flags (``--tasks``, ``--policy``, ``--workers``: the group is not a
prefix), except ``memory`` and ``perception``, which always had theirs (``--memory.no-route``). A
group's selector is its ``kind`` (``cfg.policy.kind`` is ``--policy``). :data:`FLAT_FIELDS` maps a
flat name to its group and field; :meth:`ExperimentConfig.from_flat` builds a config from flat
names, and :func:`flatten_config` / :func:`config_from_dict` read config.json in either shape (by
groups, as written now, or flat, as the committed runs before the groups were).

Every field has a docstring, which becomes its ``--help`` text. The config is validated in
``__post_init__`` (nothing is rewritten there but the step budget, resolved once from the split:
tyro may build it twice), and everything derived from it (the expanded task list, the episode
indices, the conditions) is a property.

>>> cfg = parse_config(["--preset", "quick", "--tasks", "counting", "--seeds", "7", "11"])
>>> cfg.task_list
('BinFill', 'PickXtimes', 'SwingXtimes', 'StopCube')
>>> cfg.condition_names
('oracle', 'no-memory', 'memory')

Presets (``--preset``) set the scope of a run; any flag given with them overrides them:

- ``quick``: every task, episode 0, conditions oracle / no-memory / memory, seed 7.
- ``paper``: the 16 tasks, episodes 0:50, seeds 7 11 23, every named condition that runs on the
  CPU default (:data:`PAPER_CONDITIONS`: all but ``memory-single-vote``), the scripted
  policy's execution noise on (:data:`policies.noise.PAPER_NOISE`).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import tyro

from envs.episodes import ALL_TASKS, SPLITS, SUITES, check_task
from experiments.loop.conditions import (
    ALL_CONDITIONS,
    Condition,
    MemoryFlags,
    condition_from_name,
    name_of,
    specifier_refusal,
)
from memory.perception.config import PerceptionConfig
from policies.noise import PAPER_NOISE, ScriptedNoise
from policies.serving_protocol import SERVER_KINDS


class ConfigError(Exception):
    """A bad configuration value; the message names the value (and a close match, when there is one).

    Deliberately not a ``ValueError``: tyro turns ValueErrors raised while building the config into
    its own boxed message, and the CLI prints this one plainly instead.
    """


# --- expansion and parsing ------------------------------------------------------------------------
def expand_tasks(names: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Expand ``all`` and suite names; raise :class:`ConfigError` naming an unknown entry."""
    out: list[str] = []
    for name in names:
        if name == "all":
            out.extend(ALL_TASKS)
        elif name in SUITES:
            out.extend(SUITES[name])
        else:
            try:
                out.append(check_task(name))
            except ValueError:
                choices = list(ALL_TASKS) + list(SUITES) + ["all"]
                raise ConfigError(
                    f"unknown task {name!r}{_hint(name, choices)} "
                    f"(known: all, suites {', '.join(SUITES)}, tasks {', '.join(ALL_TASKS)})"
                ) from None
    return tuple(dict.fromkeys(out))


_RANGE = re.compile(r"([0-9]+):([0-9]+)(?::([0-9]+))?")


def parse_episodes(items: tuple[str, ...] | list[str] | str, split: str = "test") -> tuple[int, ...]:
    """Parse ``("0:20",)``, ``("0", "3", "7")``, ``"0,3,7"`` or a mix into indices valid for ``split``."""
    if isinstance(items, str):
        items = (items,)
    size = SPLITS[split].size if split in SPLITS else None
    out: list[int] = []
    for item in items:
        for part in str(item).replace(",", " ").split():
            if part.isascii() and part.isdecimal():
                out.append(int(part))
                continue
            m = _RANGE.fullmatch(part)
            if not m:
                guess = re.sub(r"\s*(?:-|\.\.|–)\s*", ":", part)
                hint = f"; did you mean {guess!r}?" if guess != part and _RANGE.fullmatch(guess) else ""
                raise ConfigError(
                    f"malformed episodes {part!r}{hint} (expected START:STOP such as 0:20, or integers such as 0 3 7)"
                )
            start, stop, step = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
            if stop <= start or step < 1:
                raise ConfigError(f"empty episode range {part!r} (START:STOP needs STOP > START, e.g. 0:20)")
            out.extend(range(start, stop, step))
    if not out:
        raise ConfigError("no episodes given (e.g. --episodes 0:20)")
    if size is not None:
        bad = [i for i in out if i >= size]
        if bad:
            raise ConfigError(f"episode {bad[0]} is out of range for split {split!r} (0..{size - 1})")
    return tuple(dict.fromkeys(out))


def _flag(field: str) -> str:
    return field.replace("_", "-")


def _check_at_least(group: Any, lo: int, *fields: str) -> None:
    """ConfigError naming the flag of the first of ``fields`` below ``lo`` (a None is not checked)."""
    for name in fields:
        value = getattr(group, name)
        if value is not None and value < lo:
            raise ConfigError(f"--{_flag(name)} must be >= {lo}, got {value}")


def _hint(value: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, Path):
        return str(x)
    return x


# --- the groups ----------------------------------------------------------------------------------
_FLAT = tyro.conf.arg(prefix_name=False)
"""A group's field keeps its flat flag (``--workers``, not ``--execution.workers``): the groups
order ``--help`` and the code, the flags stay those of the README, the scripts and the old runs."""


def _kind(flag: str) -> Any:
    """The group's selector field (``policy.kind``) answers to the group's own flag (``--policy``)."""
    return tyro.conf.arg(name=flag, prefix_name=False)


@dataclass(frozen=True)
class ScopeConfig:
    """Which episodes run: tasks x split episodes x seeds x conditions."""

    tasks: Annotated[tuple[str, ...], _FLAT] = ("all",)
    """Task names (e.g. BinFill), suite names (counting, permanence, reference, imitation) or `all`."""
    split: Annotated[str, _FLAT] = "test"
    """Episode split: train, test, val or ood (the tasks past their training ranges, envs/ood.py)."""
    episodes: Annotated[tuple[str, ...], _FLAT] = ("0",)
    """Episode indices: a range `START:STOP` (e.g. 0:20, stop excluded) and/or integers (e.g. 0 3 7)."""
    seeds: Annotated[tuple[int, ...], _FLAT] = (7,)
    """Run seeds (composer and policy sampling); the scene is fixed by the episode alone."""
    conditions: Annotated[tuple[str, ...], _FLAT] = ("oracle", "no-memory", "memory")
    """Condition names: oracle, no-memory, memory, recent<N>, memory-<ablation> (see experiments.loop.conditions)."""
    recent_window: Annotated[int | None, _FLAT] = None
    """When set, also run the recent-frame baseline with this many frames (adds condition recent<N>)."""

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ConfigError(f"unknown split {self.split!r}{_hint(self.split, list(SPLITS))} (known: {', '.join(SPLITS)})")
        if not self.tasks:
            raise ConfigError("no tasks given (use task names, suite names or `all`)")
        expand_tasks(self.tasks)
        parse_episodes(self.episodes, self.split)
        if not self.seeds:
            raise ConfigError("no seeds given (e.g. --seeds 7 11 23)")
        if len(set(self.seeds)) != len(self.seeds):
            raise ConfigError(f"repeated seed in --seeds {' '.join(map(str, self.seeds))}")
        for name in self.conditions:
            try:
                condition_from_name(name)
            except ValueError as e:
                raise ConfigError(str(e)) from None
        try:
            if self.recent_window is not None:
                Condition(recent_window=self.recent_window)
        except ValueError as e:
            raise ConfigError(str(e)) from None


@dataclass(frozen=True)
class EnvConfig:
    """The envs an episode runs in, the goal's wording and the step budget."""

    backend: Annotated[Literal["robomem", "robomme"], _FLAT] = "robomem"
    """Envs: robomem (this project's re-implementation, the default) or robomme (the benchmark's own
    envs, when the `robomme` package is importable; its multi_choice planner executes the subgoals)."""
    goal_style: Annotated[Literal["template", "reworded", "reworded-held-out", "reworded-probe"], _FLAT] = "template"
    """Goal wording every composer, the policy and the memory are given: the benchmark's template, or
    one of the project's hand-written rewordings (envs/tasks/goal_rewordings.json) drawn per episode
    from its goal stream: ``reworded`` from every development and held-out wording,
    ``reworded-held-out`` from the held-out ones only, ``reworded-probe`` from the probe set only
    (never tuned on; envs/core/rewording.py); recorded in each row."""
    horizon: Annotated[int, _FLAT] = 16
    """Environment steps per subgoal query (the policy's action chunk)."""
    max_steps: Annotated[int | None, _FLAT] = None
    """Step budget per episode, counted after the conditioning video (default: the split's, 1300;
    1800 on ood)."""

    def __post_init__(self) -> None:
        _check_at_least(self, 1, "horizon", "max_steps")


@dataclass(frozen=True)
class ComposerConfig:
    """Who writes the next subgoal (every condition but `oracle`, which reads the env's ground truth)."""

    kind: Annotated[Literal["oracle", "history-blind", "vlm"], _kind("composer")] = "history-blind"
    """Subgoal composer of every condition except `oracle` (which always uses the env's ground truth)."""
    history_blind_p: Annotated[float, _FLAT] = 1.0
    """History-blind composer: probability of replacing each history-dependent argument by a visible alternative."""
    vlm_endpoint: Annotated[str | None, _FLAT] = None
    """VLM composer: OpenAI-compatible base URL (e.g. http://localhost:8000/v1); None loads the model in-process."""
    vlm_model: Annotated[str, _FLAT] = "Qwen/Qwen3-VL-4B-Instruct"
    """VLM composer: model name or local path."""
    slot_prior: Annotated[str | None, _FLAT] = None
    """``best-memoryless``: the prior's JSON (``scripts/fit_slot_prior.py``); None: ``policies/priors/slot_prior.json``."""
    proposal_lag: Annotated[int, _FLAT] = 0
    """Deliver every change of the composer's proposal 0..N decisions late (drawn per change from the
    episode's composer stream; the robot holds still meanwhile), so *when* a proposal changes tells the
    memory nothing of the env's progress (policies/composers.py: LaggedComposer). 0: on time. The
    oracle condition is never lagged."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.history_blind_p <= 1.0:
            raise ConfigError(f"--history-blind-p must be in [0.0, 1.0], got {self.history_blind_p}")
        if isinstance(self.proposal_lag, bool) or not isinstance(self.proposal_lag, int) or self.proposal_lag < 0:
            raise ConfigError(f"--proposal-lag must be a whole number of decisions >= 0, got {self.proposal_lag!r}")


@dataclass(frozen=True)
class PolicyConfig:
    """The low-level policy that turns a subgoal into actions."""

    kind: Annotated[Literal["scripted", "openpi", "lerobot", "challenge"], _kind("policy")] = "scripted"
    """Low-level policy: scripted solver (CPU default), openpi websocket server, LeRobot in-process, or a
    RoboMME challenge submission (a challenge-interface server at --openpi-host/--openpi-port: only the
    observations new since its last call, the conditioning video on the first; policies/challenge_client.py)."""
    policy_noise: Annotated[ScriptedNoise, _FLAT] = ScriptedNoise()
    """Scripted policy's execution noise, drawn from the episode's policy stream: a failed first grasp
    attempt (too high or beside the object, then a recovery) on a fraction of picks, and a slip on a
    fraction of carries; the `paper` preset sets --policy-noise.p-fail-grasp 0.15
    --policy-noise.p-drop 0.03 so that policy seeds differ as they do for π0.5."""
    executor_profile: Annotated[str, _FLAT] = "clean"
    """Scripted policy's failure profile (policies/executor_profile.py): `clean` (exact), `pi05-like`
    (fitted on train so the oracle arm's per-task success tracks π0.5's published oracle-subgoal
    column; scripts/fit_executor_profile.py), or a path to a JSON profile of your own. Every failure
    is a real change of the motion (a missed grasp, a drop, a second or short press, a wrong turn, a
    stall), drawn from the episode's policy stream and listed in the row's executor_events."""
    lerobot_path: Annotated[str | None, _FLAT] = None
    """LeRobot policy: local directory of a PI05 checkpoint (LeRobot needs Python >= 3.12; see README)."""
    openpi_host: Annotated[str, _FLAT] = "localhost"
    """openpi policy server host."""
    openpi_port: Annotated[int, _FLAT] = 8000
    """openpi policy server port."""
    openpi_connect_timeout_s: Annotated[float, _FLAT] = 30.0
    """Seconds to wait for the openpi server to accept a connection before the episode errors."""
    openpi_recv_timeout_s: Annotated[float, _FLAT] = 60.0
    """Seconds to wait for one action chunk before the episode errors."""
    openpi_server: Annotated[Literal["auto", "openpi", "benchmark"], _FLAT] = "auto"
    """Kind of policy server: `benchmark` (RoboMME's MME-VLA server: gets {"reset": True} at each
    episode start and re-seeds its sampling; its metadata does not say so, so pass this for it),
    `openpi` (plain openpi: never gets the reset, which it would take for an observation), or `auto`
    (benchmark only if the server's metadata says accepts_reset: True, as policies.policy_server's does)."""

    def __post_init__(self) -> None:
        if not 0 < self.openpi_port < 65536:
            raise ConfigError(f"--openpi-port must be in 1..65535, got {self.openpi_port}")
        if self.openpi_server not in SERVER_KINDS:
            raise ConfigError(f"--openpi-server must be one of {', '.join(SERVER_KINDS)}, got {self.openpi_server!r}")
        for name in ("openpi_connect_timeout_s", "openpi_recv_timeout_s"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"--{_flag(name)} must be > 0, got {getattr(self, name)}")
        if self.executor_profile != "clean":
            from policies.executor_profile import load_profile

            try:
                load_profile(self.executor_profile)
            except ValueError as exc:
                raise ConfigError(f"--executor-profile: {exc}") from None
            if self.kind != "scripted":
                raise ConfigError(f"--executor-profile {self.executor_profile} perturbs the scripted executor's motions; "
                                  f"--policy {self.kind} executes its own actions (use --executor-profile clean)")


@dataclass(frozen=True)
class SpecifierConfig:
    """How the memory reads its specification C(goal) from the goal."""

    kind: Annotated[Literal["instruction", "llm"], _kind("specifier")] = "instruction"
    """Memory specification C(goal): the deterministic instruction parser (default), or an LLM voting
    over re-wrapped prompts (needs --specifier-endpoint; required by memory-single-vote)."""
    specifier_endpoint: Annotated[str | None, _FLAT] = None
    """LLM specifier: OpenAI-compatible base URL (e.g. http://localhost:8000/v1)."""
    specifier_model: Annotated[str, _FLAT] = "default"
    """LLM specifier: model name the endpoint serves."""


@dataclass(frozen=True)
class RenderConfig:
    """What is rendered, and what is recorded as video."""

    render_stride: Annotated[int, _FLAT] = 4
    """Render the front camera every k-th env step for the memory's tools (memory and recent-N
    conditions only; the others render only what their composer and policy need)."""
    render_lod: Annotated[Literal["simplified", "full"], _FLAT] = "simplified"
    """Render level of detail: `simplified` (decimated robot visual meshes, ~4x cheaper CPU frames,
    same physics) or `full` (the packaged meshes, for policies trained on the benchmark's images)."""
    video: Annotated[bool, _FLAT] = False
    """Record mp4s of episodes under <out>/videos/<condition>/s<seed>/ (see experiments.loop.results.video_path)."""
    max_videos: Annotated[int, _FLAT] = 10
    """At most this many videos per (task, condition, seed) on disk, and per (condition, seed) in W&B."""
    official_render_gate: Annotated[bool, _FLAT] = True
    """--backend robomme: render the cameras only at the steps a consumer reads (envs/official/render_gate.py;
    about 2x faster official episodes, the same states, texts, outcomes and frames: docs/official_envs.md).
    `--no-official-render-gate` renders every camera at every step, as the benchmark's wrappers do."""

    def __post_init__(self) -> None:
        _check_at_least(self, 1, "render_stride")
        _check_at_least(self, 0, "max_videos")


@dataclass(frozen=True)
class ExecutionConfig:
    """Where the rows go and how the episodes are spread over processes."""

    out: Annotated[Path, _FLAT] = Path("runs/default")
    """Run directory: config.json, episodes.jsonl (append-only, the source of truth), reports. Reusing it resumes."""
    executor: Annotated[Literal["local", "ray"], _FLAT] = "local"
    """Executor: local (in-process, or a process pool when workers > 1) or ray."""
    workers: Annotated[int, _FLAT] = 1
    """Parallel episodes (processes for local, CPUs requested for a local ray cluster)."""
    worker_max_units: Annotated[int, _FLAT] = 0
    """Local pool: replace a worker process after this many episodes (0: never); bounds simulator leaks."""
    ray_address: Annotated[str | None, _FLAT] = None
    """Ray cluster address (e.g. auto or ray://host:10001); None starts a local cluster."""
    retry_errors: Annotated[bool, _FLAT] = False
    """On resume, run again the units whose recorded row is an error (the newer row then counts)."""

    def __post_init__(self) -> None:
        _check_at_least(self, 1, "workers")
        _check_at_least(self, 0, "worker_max_units")


@dataclass(frozen=True)
class LoggingConfig:
    """Weights & Biases logging of the finished rows."""

    wandb: Annotated[Literal["offline", "online", "disabled"], _FLAT] = "offline"
    """Weights & Biases mode; offline runs live in <out>/wandb and can be uploaded with `wandb sync`."""
    wandb_project: Annotated[str, _FLAT] = "robomem"
    """W&B project."""
    wandb_entity: Annotated[str | None, _FLAT] = None
    """W&B entity (user or team); None uses the default."""
    wandb_group: Annotated[str | None, _FLAT] = None
    """W&B group; None uses the run directory's name."""


@dataclass(frozen=True)
class ExperimentConfig:
    """Run a grid of episodes (task x condition x seed x episode) and append one row per episode."""

    preset: str | None = None
    """Preset the other fields started from: quick or paper (flags given with it override it)."""
    scope: ScopeConfig = ScopeConfig()
    env: EnvConfig = EnvConfig()
    composer: ComposerConfig = ComposerConfig()
    policy: PolicyConfig = PolicyConfig()
    specifier: SpecifierConfig = SpecifierConfig()
    memory: MemoryFlags = MemoryFlags()
    """Ablation switches. Any switch set adds the condition it names (e.g. --memory.no-route adds memory-no-route)."""
    perception: PerceptionConfig = PerceptionConfig()
    """Memory tools' perception back-ends: colour blobs and histograms (default), or Grounding DINO /
    SAM 2 / DINOv2 from local checkpoint directories (e.g. --perception.identity dinov2 --perception.identity-path DIR)."""
    render: RenderConfig = RenderConfig()
    execution: ExecutionConfig = ExecutionConfig()
    logging: LoggingConfig = LoggingConfig()

    def __post_init__(self) -> None:
        if self.preset is not None:
            check_preset(self.preset)
        if self.env.max_steps is None:  # frozen: resolved once, so config.json names the budget used
            object.__setattr__(self, "env", dataclasses.replace(self.env, max_steps=SPLITS[self.scope.split].max_steps))
        try:
            Condition(memory=True, flags=self.memory)
        except ValueError as e:
            raise ConfigError(str(e)) from None
        if not self.condition_names:
            raise ConfigError("no conditions given (e.g. --conditions no-memory memory)")
        for name in self.condition_names:
            why = specifier_refusal(condition_from_name(name), self.specifier.kind, self.specifier.specifier_endpoint)
            if why:
                raise ConfigError(why)
        if any(condition_from_name(n).composer == "prior" for n in self.condition_names):
            from policies.slot_prior import DEFAULT_PATH, SlotPrior

            try:  # fail here, naming the file, rather than once per episode
                SlotPrior.load(self.composer.slot_prior or DEFAULT_PATH)
            except (OSError, ValueError) as e:
                raise ConfigError(f"best-memoryless: {e}") from None
        if self.env.backend == "robomme":
            _check_official(self)

    @classmethod
    def from_flat(cls, **values: Any) -> "ExperimentConfig":
        """The config with ``values`` given by their flat names (``workers=4``, ``policy="openpi"``,
        as on the command line and in the config.json of runs before the groups), or a whole group
        (``policy=PolicyConfig(...)``); unknown names raise a TypeError."""
        top: dict[str, Any] = {}
        grouped: dict[str, dict[str, Any]] = {}
        for name, value in values.items():
            if name in FLAT_FIELDS and not (name in GROUPS and isinstance(value, GROUPS[name])):
                group, field = FLAT_FIELDS[name]
                grouped.setdefault(group, {})[field] = value
            elif name in _TOP_FIELDS:
                top[name] = value
            else:
                raise TypeError(f"ExperimentConfig has no field {name!r}{_hint(name, list(FLAT_FIELDS) + list(_TOP_FIELDS))}")
        for group, fields in grouped.items():
            top[group] = dataclasses.replace(top.get(group, GROUPS[group]()), **fields)
        return cls(**top)

    # --- derived ----------------------------------------------------------------------------------
    @property
    def task_list(self) -> tuple[str, ...]:
        """The tasks, expanded and deduplicated, in the order given (suites in suite order)."""
        return expand_tasks(self.scope.tasks)

    @property
    def episode_list(self) -> tuple[int, ...]:
        """The episode indices, deduplicated, in the order given."""
        return parse_episodes(self.scope.episodes, self.scope.split)

    @property
    def condition_names(self) -> tuple[str, ...]:
        """``conditions`` plus those named by ``--memory.*`` and ``--recent-window``, deduplicated."""
        names = list(self.scope.conditions)
        if self.memory.active:
            names.append(name_of(Condition(memory=True, flags=self.memory)))
        if self.scope.recent_window is not None:
            names.append(name_of(Condition(recent_window=self.scope.recent_window)))
        return tuple(dict.fromkeys(names))

    def condition(self, name: str) -> Condition:
        return condition_from_name(name)

    def composer_for(self, condition: str | Condition) -> str:
        """The composer an episode of ``condition`` uses: ``oracle`` for the oracle condition, else ``composer``."""
        c = condition_from_name(condition) if isinstance(condition, str) else condition
        return c.composer if c.composer in ("oracle", "prior") else self.composer.kind

    @property
    def group(self) -> str:
        """Experiment name: ``wandb_group`` or the run directory's name."""
        return self.logging.wandb_group or Path(self.execution.out).resolve().name

    @property
    def n_units(self) -> int:
        return len(self.task_list) * len(self.condition_names) * len(self.scope.seeds) * len(self.episode_list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field, by group (paths as strings, tuples as lists): config.json's shape."""
        return _jsonable(dataclasses.asdict(self))

    def flat_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field by its flat name (the shape of config.json before the groups)."""
        return flatten_config(self.to_dict())

    def outcome_fields(self) -> dict[str, Any]:
        """The fields that change what an episode's outcome is (not just which episodes run), by flat name."""
        d = self.flat_dict()
        return {k: d[k] for k in OUTCOME_FIELDS}


GROUPS: dict[str, type] = {
    "scope": ScopeConfig,
    "env": EnvConfig,
    "composer": ComposerConfig,
    "policy": PolicyConfig,
    "specifier": SpecifierConfig,
    "render": RenderConfig,
    "execution": ExecutionConfig,
    "logging": LoggingConfig,
}
"""The groups whose fields go by flat names; ``memory`` and ``perception`` keep their prefixed flags."""

FLAT_FIELDS: dict[str, tuple[str, str]] = {
    (group if f.name == "kind" else f.name): (group, f.name) for group, cls in GROUPS.items() for f in dataclasses.fields(cls)
}
"""Flat name (flag and old config.json key) -> (group, field): ``policy`` -> ``("policy", "kind")``."""

_TOP_FIELDS = frozenset(f.name for f in dataclasses.fields(ExperimentConfig))


def flatten_config(d: dict[str, Any]) -> dict[str, Any]:
    """A config dict by flat names, from either shape: config.json by groups (``{"policy": {"kind":
    ...}}``, written since the groups) or flat (``{"policy": "scripted", "openpi_port": 8000}``, the
    committed runs before them). Keys it does not know are kept as they are."""
    flat: dict[str, Any] = {}
    for key, value in d.items():
        if key in GROUPS and isinstance(value, dict):
            for field, v in value.items():
                flat[key if field == "kind" else field] = v
        else:
            flat[key] = value
    return flat


_NESTED_TYPES: dict[str, type] = {"policy_noise": ScriptedNoise, "memory": MemoryFlags, "perception": PerceptionConfig}


def config_from_dict(d: dict[str, Any]) -> ExperimentConfig:
    """The config a config.json's ``"config"`` names, in either shape (see :func:`flatten_config`);
    fields a newer config has and the file lacks take their defaults, keys no config has are dropped."""
    known = set(FLAT_FIELDS) | _TOP_FIELDS
    values: dict[str, Any] = {}
    for key, value in flatten_config(d).items():
        if key not in known:
            continue
        if key in _NESTED_TYPES and isinstance(value, dict):
            value = _NESTED_TYPES[key](**{k: tuple(v) if isinstance(v, list) else v for k, v in value.items()})
        elif isinstance(value, list):
            value = tuple(value)
        elif key == "out":
            value = Path(value)
        values[key] = value
    return ExperimentConfig.from_flat(**values)


OUTCOME_FIELDS: tuple[str, ...] = (
    "backend",
    "composer",
    "history_blind_p",
    "proposal_lag",
    "vlm_endpoint",
    "vlm_model",
    "policy",
    "policy_noise",
    "executor_profile",
    "openpi_host",
    "openpi_port",
    "openpi_server",
    "horizon",
    "max_steps",
    "render_stride",
    "render_lod",
    "perception",
    "specifier",
    "specifier_endpoint",
    "specifier_model",
    "goal_style",
)
"""Fields that must match when a run directory is resumed (the rest only select which units run)."""


def _check_official(cfg: "ExperimentConfig") -> None:
    """What ``--backend robomme`` cannot run (yet), and the package it needs, as a ConfigError."""
    if cfg.policy.kind == "lerobot":
        raise ConfigError("--backend robomme with --policy lerobot is not wired yet: serve the checkpoint behind an "
                          "openpi-protocol server and use --policy openpi (or --policy scripted for the benchmark's "
                          "multi_choice planner)")
    if cfg.scope.split not in ("train", "val", "test"):
        raise ConfigError(f"the official benchmark has no split {cfg.scope.split!r} (known: train, val, test)")
    ladder = [n for n in cfg.condition_names if condition_from_name(n).flags.uses_true_state]
    if ladder:
        raise ConfigError(f"--backend robomme cannot run {', '.join(ladder)}: the oracle ladder answers the memory's "
                          "reads from our tasks' ground truth (truth() and probe questions), which the official "
                          "tasks do not expose; run it on our envs (--backend robomem)")
    from envs.official.install import INSTALL_HINT, robomme_available

    ok, why = robomme_available()
    if not ok:
        raise ConfigError(f"--backend robomme: {INSTALL_HINT}\n(import failed: {why})")


# --- presets -----------------------------------------------------------------------------------
PAPER_CONDITIONS: tuple[str, ...] = tuple(c for c in ALL_CONDITIONS if c != "memory-single-vote")
"""Every named condition but ``memory-single-vote``, which needs the LLM specifier (add it with
``--specifier llm --specifier-endpoint URL --conditions ... memory-single-vote``)."""


PRESETS: dict[str, dict[str, Any]] = {  # by flat name (ExperimentConfig.from_flat)
    "quick": dict(
        tasks=("all",),
        episodes=("0",),
        conditions=("oracle", "no-memory", "memory"),
        seeds=(7,),
        out=Path("runs/quick"),
    ),
    "paper": dict(
        tasks=("all",),
        episodes=("0:50",),
        seeds=(7, 11, 23),
        conditions=PAPER_CONDITIONS,
        policy_noise=PAPER_NOISE,
        out=Path("runs/paper"),
    ),
}


def check_preset(name: str) -> str:
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}{_hint(name, list(PRESETS))} (known: {', '.join(PRESETS)})")
    return name


def preset_config(name: str, **overrides: Any) -> ExperimentConfig:
    """The config of preset ``name`` with ``overrides`` (flat names, see ``from_flat``) applied."""
    check_preset(name)
    return ExperimentConfig.from_flat(**{**PRESETS[name], "preset": name, **overrides})


def parse_config(argv: list[str] | None = None, *, prog: str = "python -m experiments.run") -> ExperimentConfig:
    """Parse command-line arguments (``sys.argv[1:]`` when None) into a config.

    ``--preset NAME`` is looked at first so that the preset's values become the defaults the other
    flags override. Raises :class:`ConfigError` for a bad value; tyro exits with status 2 for a
    malformed command line and 0 after ``--help``.
    """
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    preset = _peek_option(args, "--preset")
    # the split is looked at too: the default step budget is the split's (1800 on ood)
    split = _peek_option(args, "--split")
    extra = {"split": split} if split not in (None, "None") else {}
    default = preset_config(preset, **extra) if preset not in (None, "None") else ExperimentConfig.from_flat(**extra)
    return tyro.cli(
        ExperimentConfig,
        args=args,
        default=default,
        prog=prog,
        description=(ExperimentConfig.__doc__ or "") + "\n\nPresets: quick, paper (see experiments/loop/config.py).",
    )


def _peek_option(args: list[str], flag: str) -> str | None:
    value = None
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(flag + "="):
            value = a.split("=", 1)[1]
    return value


__all__ = [
    "ComposerConfig",
    "ConfigError",
    "EnvConfig",
    "ExecutionConfig",
    "ExperimentConfig",
    "FLAT_FIELDS",
    "GROUPS",
    "LoggingConfig",
    "OUTCOME_FIELDS",
    "PolicyConfig",
    "RenderConfig",
    "ScopeConfig",
    "SpecifierConfig",
    "config_from_dict",
    "flatten_config",
    "PRESETS",
    "check_preset",
    "expand_tasks",
    "parse_config",
    "parse_episodes",
    "preset_config",
]
