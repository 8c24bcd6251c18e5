"""Record the levels the default suite's regression set is held to: tests/fixtures/regression_levels.json.

The regression set (``tests/test_regression_set.py``) plays every one of the 16 tasks on a few
``train`` episodes under the ``oracle`` and ``memory`` conditions, through the real harness
(``experiments.run.main``), and compares every row with the levels recorded here: which episodes
succeeded, and the memory's read counts (audited reads right / wrong, history-dependent decisions
right / all, retrospective probes right / asked).

    .venv/bin/python -m benchmarks.record_regression_levels                   # run the set, write the levels
    .venv/bin/python -m benchmarks.record_regression_levels --workers 3       # the same, three processes
    .venv/bin/python -m benchmarks.record_regression_levels --from-run DIR    # levels from a finished run of SET_ARGV
    .venv/bin/python -m benchmarks.record_regression_levels --check           # print the differences, write nothing

Re-record only on purpose (a change that is meant to move the levels, or a new host whose
simulation differs), and say so in the commit: the file's ``commit``, ``recorded_at`` and
``wall_s`` name the code and the cost of the run it came from.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LEVELS_PATH = ROOT / "tests" / "fixtures" / "regression_levels.json"

EPISODES: tuple[int, ...] = (0, 1)
"""Train episodes by index, the same for every task (never the test split: the set guards the code,
it must not become a way of tuning on the evaluation episodes)."""
CONDITIONS: tuple[str, ...] = ("oracle", "memory")
SEED = 7

SET_ARGV: list[str] = [
    "--tasks", "all", "--split", "train", "--episodes", *map(str, EPISODES), "--seeds", str(SEED),
    "--conditions", *CONDITIONS, "--wandb", "disabled",
]  # fmt: skip
"""The harness flags of the set (``--out`` and ``--workers`` are added by whoever runs it; the other
settings are the harness's defaults: history-blind composer, exact scripted policy, render stride 4)."""

COUNT_FIELDS = ("reads_correct", "reads_wrong", "history_decisions", "history_right", "probes_asked", "probes_right")


def run_set(out: Path, workers: int = 2) -> float:
    """Play the set into the run directory ``out`` (resumes it if it holds part of the set) and
    return the wall seconds it took. Raises if the harness does not exit 0.

    The episodes play in spawned workers under the portable kernel choice
    (``experiments.loop.host.portable_dispatch``): an episode's physics, and so which retry seed its
    demonstration succeeds at, follows the host's SIMD kernels, and the levels must hold on every
    host CI may run on. Hence at least two workers: one worker would play in this process, whose
    numpy was loaded with this host's kernels."""
    from experiments.loop.host import portable_dispatch
    from experiments.run import main

    if workers < 2:
        raise ValueError(f"workers={workers}: the set plays in at least 2 spawned workers (see run_set)")
    t0 = time.perf_counter()
    with portable_dispatch():
        rc = main([*SET_ARGV, "--out", str(out), "--workers", str(workers)])
    if rc != 0:
        raise RuntimeError(f"python -m experiments.run {' '.join(SET_ARGV)} --out {out} exited {rc}")
    return time.perf_counter() - t0


def read_set_rows(out: Path) -> list[dict[str, Any]]:
    """The rows of ``out`` that belong to the set (the latest row of each unit)."""
    from experiments.loop.results import read_rows

    rows: dict[tuple, dict] = {}
    for r in read_rows(out):
        if r.get("split") == "train" and r.get("seed") == SEED and r.get("condition") in CONDITIONS \
                and r.get("episode") in EPISODES:
            rows[(r["task"], r["condition"], r["episode"])] = r
    return list(rows.values())


def episode_level(row: dict[str, Any]) -> dict[str, Any]:
    """What the set records of one row: its outcome and, for a memory row, the memory's read counts."""
    level: dict[str, Any] = {
        "task": row["task"], "condition": row["condition"], "episode": int(row["episode"]),
        "status": row["status"], "success": bool(row["success"]), "steps": int(row.get("steps") or 0),
    }
    if row["condition"] == "memory":
        m = row.get("memory") if isinstance(row.get("memory"), dict) else {}
        h = row.get("history_audit") if isinstance(row.get("history_audit"), dict) else {}
        kinds = ((m.get("assessment") or {}).get("by_kind") or {}).values()
        level.update(
            reads_correct=int(m.get("reads_correct", 0) or 0),
            reads_wrong=int(m.get("reads_wrong", 0) or 0),
            history_decisions=int(h.get("decisions", 0) or 0),
            history_right=int(h.get("right", 0) or 0),
            probes_asked=sum(int(k.get("asked", 0) or 0) for k in kinds),
            probes_right=sum(int(k.get("right", 0) or 0) for k in kinds),
        )
    return level


def ratio(right: int, scored: int) -> float:
    return right / scored if scored else math.nan


def task_accuracies(levels: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per task, the memory rows' counts summed over the set's episodes and their three accuracies:
    ``read`` (audited reads right / right + wrong), ``decision`` (history-dependent decisions executed
    right / all of them) and ``probe`` (retrospective probes right / asked); NaN where nothing was scored."""
    out: dict[str, dict[str, Any]] = {}
    for lv in levels:
        if lv["condition"] != "memory":
            continue
        a = out.setdefault(lv["task"], {k: 0 for k in COUNT_FIELDS} | {"episodes": 0})
        a["episodes"] += 1
        for k in COUNT_FIELDS:
            a[k] += lv[k]
    for a in out.values():
        a["read"] = ratio(a["reads_correct"], a["reads_correct"] + a["reads_wrong"])
        a["decision"] = ratio(a["history_right"], a["history_decisions"])
        a["probe"] = ratio(a["probes_right"], a["probes_asked"])
    return out


def levels_document(rows: list[dict[str, Any]], wall_s: float | None, workers: int | None) -> dict[str, Any]:
    from experiments.loop.results import git_info

    levels = sorted((episode_level(r) for r in rows), key=lambda lv: (lv["task"], lv["condition"], lv["episode"]))
    code = git_info()
    acc = task_accuracies(levels)
    return {
        "about": "Levels of the default suite's regression set (tests/test_regression_set.py); "
                 "written by benchmarks/record_regression_levels.py, do not edit by hand.",
        "argv": SET_ARGV,
        "commit": code.commit,
        "dirty": code.dirty,
        "recorded_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "wall_s": None if wall_s is None else round(wall_s, 1),
        "workers": workers,
        "host": {"python": platform.python_version(), "machine": platform.machine(), "system": platform.platform()},
        "summary": {
            "oracle_success": sum(lv["success"] for lv in levels if lv["condition"] == "oracle"),
            "memory_success": sum(lv["success"] for lv in levels if lv["condition"] == "memory"),
            "episodes_per_condition": sum(lv["condition"] == "memory" for lv in levels),
            "read_accuracy_by_task": {t: _round(a["read"]) for t, a in sorted(acc.items())},
            "decision_accuracy_by_task": {t: _round(a["decision"]) for t, a in sorted(acc.items())},
        },
        "episodes": levels,
    }


def _round(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 4)


def load_levels(path: Path = LEVELS_PATH) -> dict[str, Any]:
    return json.loads(path.read_text())


def differences(recorded: dict[str, Any], now: list[dict[str, Any]]) -> list[str]:
    """Every recorded episode whose outcome or counts differ now (either direction), one line each."""
    by = {(lv["task"], lv["condition"], lv["episode"]): lv for lv in now}
    lines = []
    for old in recorded["episodes"]:
        key = (old["task"], old["condition"], old["episode"])
        new = by.get(key)
        if new is None:
            lines.append(f"{key}: missing now")
            continue
        changed = {k: (old[k], new.get(k)) for k in old if old[k] != new.get(k)}
        if changed:
            lines.append(f"{key}: " + ", ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in changed.items()))
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--from-run", type=Path, help="read a finished run directory of the set instead of playing it")
    p.add_argument("--out", type=Path, help="run directory to play the set into (default: a temporary one)")
    p.add_argument("--workers", type=int, default=2, help="spawned workers (at least 2, see run_set)")
    p.add_argument("--levels", type=Path, default=LEVELS_PATH)
    p.add_argument("--check", action="store_true", help="compare with the recorded levels, write nothing")
    a = p.parse_args(argv)

    wall_s: float | None = None
    workers: int | None = None
    with tempfile.TemporaryDirectory() as tmp:
        out = a.from_run or a.out or Path(tmp) / "regression_set"
        if a.from_run is None:
            wall_s, workers = run_set(out, a.workers), a.workers
        rows = read_set_rows(out)
    expected = 16 * len(EPISODES) * len(CONDITIONS)
    if len(rows) != expected:
        print(f"error: {out} holds {len(rows)} rows of the set, not {expected}", file=sys.stderr)
        return 1
    errors = [f"{r['task']} ep{r['episode']} {r['condition']}: {r.get('error')}" for r in rows if r["status"] == "error"]
    if errors:
        print("error: the set must be recorded without errored episodes:\n  " + "\n  ".join(errors), file=sys.stderr)
        return 1
    doc = levels_document(rows, wall_s, workers)
    if a.check:
        diff = differences(load_levels(a.levels), doc["episodes"])
        print("\n".join(diff) if diff else "no differences from the recorded levels")
        return 0
    a.levels.parent.mkdir(parents=True, exist_ok=True)
    a.levels.write_text(json.dumps(doc, indent=1) + "\n")
    s = doc["summary"]
    n = s["episodes_per_condition"]
    print(f"wrote {a.levels}: oracle {s['oracle_success']}/{n}, memory {s['memory_success']}/{n} success"
          + ("" if wall_s is None else f"; the set took {wall_s:.0f} s on {workers} worker(s)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
