"""The run directory on disk: ``episodes.jsonl`` (append-only, the source of truth) and ``config.json``.

Every finished episode is one JSON line, written whole, flushed and fsynced before the next one
starts, so a crash or ``kill -9`` loses at most the episode in flight. The reader skips a line it
cannot parse (typically a half-written last line) with a warning that names the line number, and
never raises on content. A resumed run asks :func:`finished_keys` which units are done and skips
them, so no row is ever written twice.

>>> w = ResultsWriter(out_dir)          # doctest: +SKIP
>>> w.write(result)                     # doctest: +SKIP
>>> rows = read_results(out_dir)        # doctest: +SKIP
"""

from __future__ import annotations

import errno
import gzip
import json
import math
import os
import platform
import subprocess
import sys
import time
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from experiments.loop.host import floating_point_host
from experiments.loop.records import EpisodeResult

RESULTS_FILE = "episodes.jsonl"
CONFIG_FILE = "config.json"
REQUIRED_KEYS = ("task", "split", "episode", "seed", "condition", "status", "success")
PACKAGES = ("numpy", "torch", "mani_skill", "sapien", "gymnasium", "mplib", "wandb", "tyro", "ray", "scipy", "openpi_client")

Key = tuple[str, str, int, str, int]


class ResultsWarning(UserWarning):
    """A row of a results file was skipped or superseded."""


class ResultsWriteError(OSError):
    """Writing a row failed (disk full, permissions...); the rows written before it are intact."""


def results_path(out: str | os.PathLike) -> Path:
    """``<out>/episodes.jsonl`` (or, for published results, ``<out>/episodes.jsonl.gz`` when only that
    exists); a path that already names a ``.jsonl`` or ``.jsonl.gz`` file is returned as is."""
    p = Path(out)
    if p.name.endswith((".jsonl", ".jsonl.gz")):
        return p
    plain = p / RESULTS_FILE
    packed = p / (RESULTS_FILE + ".gz")
    return packed if not plain.exists() and packed.exists() else plain


# --- writing ---------------------------------------------------------------------------------------
class ResultsWriter:
    """Append rows to ``<out>/episodes.jsonl``, one line each, flushed and fsynced.

    A line left unterminated by an earlier crash is closed with a newline before the first new
    row, so the new row stays readable (the broken line is then skipped by the reader). A failed
    write is rolled back to the previous end of the file and raised as :class:`ResultsWriteError`.
    """

    def __init__(self, out: str | os.PathLike):
        self.path = results_path(out)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "ab")
        self.n_written = 0
        self._rows_before = _count_lines(self.path)
        if self._f.tell() > 0 and not _ends_with_newline(self.path):
            self._append(b"\n")

    def write(self, result: EpisodeResult | dict[str, Any]) -> None:
        row = result.to_dict() if isinstance(result, EpisodeResult) else dict(result)
        line = (json.dumps(row, default=_json_default, ensure_ascii=False) + "\n").encode("utf-8")
        self._append(line)
        self.n_written += 1

    def _append(self, data: bytes) -> None:
        if self._f.closed:
            raise ResultsWriteError(errno.EBADF, f"results file {self.path} is closed")
        start = self._f.tell()
        try:
            self._f.write(data)
            self._f.flush()
            os.fsync(self._f.fileno())
        except OSError as e:
            try:  # drop whatever part of the line made it, so the file stays line-aligned
                self._f.truncate(start)
                self._f.seek(start)
            except OSError:
                pass
            reason = "the disk is full" if e.errno == errno.ENOSPC else (e.strerror or str(e))
            raise ResultsWriteError(
                e.errno or errno.EIO,
                f"could not append to {self.path}: {reason}. The "
                f"{self._rows_before + self.n_written} rows already written are intact; free space "
                f"and rerun the same command to resume",
            ) from e

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _json_default(x: Any) -> Any:
    # numpy scalars and arrays, paths and sets can come back from a unit function.
    if hasattr(x, "item") and callable(x.item) and getattr(x, "ndim", 0) == 0:
        return x.item()
    if hasattr(x, "tolist"):
        return x.tolist()
    if isinstance(x, (set, frozenset)):
        return sorted(x, key=str)
    if isinstance(x, os.PathLike):
        return os.fspath(x)
    return repr(x)


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def _count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0


# --- reading ---------------------------------------------------------------------------------------
def iter_rows(out: str | os.PathLike, *, warn: bool = True) -> Iterator[dict[str, Any]]:
    """Yield every readable row as a dict (extra keys kept), in file order; skip the rest with a warning."""
    path = results_path(out)
    if not path.exists():
        return
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
                if not isinstance(row, dict):
                    raise ValueError(f"expected a JSON object, got {type(row).__name__}")
                missing = [k for k in REQUIRED_KEYS if k not in row]
                if missing:
                    raise ValueError(f"missing {', '.join(missing)}")
                row["episode"], row["seed"] = int(row["episode"]), int(row["seed"])
            except (ValueError, UnicodeDecodeError, TypeError) as e:
                if warn:
                    partial = "" if raw.endswith(b"\n") else " (unterminated: probably cut short by a crash)"
                    warnings.warn(
                        f"{path}:{lineno}: skipped an unreadable row{partial}: {str(e)[:200]}",
                        ResultsWarning,
                        stacklevel=2,
                    )
                continue
            yield row


def row_key(row: dict[str, Any]) -> Key:
    return (row["task"], row["split"], int(row["episode"]), row["condition"], int(row["seed"]))


def read_rows(out: str | os.PathLike, *, warn: bool = True) -> list[dict[str, Any]]:
    """One row per unit: the last row written for a key wins (a retried error supersedes the old row).
    Every row names its ``backend``: a row written before rows carried it takes its run's (``run_backend``)."""
    latest: dict[Key, dict[str, Any]] = {}
    backend = None
    for row in iter_rows(out, warn=warn):
        if "backend" not in row:
            backend = backend or run_backend(out)
            row["backend"] = backend
        k = row_key(row)
        latest.pop(k, None)  # the surviving row takes the later position
        latest[k] = row
    return list(latest.values())


def run_backend(out: str | os.PathLike) -> str:
    """The backend a run directory's ``config.json`` names (``robomem`` when it names none)."""
    p = Path(out)
    config = (p.parent if p.name.endswith((".jsonl", ".jsonl.gz")) else p) / CONFIG_FILE
    try:
        doc = json.loads(config.read_text())
    except (OSError, ValueError):
        return "robomem"
    return str(((doc.get("config") or {}).get("env") or {}).get("backend") or "robomem")


def read_results(out: str | os.PathLike, *, warn: bool = True) -> list[EpisodeResult]:
    """Like :func:`read_rows`, as :class:`EpisodeResult` objects."""
    return [EpisodeResult.from_dict(r) for r in read_rows(out, warn=warn)]


def finished_keys(out: str | os.PathLike, *, include_errors: bool = True) -> set[Key]:
    """Keys ``(task, split, episode, condition, seed)`` that already have a row (errors optional)."""
    return {
        row_key(r) for r in read_rows(out, warn=False) if include_errors or r.get("status") != "error"
    }


def video_path(out: str | os.PathLike, task: str, episode: int, condition: str, seed: int, success: bool) -> Path:
    """Where an episode's mp4 goes: ``<out>/videos/<condition>/s<seed>/<task>_ep<episode>_<success|failure>.mp4``.

    Every part of the unit is in the path, so no video overwrites another.
    """
    outcome = "success" if success else "failure"
    return Path(out) / "videos" / condition / f"s{seed}" / f"{task}_ep{episode}_{outcome}.mp4"


# --- config.json ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class GitInfo:
    commit: str
    dirty: bool | None


def git_info(root: str | os.PathLike | None = None) -> GitInfo:
    """The checkout's commit and whether it has uncommitted changes; ``unknown`` outside a checkout.

    Read-only: ``--no-optional-locks`` keeps ``git status`` from taking the index lock, so this is
    safe while other git commands run in the same tree.
    """
    cwd = Path(root) if root is not None else Path(__file__).resolve().parents[2]

    def run(*args: str) -> str | None:
        try:
            p = subprocess.run(
                ["git", "--no-optional-locks", *args],
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=20,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return p.stdout.strip() if p.returncode == 0 else None

    commit = run("rev-parse", "HEAD")
    if not commit:
        return GitInfo("unknown", None)
    status = run("status", "--porcelain", "--untracked-files=no")
    return GitInfo(commit, None if status is None else bool(status))


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = None
    return out


def provenance() -> dict[str, Any]:
    g = git_info()
    return {
        "git_commit": g.commit,
        "git_dirty": g.dirty,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "hostname": platform.node(),
        "cpu": floating_point_host(),
        "packages": package_versions(),
    }


def write_config_json(out: str | os.PathLike, cfg: Any, *, argv: list[str] | None = None) -> Path:
    """Write ``<out>/config.json``: the full config, the memory tools' thresholds, git commit and dirty flag,
    python and package versions.

    An existing ``config.json`` whose config, commit or floating-point host differs is kept as
    ``config.<n>.json`` first, so every invocation that appended to the run directory stays on
    record, including which CPU dispatch its rows ran with (rows are reproducible per host only,
    :mod:`experiments.loop.host`).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / CONFIG_FILE
    cfg_dict = cfg.to_dict() if hasattr(cfg, "to_dict") else dict(cfg)
    from experiments.loop.memory_factory import executor_tool_settings
    from memory.tools.registry import default_tools, tool_thresholds  # imports every tool module: only when a run starts

    env_cfg, policy_cfg = cfg_dict.get("env") or {}, cfg_dict.get("policy") or {}
    settings = executor_tool_settings(env_cfg.get("backend", "robomem"), policy_cfg.get("kind", "scripted"))

    doc = {
        "config": cfg_dict,
        # the numbers every memory tool decides with, from the default tool set: the same for every
        # condition (ablations switch tools off, not thresholds), so they sit beside the config, not
        # in it; a resumed run compares ``config`` and the commit only, and a change of thresholds is
        # a change of code (a new commit) anyway; with what the executor fixes (executor_tool_settings)
        "memory_thresholds": tool_thresholds(default_tools(settings=settings)),
        **provenance(),
        "argv": list(sys.argv if argv is None else argv),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError):
            old = None
        if old is None or any(old.get(k) != doc[k] for k in ("git_commit", "cpu")) or old.get("config") != cfg_dict:
            n = 1
            while (out / f"config.{n}.json").exists():
                n += 1
            path.replace(out / f"config.{n}.json")
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2, default=_json_default, allow_nan=True) + "\n")
    tmp.replace(path)
    return path


def read_config_json(out: str | os.PathLike) -> dict[str, Any] | None:
    path = Path(out) / CONFIG_FILE
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def config_mismatch(out: str | os.PathLike, cfg: Any) -> dict[str, tuple[Any, Any]]:
    """Outcome-relevant fields whose value in ``<out>/config.json`` differs from ``cfg`` (old, new).

    Compared by flat name, so a run directory written before the config had groups still resumes."""
    from experiments.loop.config import flatten_config

    doc = read_config_json(out)
    if not doc or "config" not in doc:
        return {}
    old = flatten_config(doc["config"])
    new = cfg.outcome_fields()
    return {k: (old.get(k), v) for k, v in new.items() if k in old and old[k] != v}


def success_rate(rows: Iterable[dict[str, Any]]) -> float:
    rows = [r for r in rows if r.get("status") != "error"]
    return sum(bool(r["success"]) for r in rows) / len(rows) if rows else math.nan
