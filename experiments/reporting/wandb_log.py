"""Mirror a run directory's results to Weights & Biases.

The JSONL on disk stays the source of truth; W&B gets a copy once the episodes are done: one group
per experiment (the run directory's name, or ``--wandb-group``), one W&B run per (condition, seed)
named ``<condition>-s<seed>``, with ``config=cfg.flat_dict()``, tags, per-task / per-suite success,
memory diagnostics, a ``wandb.Table`` of every episode and, with ``--video``, up to
``--max-videos`` mp4s from ``<out>/videos/<condition>/s<seed>/`` (see ``results.video_path``).

Offline is the default: runs are written under ``<out>/wandb/`` (``WANDB_DIR``) and can be uploaded
later with ``wandb sync <out>/wandb/wandb/offline-run-*``. wandb is imported only when logging.
Recent wandb releases do not write ``files/wandb-summary.json`` for offline runs (wandb issue
#9646); we write it ourselves in that case, so an offline run can be inspected without syncing.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from envs.episodes import SUITES
from experiments.loop.conditions import condition_from_name
from experiments.loop.config import ExperimentConfig

Row = dict[str, Any]
TABLE_COLUMNS = ("task", "split", "episode", "env_seed", "difficulty", "status", "success", "steps", "n_subgoals", "wall_s", "error")


def wandb_dir(cfg: ExperimentConfig) -> Path:
    return Path(cfg.execution.out) / "wandb"


@contextlib.contextmanager
def wandb_env(cfg: ExperimentConfig) -> Iterator[None]:
    """Set ``WANDB_MODE``, ``WANDB_DIR`` (``<out>/wandb``) and ``WANDB_SILENT`` for the block, then restore them."""
    d = wandb_dir(cfg)
    d.mkdir(parents=True, exist_ok=True)
    new = {"WANDB_MODE": cfg.logging.wandb, "WANDB_DIR": str(d.resolve()), "WANDB_SILENT": "true"}
    old = {k: os.environ.get(k) for k in new}
    os.environ.update(new)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_metrics(rows: list[Row]) -> dict[str, float]:
    """Summary metrics of one (condition, seed): success per task and suite, counts, memory diagnostics."""
    m: dict[str, float] = {}
    by_task: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by_task[r["task"]].append(r)
    task_rate: dict[str, float] = {}
    for t, rs in by_task.items():
        ok = [r for r in rs if r.get("status") != "error"]
        if ok:
            task_rate[t] = sum(bool(r["success"]) for r in ok) / len(ok)
            m[f"success/{t}"] = task_rate[t]
    for suite, tasks in SUITES.items():
        v = [task_rate[t] for t in tasks if t in task_rate]
        if v:
            m[f"success_suite/{suite}"] = sum(v) / len(v)
    if task_rate:
        m["success/all"] = sum(task_rate.values()) / len(task_rate)
    m["episodes/n"] = len(rows)
    for status in ("success", "fail", "timeout", "error"):
        m[f"episodes/{status}"] = sum(r.get("status") == status for r in rows)
    m["episodes/mean_steps"] = _mean([r.get("steps") for r in rows if r.get("status") != "error"])
    m["episodes/mean_wall_s"] = _mean([r.get("wall_s") for r in rows])
    # memory diagnostics: every numeric entry of the rows' `memory` dicts, averaged per episode
    per_key: dict[str, list[float]] = defaultdict(list)
    per_task_key: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        mem = r.get("memory") or {}
        if not isinstance(mem, dict):
            continue
        for k, v in mem.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                per_key[k].append(float(v))
                per_task_key[(r["task"], k)].append(float(v))
    for k, v in per_key.items():
        m[f"memory/{k}"] = _mean(v)
    for (t, k), v in per_task_key.items():
        m[f"memory/{t}/{k}"] = _mean(v)
    correct, wrong = sum(per_key.get("reads_correct", [])), sum(per_key.get("reads_wrong", []))
    if correct + wrong:
        m["memory/read_accuracy"] = correct / (correct + wrong)
    return {k: v for k, v in m.items() if not (isinstance(v, float) and math.isnan(v))}


def _mean(v: list[Any]) -> float:
    v = [float(x) for x in v if isinstance(x, (int, float)) and not isinstance(x, bool)]
    return sum(v) / len(v) if v else math.nan


def log_results(cfg: ExperimentConfig, rows: list[Row], *, name_prefix: str = "", tags: tuple[str, ...] = ()) -> list[Path]:
    """Log ``rows`` as one W&B run per (condition, seed); returns the runs' local directories.

    ``name_prefix`` keeps run names apart when several run directories share one group
    (``experiments/wandb_group.py``); ``tags`` are added to every run's. Does nothing when
    ``cfg.logging.wandb == "disabled"``.
    """
    if cfg.logging.wandb == "disabled" or not rows:
        return []
    groups: dict[tuple[str, int], list[Row]] = defaultdict(list)
    for r in rows:
        groups[(r["condition"], int(r["seed"]))].append(r)
    run_dirs: list[Path] = []
    with wandb_env(cfg):
        import wandb

        for (cond, seed), rs in sorted(groups.items()):
            try:
                flags = asdict(condition_from_name(cond))
            except ValueError:
                flags = {}
            config = {**cfg.flat_dict(), "condition": cond, "seed": seed, "condition_spec": flags}
            run_tags = [*tags, cond, f"seed:{seed}", f"split:{cfg.scope.split}", f"composer:{cfg.composer_for(cond)}", f"policy:{cfg.policy.kind}"]
            if cfg.preset:
                run_tags.append(f"preset:{cfg.preset}")
            run = init_run(wandb, cfg, name=f"{name_prefix}{cond}-s{seed}", job_type="eval", config=config, tags=run_tags)
            try:
                metrics = run_metrics(rs)
                table = wandb.Table(columns=[*TABLE_COLUMNS, "memory"])
                for r in sorted(rs, key=lambda r: (r["task"], int(r["episode"]))):
                    table.add_data(
                        *[_cell(c, r.get(c)) for c in TABLE_COLUMNS],
                        json.dumps(r.get("memory") or {}, default=str)[:2000],
                    )
                payload: dict[str, Any] = {**metrics, "episodes": table}
                videos = sorted((Path(cfg.execution.out) / "videos" / cond / f"s{seed}").glob("*.mp4"))
                for v in videos[: cfg.render.max_videos] if cfg.render.video else []:
                    payload[f"video/{v.stem}"] = wandb.Video(str(v), format="mp4")
                run.log(payload)
                run.summary.update(metrics)
                files = Path(run.dir)
            finally:
                run.finish()
            summary_file = files / "wandb-summary.json"
            if not summary_file.exists():
                summary_file.write_text(json.dumps(metrics, indent=1, sort_keys=True) + "\n")
            run_dirs.append(files.parent)
        flush_service(wandb)
    return run_dirs


def init_run(wandb: Any, cfg: ExperimentConfig, *, name: str, job_type: str, config: dict[str, Any], tags: list[str]):
    """One W&B run of ``cfg``'s group, mode and directory (call inside :func:`wandb_env`)."""
    return wandb.init(
        project=cfg.logging.wandb_project,
        entity=cfg.logging.wandb_entity,
        group=cfg.group,
        name=name,
        job_type=job_type,
        config=config,
        tags=tags,
        mode=cfg.logging.wandb,
        dir=str(wandb_dir(cfg).resolve()),
        settings=wandb.Settings(console="off", silent=True, x_disable_stats=True, save_code=False),
    )


def flush_service(wandb: Any) -> None:
    """Make the finished runs' files complete on disk: ``finish()`` can return before the service has
    written everything; shutting the service down flushes it (a later ``wandb.init`` starts a new one)."""
    teardown = getattr(wandb, "teardown", None)
    if teardown is not None:
        teardown()


_NUMERIC = {"episode", "env_seed", "steps", "n_subgoals", "wall_s"}


def _cell(column: str, v: Any) -> Any:
    # wandb Tables check every row against the column types they inferred: keep one type per column.
    if column == "success":
        return bool(v)
    if column in _NUMERIC:
        try:
            return float(v)
        except (TypeError, ValueError):
            return float("nan")
    return "" if v is None else str(v)[:2000]
