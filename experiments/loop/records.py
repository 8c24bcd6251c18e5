"""Typed records that cross process boundaries: one work unit in, one episode row out.

The results file (``<out>/episodes.jsonl``) holds one :class:`EpisodeResult` per line and is the
source of truth of a run; everything else (tables, W&B) is derived from it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["success", "fail", "timeout", "error"]


@dataclass(frozen=True)
class WorkUnit:
    """The smallest piece of work: one episode of one task under one condition and run seed."""

    task: str
    split: str
    episode: int
    condition: str
    seed: int

    @property
    def key(self) -> tuple[str, str, int, str, int]:
        return (self.task, self.split, self.episode, self.condition, self.seed)


@dataclass
class EpisodeResult:
    """One finished episode. ``status`` keeps a crash (``error``) apart from a failure."""

    task: str
    split: str
    episode: int
    env_seed: int
    seed: int
    condition: str
    difficulty: str
    status: Status
    success: bool
    steps: int
    error: str | None = None
    wall_s: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    subgoals: list[dict[str, Any]] = field(default_factory=list)
    n_subgoals: int = 0
    memory: dict[str, Any] = field(default_factory=dict)
    streams: dict[str, int] = field(default_factory=dict)
    """The episode's random streams (``experiments/loop/streams.py``): ``{"composer": ..., "policy": ...}``."""
    retry_offset: int = 0
    """Offset of ``env_seed`` from the episode's base seed (the manifest's, or one ``reset`` moved to)."""
    policy_noise: list[dict[str, Any]] = field(default_factory=list)
    """The scripted policy's injected failures in this episode (which pick, which kind)."""
    code_commit: str | None = None
    """The git commit the episode ran at, and whether the checkout had uncommitted changes."""
    code_dirty: bool | None = None
    history_audit: dict[str, int] = field(default_factory=dict)
    """Every history-dependent decision scored (``experiments.loop.episode.HistoryAudit``): right /
    wrong / abstained / silently agreed with a wrong proposal."""
    goal_style: str = "template"
    """``template`` or ``reworded`` (``--goal-style``)."""
    goal: str = ""
    """The goal text every composer, the policy and the memory were given in this episode."""
    backend: str = "robomem"
    """The envs the episode ran on: ``robomem`` (ours) or ``robomme`` (the benchmark's own, where
    ``env_seed`` and ``difficulty`` are the benchmark's metadata record, not our seed formula). A row
    written before this field existed reads as ``robomem``; the report takes such a run's backend
    from its ``config.json`` (:func:`experiments.loop.results.read_rows`)."""
    executor_profile: str = "clean"
    """``--executor-profile``: the scripted executor's failure profile (``clean``: none)."""
    executor_events: list[dict[str, Any]] = field(default_factory=list)
    """Each failure the profile made the executor commit: the subgoal, option, skill, kind and its
    drawn parameters (``policies/failure_model.py``)."""
    pick_retries: list[dict[str, Any]] = field(default_factory=list)
    """Each time the scripted executor tried a pick again because its grip had closed on nothing while
    the subgoal stood (the subgoal and the attempt's number; ``policies/scripted.py``). Not a failure:
    what a closed-loop policy does with an empty hand."""
    proposals_held: list[dict[str, Any]] = field(default_factory=list)
    """``--proposal-lag``: each change of the composer's proposal that was delivered late (its step,
    the proposal, how many decisions it waited); empty when proposals were on time."""

    @property
    def key(self) -> tuple[str, str, int, str, int]:
        return (self.task, self.split, self.episode, self.condition, self.seed)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> "EpisodeResult":
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in row.items() if k in names})
