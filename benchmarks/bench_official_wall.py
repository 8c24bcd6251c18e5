"""Wall time per episode, per arm, on the official envs vs ours: the same tasks and episodes, one run.

Three configurations of ``python -m experiments.run`` on the same units: ours (``--backend
robomem``), the official envs as the benchmark renders them (every camera at every step: "before")
(``--no-official-render-gate``) and the official envs with the render gate, the default (cameras
only where a consumer reads them: "after"). Each is a fresh process (the first episode of a process also pays its imports); the
table gives the median ``wall_s`` per (task, arm) and the official/ours ratios, with the machine's
load average beside them, since only the ratios transfer between machines.

    python -m benchmarks.bench_official_wall --tasks PickXtimes VideoUnmask MoveCube VideoRepick \
        --episodes 0 --out benchmarks/official_wall.md
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {
    "ours": ["--backend", "robomem"],
    "official": ["--backend", "robomme", "--no-official-render-gate"],
    "official+gate": ["--backend", "robomme", "--official-render-gate"],
}


def run_config(name: str, tasks: list[str], episodes: list[str], arms: list[str], split: str, out: Path) -> list[dict]:
    from experiments.loop.results import read_rows

    cmd = [sys.executable, "-m", "experiments.run", *CONFIGS[name], "--tasks", *tasks, "--episodes", *episodes,
           "--split", split, "--conditions", *arms, "--wandb", "disabled", "--out", str(out)]
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return read_rows(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_official_wall", description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=["PickXtimes", "VideoUnmask", "MoveCube", "VideoRepick"])
    ap.add_argument("--episodes", nargs="+", default=["0"])
    ap.add_argument("--arms", nargs="+", default=["oracle", "memory"])
    ap.add_argument("--split", default="train")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "official_wall.md")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()
    walls: dict[tuple[str, str, str], list[float]] = {}
    outcomes: dict[tuple[str, str, str], list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in CONFIGS:
            for r in run_config(name, args.tasks, args.episodes, args.arms, args.split, Path(tmp) / name):
                walls.setdefault((name, r["task"], r["condition"]), []).append(float(r["wall_s"]))
                outcomes.setdefault((name, r["task"], r["condition"]), []).append(r["status"])
    load1 = os.getloadavg()
    lines = [
        "# Wall time per episode: official envs vs ours",
        "",
        f"`python -m benchmarks.bench_official_wall --tasks {' '.join(args.tasks)} --episodes {' '.join(args.episodes)} "
        f"--split {args.split}` (one run; load average {load0[0]:.2f} at the start, {load1[0]:.2f} at the end, "
        f"{os.cpu_count()} CPUs). Median `wall_s` per episode (s); ratios to ours; outcomes in brackets.",
        "",
        "| task | arm | ours | official (before) | official + gate (after) | before / ours | after / ours |",
        "|---|---|---|---|---|---|---|",
    ]
    ratios = {"official": [], "official+gate": []}
    for task in args.tasks:
        for arm in args.arms:
            med = {n: statistics.median(walls[(n, task, arm)]) for n in CONFIGS if (n, task, arm) in walls}
            if "ours" not in med:
                continue
            cells = [f"{med[n]:.1f} [{','.join(outcomes[(n, task, arm)])}]" if n in med else "-" for n in CONFIGS]
            rs = []
            for n in ("official", "official+gate"):
                if n in med:
                    ratios[n].append(med[n] / med["ours"])
                    rs.append(f"{med[n] / med['ours']:.1f}x")
                else:
                    rs.append("-")
            lines.append(f"| {task} | {arm} | " + " | ".join(cells) + " | " + " | ".join(rs) + " |")
    for n, rs in ratios.items():
        if rs:
            lines.append(f"\nMedian {n} / ours over these cells: {statistics.median(rs):.1f}x.")
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
