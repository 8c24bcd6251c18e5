"""The experiment configuration: one frozen dataclass, parsed from the command line by tyro.

Every field has a docstring, which becomes its ``--help`` text. The config is validated in
``__post_init__`` (nothing is rewritten there: tyro may build it twice), and everything derived from
it (the expanded task list, the episode indices, the conditions) is a property.

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
from typing import Any, Literal

from envs.episodes import ALL_TASKS, SPLITS, SUITES, check_task
from experiments.conditions import (
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


@dataclass(frozen=True)
class ExperimentConfig:
    """Run a grid of episodes (task x condition x seed x episode) and append one row per episode."""

    # --- scope --------------------------------------------------------------------------------
    tasks: tuple[str, ...] = ("all",)
    """Task names (e.g. BinFill), suite names (counting, permanence, reference, imitation) or `all`."""
    split: str = "test"
    """Episode split: train, test, val or ood (the tasks past their training ranges, envs/ood.py)."""
    episodes: tuple[str, ...] = ("0",)
    """Episode indices: a range `START:STOP` (e.g. 0:20, stop excluded) and/or integers (e.g. 0 3 7)."""
    seeds: tuple[int, ...] = (7,)
    """Run seeds (composer and policy sampling); the scene is fixed by the episode alone."""
    conditions: tuple[str, ...] = ("oracle", "no-memory", "memory")
    """Condition names: oracle, no-memory, memory, recent<N>, memory-<ablation> (see experiments.conditions)."""

    # --- what runs inside an episode ------------------------------------------------------------
    backend: Literal["robomem", "robomme"] = "robomem"
    """Envs: robomem (this project's re-implementation, the default) or robomme (the benchmark's own
    envs, when the `robomme` package is importable; its multi_choice planner executes the subgoals)."""
    composer: Literal["oracle", "history-blind", "vlm"] = "history-blind"
    """Subgoal composer of every condition except `oracle` (which always uses the env's ground truth)."""
    history_blind_p: float = 1.0
    """History-blind composer: probability of replacing each history-dependent argument by a visible alternative."""
    vlm_endpoint: str | None = None
    """VLM composer: OpenAI-compatible base URL (e.g. http://localhost:8000/v1); None loads the model in-process."""
    vlm_model: str = "Qwen/Qwen3-VL-4B-Instruct"
    """VLM composer: model name or local path."""
    policy: Literal["scripted", "openpi", "lerobot"] = "scripted"
    """Low-level policy: scripted solver (CPU default), openpi websocket server, or LeRobot in-process."""
    policy_noise: ScriptedNoise = ScriptedNoise()
    """Scripted policy's execution noise, drawn from the episode's policy stream: a failed first grasp
    attempt (too high or beside the object, then a recovery) on a fraction of picks, and a slip on a
    fraction of carries; the `paper` preset sets --policy-noise.p-fail-grasp 0.15
    --policy-noise.p-drop 0.03 so that policy seeds differ as they do for π0.5."""
    lerobot_path: str | None = None
    """LeRobot policy: local directory of a PI05 checkpoint (LeRobot needs Python >= 3.12; see README)."""
    openpi_host: str = "localhost"
    """openpi policy server host."""
    openpi_port: int = 8000
    """openpi policy server port."""
    openpi_connect_timeout_s: float = 30.0
    """Seconds to wait for the openpi server to accept a connection before the episode errors."""
    openpi_recv_timeout_s: float = 60.0
    """Seconds to wait for one action chunk before the episode errors."""
    openpi_server: Literal["auto", "openpi", "benchmark"] = "auto"
    """Kind of policy server: `benchmark` (RoboMME's MME-VLA server: gets {"reset": True} at each
    episode start and re-seeds its sampling; its metadata does not say so, so pass this for it),
    `openpi` (plain openpi: never gets the reset, which it would take for an observation), or `auto`
    (benchmark only if the server's metadata says accepts_reset: True, as policies.policy_server's does)."""
    specifier: Literal["instruction", "llm"] = "instruction"
    """Memory specification C(goal): the deterministic instruction parser (default), or an LLM voting
    over re-wrapped prompts (needs --specifier-endpoint; required by memory-single-vote)."""
    specifier_endpoint: str | None = None
    """LLM specifier: OpenAI-compatible base URL (e.g. http://localhost:8000/v1)."""
    specifier_model: str = "default"
    """LLM specifier: model name the endpoint serves."""
    goal_style: Literal["template", "reworded"] = "template"
    """Goal wording every composer, the policy and the memory are given: the benchmark's template, or
    one of the project's hand-written rewordings (envs/tasks/goal_rewordings.json) drawn per episode
    from its goal stream; recorded in each row."""
    memory: MemoryFlags = MemoryFlags()
    """Ablation switches. Any switch set adds the condition it names (e.g. --memory.no-route adds memory-no-route)."""
    perception: PerceptionConfig = PerceptionConfig()
    """Memory tools' perception back-ends: colour blobs and histograms (default), or Grounding DINO /
    SAM 2 / DINOv2 from local checkpoint directories (e.g. --perception.identity dinov2 --perception.identity-path DIR)."""
    recent_window: int | None = None
    """When set, also run the recent-frame baseline with this many frames (adds condition recent<N>)."""
    horizon: int = 16
    """Environment steps per subgoal query (the policy's action chunk)."""
    max_steps: int | None = None
    """Step budget per episode, counted after the conditioning video (default: the split's, 1300;
    1800 on ood)."""
    render_stride: int = 4
    """Render the front camera every k-th env step for the memory's tools (memory and recent-N
    conditions only; the others render only what their composer and policy need)."""
    render_lod: Literal["simplified", "full"] = "simplified"
    """Render level of detail: `simplified` (decimated robot visual meshes, ~4x cheaper CPU frames,
    same physics) or `full` (the packaged meshes, for policies trained on the benchmark's images)."""

    # --- where and how it runs ------------------------------------------------------------------
    out: Path = Path("runs/default")
    """Run directory: config.json, episodes.jsonl (append-only, the source of truth), reports. Reusing it resumes."""
    executor: Literal["local", "ray"] = "local"
    """Executor: local (in-process, or a process pool when workers > 1) or ray."""
    workers: int = 1
    """Parallel episodes (processes for local, CPUs requested for a local ray cluster)."""
    worker_max_units: int = 0
    """Local pool: replace a worker process after this many episodes (0: never); bounds simulator leaks."""
    ray_address: str | None = None
    """Ray cluster address (e.g. auto or ray://host:10001); None starts a local cluster."""
    retry_errors: bool = False
    """On resume, run again the units whose recorded row is an error (the newer row then counts)."""
    wandb: Literal["offline", "online", "disabled"] = "offline"
    """Weights & Biases mode; offline runs live in <out>/wandb and can be uploaded with `wandb sync`."""
    wandb_project: str = "robomem"
    """W&B project."""
    wandb_entity: str | None = None
    """W&B entity (user or team); None uses the default."""
    wandb_group: str | None = None
    """W&B group; None uses the run directory's name."""
    video: bool = False
    """Record mp4s of episodes under <out>/videos/<condition>/s<seed>/ (see experiments.results.video_path)."""
    max_videos: int = 10
    """At most this many videos per (task, condition, seed) on disk, and per (condition, seed) in W&B."""
    preset: str | None = None
    """Preset the other fields started from: quick or paper (flags given with it override it)."""

    def __post_init__(self) -> None:
        if self.preset is not None:
            check_preset(self.preset)
        if self.split not in SPLITS:
            raise ConfigError(f"unknown split {self.split!r}{_hint(self.split, list(SPLITS))} (known: {', '.join(SPLITS)})")
        if not self.tasks:
            raise ConfigError("no tasks given (use task names, suite names or `all`)")
        expand_tasks(self.tasks)
        parse_episodes(self.episodes, self.split)
        if self.max_steps is None:  # frozen: resolved once, so config.json names the budget used
            object.__setattr__(self, "max_steps", SPLITS[self.split].max_steps)
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
            Condition(memory=True, flags=self.memory)
            if self.recent_window is not None:
                Condition(recent_window=self.recent_window)
        except ValueError as e:
            raise ConfigError(str(e)) from None
        if not self.condition_names:
            raise ConfigError("no conditions given (e.g. --conditions no-memory memory)")
        for name in self.condition_names:
            why = specifier_refusal(condition_from_name(name), self.specifier, self.specifier_endpoint)
            if why:
                raise ConfigError(why)
        if self.backend == "robomme":
            _check_official(self)
        _check_range("history-blind-p", self.history_blind_p, 0.0, 1.0)
        for name in ("horizon", "max_steps", "render_stride", "workers"):
            if getattr(self, name) < 1:
                raise ConfigError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        for name in ("max_videos", "worker_max_units"):
            if getattr(self, name) < 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(self, name)}")
        if not 0 < self.openpi_port < 65536:
            raise ConfigError(f"--openpi-port must be in 1..65535, got {self.openpi_port}")
        if self.openpi_server not in SERVER_KINDS:
            raise ConfigError(f"--openpi-server must be one of {', '.join(SERVER_KINDS)}, got {self.openpi_server!r}")
        for name in ("openpi_connect_timeout_s", "openpi_recv_timeout_s"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be > 0, got {getattr(self, name)}")

    # --- derived ----------------------------------------------------------------------------------
    @property
    def task_list(self) -> tuple[str, ...]:
        """The tasks, expanded and deduplicated, in the order given (suites in suite order)."""
        return expand_tasks(self.tasks)

    @property
    def episode_list(self) -> tuple[int, ...]:
        """The episode indices, deduplicated, in the order given."""
        return parse_episodes(self.episodes, self.split)

    @property
    def condition_names(self) -> tuple[str, ...]:
        """``conditions`` plus those named by ``--memory.*`` and ``--recent-window``, deduplicated."""
        names = list(self.conditions)
        if self.memory.active:
            names.append(name_of(Condition(memory=True, flags=self.memory)))
        if self.recent_window is not None:
            names.append(name_of(Condition(recent_window=self.recent_window)))
        return tuple(dict.fromkeys(names))

    def condition(self, name: str) -> Condition:
        return condition_from_name(name)

    def composer_for(self, condition: str | Condition) -> str:
        """The composer an episode of ``condition`` uses: ``oracle`` for the oracle condition, else ``composer``."""
        c = condition_from_name(condition) if isinstance(condition, str) else condition
        return "oracle" if c.composer == "oracle" else self.composer

    @property
    def group(self) -> str:
        """Experiment name: ``wandb_group`` or the run directory's name."""
        return self.wandb_group or Path(self.out).resolve().name

    @property
    def n_units(self) -> int:
        return len(self.task_list) * len(self.condition_names) * len(self.seeds) * len(self.episode_list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field (paths as strings, tuples as lists)."""
        return _jsonable(dataclasses.asdict(self))

    def outcome_fields(self) -> dict[str, Any]:
        """The fields that change what an episode's outcome is (not just which episodes run)."""
        d = self.to_dict()
        return {k: d[k] for k in OUTCOME_FIELDS}


OUTCOME_FIELDS: tuple[str, ...] = (
    "backend",
    "composer",
    "history_blind_p",
    "vlm_endpoint",
    "vlm_model",
    "policy",
    "policy_noise",
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
    if cfg.policy != "scripted":
        raise ConfigError(f"--backend robomme runs the benchmark's own multi_choice planner; --policy {cfg.policy} "
                          "is not wired to the official envs yet (use --policy scripted)")
    if cfg.video:
        raise ConfigError("--video is not supported with --backend robomme yet")
    if cfg.goal_style != "template":
        raise ConfigError(f"--goal-style {cfg.goal_style} rewords our envs' goals; --backend robomme uses the "
                          "benchmark's own goal texts (use --goal-style template)")
    if cfg.split not in ("train", "val", "test"):
        raise ConfigError(f"the official benchmark has no split {cfg.split!r} (known: train, val, test)")
    from envs.official.install import INSTALL_HINT, robomme_available

    ok, why = robomme_available()
    if not ok:
        raise ConfigError(f"--backend robomme: {INSTALL_HINT}\n(import failed: {why})")


# --- presets -----------------------------------------------------------------------------------
PAPER_CONDITIONS: tuple[str, ...] = tuple(c for c in ALL_CONDITIONS if c != "memory-single-vote")
"""Every named condition but ``memory-single-vote``, which needs the LLM specifier (add it with
``--specifier llm --specifier-endpoint URL --conditions ... memory-single-vote``)."""


PRESETS: dict[str, dict[str, Any]] = {
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
    """The config of preset ``name`` with ``overrides`` applied."""
    check_preset(name)
    return ExperimentConfig(**{**PRESETS[name], "preset": name, **overrides})


def parse_config(argv: list[str] | None = None, *, prog: str = "python -m experiments.run") -> ExperimentConfig:
    """Parse command-line arguments (``sys.argv[1:]`` when None) into a config.

    ``--preset NAME`` is looked at first so that the preset's values become the defaults the other
    flags override. Raises :class:`ConfigError` for a bad value; tyro exits with status 2 for a
    malformed command line and 0 after ``--help``.
    """
    import sys

    import tyro

    args = list(sys.argv[1:] if argv is None else argv)
    preset = _peek_option(args, "--preset")
    # the split is looked at too: the default step budget is the split's (1800 on ood)
    split = _peek_option(args, "--split")
    extra = {"split": split} if split not in (None, "None") else {}
    default = preset_config(preset, **extra) if preset not in (None, "None") else ExperimentConfig(**extra)
    return tyro.cli(
        ExperimentConfig,
        args=args,
        default=default,
        prog=prog,
        description=(ExperimentConfig.__doc__ or "") + "\n\nPresets: quick, paper (see experiments/config.py).",
    )


def _peek_option(args: list[str], flag: str) -> str | None:
    value = None
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(flag + "="):
            value = a.split("=", 1)[1]
    return value


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


def _check_range(flag: str, value: float, lo: float, hi: float) -> None:
    if not lo <= value <= hi:
        raise ConfigError(f"--{flag} must be in [{lo}, {hi}], got {value}")


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


__all__ = [
    "ConfigError",
    "ExperimentConfig",
    "OUTCOME_FIELDS",
    "PRESETS",
    "check_preset",
    "expand_tasks",
    "parse_config",
    "parse_episodes",
    "preset_config",
]
