"""Run a grid of episodes and append one result row per episode to ``<out>/episodes.jsonl``.

    python -m experiments.run --preset quick
    python -m experiments.run --tasks counting VideoUnmask --episodes 0:20 --seeds 7 11 23 \\
        --conditions no-memory memory memory-no-count --out runs/counting --workers 4
    python -m experiments.run --preset paper --executor ray --ray-address auto

Rerunning a command with the same ``--out`` resumes it: finished episodes are skipped, never
repeated. The exit status is 0 when the grid ran, even if some episodes ended in ``error`` (errors
are rows like any other; ``--retry-errors`` runs them again); 2 for a bad configuration; 1 when
results could not be written; 130 after Ctrl-C.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from experiments.loop.config import ConfigError, ExperimentConfig, parse_config
from experiments.loop.executors import UnitFn, UnitFnRef, make_executor, make_units, resolve_unit_fn
from experiments.loop.progress import Progress
from experiments.loop.records import EpisodeResult
from experiments.loop.results import (
    ResultsWriteError,
    ResultsWriter,
    config_mismatch,
    finished_keys,
    git_info,
    read_rows,
    results_path,
    row_key,
    write_config_json,
)
from memory.perception import PerceptionConfig, PerceptionSetupError, build_perception

UNIT_FN_FLAG = "--unit-fn"  # hidden: module:function replacing experiments.loop.unit:run_unit (tests)


def main(argv: list[str] | None = None, *, unit_fn: UnitFn | str | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        spec, args = _pop_option(args, UNIT_FN_FLAG)
        cfg = parse_config(args)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return run(cfg, unit_fn if unit_fn is not None else spec, argv=args)


def run(cfg: ExperimentConfig, unit_fn: UnitFn | str | None = None, *, argv: list[str] | None = None) -> int:
    """Run ``cfg`` (see the module docstring for the exit statuses)."""
    out = Path(cfg.execution.out)
    mismatch = config_mismatch(out, cfg)
    if mismatch:
        diff = "; ".join(f"{k}: {old!r} there, {new!r} now" for k, (old, new) in mismatch.items())
        print(
            f"error: {out} holds results made with different settings ({diff}). "
            f"Use another --out, or the same settings to resume.",
            file=sys.stderr,
        )
        return 2
    fn = resolve_unit_fn(unit_fn)
    if isinstance(fn, UnitFnRef):
        try:
            fn.check()
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2

    if cfg.perception != PerceptionConfig():
        # model back-ends load from local directories: a wrong path fails here, named, not in every episode
        try:
            build_perception(cfg.perception)
        except PerceptionSetupError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2

    write_config_json(out, cfg, argv=argv)
    units = make_units(cfg)
    keys = {u.key for u in units}
    done = finished_keys(out, include_errors=not cfg.execution.retry_errors)
    todo = [u for u in units if u.key not in done]
    path = results_path(out)
    print(
        f"{len(units)} episodes ({len(cfg.task_list)} tasks x {len(cfg.condition_names)} conditions x "
        f"{len(cfg.scope.seeds)} seeds x {len(cfg.episode_list)} episodes): {len(units) - len(todo)} already in "
        f"{path}, {len(todo)} to run on {cfg.execution.executor} with {cfg.execution.workers} worker(s)",
        file=sys.stderr,
        flush=True,
    )

    progress = Progress(len(todo))
    code = git_info()
    try:
        with ResultsWriter(out) as writer:

            def on_result(r: EpisodeResult) -> None:
                # every row names the code it ran with, so a table can prove it comes from one commit
                r.code_commit, r.code_dirty = code.commit, code.dirty
                writer.write(r)
                progress.update(r)

            make_executor(cfg, fn).run(todo, cfg, on_result)
    except ResultsWriteError as e:
        progress.close()
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        progress.close()
        print(f"\ninterrupted: {progress.n} episodes written to {path}; rerun the same command to resume", file=sys.stderr)
        return 130
    progress.close()

    rows = [r for r in read_rows(out) if row_key(r) in keys]
    print_summary(rows)
    if cfg.logging.wandb != "disabled":
        try:
            from experiments.reporting.wandb_log import log_results

            dirs = log_results(cfg, rows)
            if dirs:
                print(f"W&B ({cfg.logging.wandb}): {len(dirs)} runs in group {cfg.group!r} under {dirs[0].parent}", file=sys.stderr)
        except Exception as e:  # noqa: BLE001 - logging is a mirror; the JSONL already holds everything
            print(f"warning: W&B logging failed ({type(e).__name__}: {e}); results are in {path}", file=sys.stderr)
    return 0


def print_summary(rows: list[dict]) -> None:
    """Print the per-task success table (one column per condition) and the status counts."""
    from experiments.reporting.report_sections import condition_order, task_table

    if not rows:
        print("no episodes")
        return
    md, _ = task_table(rows)
    print("\nSuccess by task (%; mean ± sd over seeds)\n")
    print(md)
    print()
    for c in condition_order(rows):
        rs = [r for r in rows if r["condition"] == c]
        st = Counter(r.get("status") for r in rs)
        ok = len(rs) - st["error"]
        rate = f"{100 * st['success'] / ok:.1f}%" if ok else "-"
        print(f"{c}: {st['success']}/{ok} success ({rate}); " + ", ".join(f"{k} {v}" for k, v in sorted(st.items())))


def _pop_option(args: list[str], flag: str) -> tuple[str | None, list[str]]:
    value, rest, i = None, [], 0
    while i < len(args):
        a = args[i]
        if a == flag:
            if i + 1 >= len(args):
                raise ConfigError(f"{flag} needs a value (module:function)")
            value = args[i + 1]
            i += 2
            continue
        if a.startswith(flag + "="):
            value = a.split("=", 1)[1]
        else:
            rest.append(a)
        i += 1
    return value, rest


if __name__ == "__main__":
    sys.exit(main())
