"""Mirror committed results into one Weights & Biases group: the Results v1 campaign in one place.

    python -m experiments.wandb_group results_v1_test results_v1_reworded results_v1_ood --group results_v1
    wandb sync runs/wandb_results_v1/wandb/wandb/offline-run-*      # later, from a machine online

A campaign's rows arrive over several sessions, so its runs never logged to W&B as one experiment.
This reads the published directories under ``benchmarks/results/`` (the source of truth) and logs
each as ``experiments.reporting.wandb_log`` would have at the end of a run: one W&B run per (results name,
condition, seed), named ``<name>/<condition>-s<seed>``, plus one ``<name>/report`` run per results
name holding the report's tables (success, paired comparisons, specificity, failure reasons, cost)
as ``wandb.Table``\\ s. Offline by default, under ``--out``.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import tyro

from experiments.loop.config import config_from_dict
from experiments.reporting.publish import PUBLISHED
from experiments.loop.results import read_config_json, read_rows


@dataclass(frozen=True)
class GroupArgs:
    """Log published results directories to one W&B group."""

    names: tyro.conf.Positional[tuple[str, ...]]
    """Directories under the results root (e.g. results_v1_test)."""
    group: str = "results_v1"
    """W&B group every run joins."""
    mode: Literal["offline", "online"] = "offline"
    out: Path | None = None
    """Where the W&B files go (default: runs/wandb_<group>)."""
    root: Path = PUBLISHED
    """The results root the names are under."""
    report: bool = True
    """Also log each name's report tables as one ``<name>/report`` run."""


def log_group(args: GroupArgs) -> list[Path]:
    """Every W&B run directory written, per-(condition, seed) runs first, then the report runs."""
    from experiments.reporting.wandb_log import log_results

    out = args.out or Path("runs") / f"wandb_{args.group}"
    written: list[Path] = []
    for name in args.names:
        rows = read_rows(args.root / name, warn=False)
        doc = read_config_json(args.root / name)
        if not rows or not doc or "config" not in doc:
            raise ValueError(f"results {name!r}: no rows or no config.json under {args.root / name}")
        cfg = config_from_dict(doc["config"])
        cfg = dataclasses.replace(
            cfg,
            logging=dataclasses.replace(cfg.logging, wandb=args.mode, wandb_group=args.group),
            execution=dataclasses.replace(cfg.execution, out=out),
            render=dataclasses.replace(cfg.render, video=False),
        )
        written += log_results(cfg, rows, name_prefix=f"{name}/", tags=(f"results:{name}",))
        if args.report:
            written.append(_log_report(cfg, name, rows))
    return written


def _log_report(cfg, name: str, rows: list[dict]) -> Path:
    from experiments.reporting.report import build_report
    from experiments.reporting.wandb_log import flush_service, init_run, wandb_env

    report = build_report(rows, sources=[name])
    with wandb_env(cfg):
        import wandb

        run = init_run(wandb, cfg, name=f"{name}/report", job_type="report",
                       config={"results": name, "episodes": len(rows)}, tags=[f"results:{name}", "report"])
        try:
            payload = {}
            for table, records in report.tables.items():
                if not records:
                    continue
                cols = list(dict.fromkeys(k for r in records for k in r))
                text = {c for c in cols if any(not _number(r.get(c)) and r.get(c) is not None for r in records)}
                data = [[_cell(r.get(c), c in text) for c in cols] for r in records]
                payload[f"report/{table}"] = wandb.Table(columns=cols, data=data)
            run.log(payload)
            path = Path(run.dir).parent
        finally:
            run.finish()
        flush_service(wandb)
    return path


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _cell(v, as_text: bool):
    """W&B Tables hold one type per column: text where any value is text, else floats (nan for none)."""
    if as_text:
        return "" if v is None else str(v)
    return float(v) if _number(v) else math.nan


def main(argv: list[str] | None = None) -> int:
    args = tyro.cli(GroupArgs, args=sys.argv[1:] if argv is None else argv, prog="python -m experiments.wandb_group")
    try:
        written = log_group(args)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {len(written)} W&B runs (group {args.group!r}, {args.mode}) under "
          f"{args.out or Path('runs') / f'wandb_{args.group}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
