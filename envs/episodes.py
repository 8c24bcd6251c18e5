"""Which episode is which: the benchmark's split bases, task codes, seed formula and difficulty.

An episode is always named explicitly by an :class:`EpisodeSpec` and passed to
``env.reset(seed=spec.env_seed, options={"episode": spec})``; nothing is derived from how many
times an env has been reset, so paired comparisons across conditions see the same scene.

The seed formula is ``split_base + task_code * M + 100 * episode + r``. ``r`` is a retry offset:
the benchmark's generator re-draws a scene its own oracle cannot solve. Ours does the same with
our scripted solvers; the offsets live in ``envs/manifests/<split>.json`` and
``scripts/build_manifest.py`` regenerates them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from envs.cards import all_cards, suites

TASK_CODES: dict[str, int] = {c.name: c.code for c in all_cards()}
"""Task -> the benchmark's task code in the seed formula (read from the task cards)."""

SUITES: dict[str, tuple[str, ...]] = suites()
ALL_TASKS: tuple[str, ...] = tuple(c.name for c in all_cards())


@dataclass(frozen=True)
class SplitSpec:
    base: int
    multiplier: int
    size: int
    max_retry: int
    max_steps: int = 1300
    """The step budget of an episode of this split, counted after the conditioning video."""
    solvable_only: bool = False
    """Every episode must be one the oracle solves: an episode the manifest lists as unsolved is an
    error at reset (naming why), not an oracle failure kept in the set."""
    reporting: int = 0
    """Episodes ``0 .. reporting-1`` are for reporting only; ``reporting .. size-1`` are the split's
    development range, where readers are tuned (``train`` and ``val``: none reported; ``test``: all)."""


SPLITS: dict[str, SplitSpec] = {
    "train": SplitSpec(base=0, multiplier=1000, size=100, max_retry=7),
    "test": SplitSpec(base=500_000, multiplier=10_000, size=50, max_retry=4, reporting=50),
    "val": SplitSpec(base=1_000_000, multiplier=10_000, size=50, max_retry=4),
    # the tasks pushed past their training ranges (envs/ood.py: the tier table); the benchmark's
    # own OOD set has 50 episodes per task and an 1800-step budget: those are 0-49, kept for
    # reporting like ``test``; 50-99 (same tiers, same seed formula, disjoint seeds) are for development
    "ood": SplitSpec(base=2_000_000, multiplier=10_000, size=100, max_retry=7, max_steps=1800, solvable_only=True,
                     reporting=50),
}

DIFFICULTY_BY_INDEX_MOD_4 = ("easy", "easy", "medium", "hard")
MANIFEST_DIR = Path(__file__).parent / "manifests"


@dataclass(frozen=True)
class EpisodeSpec:
    """One fixed benchmark episode: the scene is a pure function of these fields."""

    task: str
    split: str
    episode_idx: int
    env_seed: int
    difficulty: str

    def to_dict(self) -> dict:
        return asdict(self)


def check_task(task: str) -> str:
    """Return ``task`` if it is one of the 16 tasks, else raise naming it (with a close match)."""
    if task in TASK_CODES:
        return task
    import difflib

    close = difflib.get_close_matches(task, ALL_TASKS, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"unknown task {task!r}{hint} (known: {', '.join(ALL_TASKS)})")


def check_split(split: str) -> SplitSpec:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r} (known: {', '.join(SPLITS)})")
    return SPLITS[split]


def development_range(split: str) -> range:
    """The episodes of ``split`` one may develop and debug on: all of ``train`` and ``val``, none of
    ``test``, ``ood`` 50-99 (its 0-49 are the reported set)."""
    sp = check_split(split)
    return range(sp.reporting, sp.size)


def base_seed(task: str, split: str, episode_idx: int) -> int:
    """The seed before any retry offset."""
    sp = check_split(split)
    check_task(task)
    if not isinstance(episode_idx, int) or not 0 <= episode_idx < sp.size:
        raise ValueError(
            f"episode index {episode_idx!r} is out of range for split {split!r} (0..{sp.size - 1})"
        )
    return sp.base + TASK_CODES[task] * sp.multiplier + 100 * episode_idx


def difficulty_for(episode_idx: int, split: str = "test", task: str | None = None) -> str:
    """``easy/easy/medium/hard`` by index mod 4; on ``ood`` the episode's tier, ``ood1``, ``ood2``, ..."""
    if split == "ood":
        from envs.ood import difficulty_name, tier_of

        if task is None:
            raise ValueError("an ood episode's difficulty depends on its task (its tier table)")
        return difficulty_name(tier_of(task, episode_idx))
    return DIFFICULTY_BY_INDEX_MOD_4[episode_idx % 4]


@lru_cache(maxsize=None)
def _manifest(split: str) -> dict:
    path = MANIFEST_DIR / f"{split}.json"
    if not path.exists():
        return {}
    return json.loads(path.read_text())


def retry_offset(task: str, split: str, episode_idx: int) -> int:
    """Offset stored by ``scripts/build_manifest.py``; 0 when the manifest has no entry."""
    return int(_manifest(split).get(task, {}).get(str(episode_idx), 0))


def unsolved_reason(task: str, split: str, episode_idx: int) -> str | None:
    """Why no retry offset of this episode let the oracle solve it (``scripts/build_manifest.py``), or None."""
    return _manifest(split).get("unsolved", {}).get(task, {}).get(str(episode_idx))


def retry_seeds(spec: EpisodeSpec) -> list[int]:
    """The seeds ``reset`` may try for ``spec``, in order: its own seed, then the next offsets up to
    the split's maximum retry (the benchmark's generator re-draws an unusable scene the same way)."""
    first = base_seed(spec.task, spec.split, spec.episode_idx)
    last = first + check_split(spec.split).max_retry
    return list(range(max(spec.env_seed, first), last + 1)) or [spec.env_seed]


def episode_spec(task: str, episode_idx: int, split: str = "test") -> EpisodeSpec:
    """The manifest's spec for ``(task, split, episode_idx)``."""
    seed = base_seed(task, split, episode_idx) + retry_offset(task, split, episode_idx)
    return EpisodeSpec(task, split, episode_idx, seed, difficulty_for(episode_idx, split, task))
