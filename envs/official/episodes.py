"""Episode identity on the official backend: seed and difficulty from the benchmark's metadata files.

The official envs are seeded from ``robomme/env_metadata/<split>/record_dataset_<Task>_metadata.json``
(``{"records": [{"task", "episode", "seed", "difficulty"}, ...]}``), not from our seed formula, so
an episode index names the benchmark's own scene. The spec keeps our :class:`EpisodeSpec` shape so
rows, resume and report treat both backends alike.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from envs.episodes import EpisodeSpec, check_task


def metadata_dir() -> Path:
    """``env_metadata`` inside the installed ``robomme`` package (ImportError with the fix if absent)."""
    from envs.official.install import require_robomme

    return Path(require_robomme().__file__).resolve().parent / "env_metadata"


@lru_cache(maxsize=None)
def _records(path: str) -> dict[int, dict]:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"official episode metadata {p} does not exist")
    payload = json.loads(p.read_text(encoding="utf-8"))
    default_task = str(payload.get("env_id") or "")
    out: dict[int, dict] = {}
    for rec in payload.get("records", []):
        out[int(rec["episode"])] = {**rec, "task": str(rec.get("task") or default_task)}
    return out


def official_episode_spec(task: str, episode_idx: int, split: str = "test", root: Path | None = None) -> EpisodeSpec:
    """The official episode ``episode_idx`` of ``task`` in ``split``; errors name the bad value."""
    check_task(task)
    root = metadata_dir() if root is None else Path(root)
    path = root / split / f"record_dataset_{task}_metadata.json"
    if not (root / split).is_dir():
        known = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        raise ValueError(f"the official benchmark has no split {split!r} (known: {', '.join(known)})")
    records = _records(str(path))
    if episode_idx not in records:
        raise ValueError(f"official {task} {split} has no episode {episode_idx!r} (0..{max(records)})")
    rec = records[episode_idx]
    if rec["task"] != task:
        raise ValueError(f"{path}: episode {episode_idx} is for task {rec['task']!r}, not {task!r}")
    return EpisodeSpec(task=task, split=split, episode_idx=int(episode_idx), env_seed=int(rec["seed"]),
                       difficulty=str(rec.get("difficulty") or "easy"))
