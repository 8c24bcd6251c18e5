"""Fit the ``pi05-like`` executor profile on train episodes: one failure scale per task.

The profile's *shape* is declared here (:data:`BASE`: which failures each skill makes and in what
proportion, from how a learned visuomotor policy fails: missed grasps that are mostly retried, a
drop now and then, presses that land twice or short, a late or early timed press, a stick that
overshoots a node or turns the wrong way, rare stalls). Its *size* is fitted per task: the scale
``s`` multiplying every rate of ``BASE`` on that task, chosen so the oracle arm's success on train
episodes lands on π0.5's published oracle-subgoal success for the task
(``experiments.reporting.paper_reference.ORACLE_SUBGOAL``). Success falls as ``s`` grows, so each
task is bracketed (doubling ``s``) and then bisected in log scale; every round is one real
``python -m experiments.run`` over the tasks still being fitted, on the same train episodes and
seed. A task whose clean oracle is already at or below its target gets ``s = 0`` (clean).

    python -m scripts.fit_executor_profile --episodes 0:16 --rounds 5 --workers 2

writes ``policies/profiles/pi05_like.json`` (the profile, with a ``fit`` record) and
``benchmarks/executor_fit.md`` (per task: target, clean success, fitted scale, fitted success).
Never fitted on test: the test split's success is the check (README, issue 36's must-show).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envs.episodes import ALL_TASKS  # noqa: E402
from experiments.reporting.paper_reference import ORACLE_SUBGOAL  # noqa: E402
from policies.executor_profile import PROFILE_DIR, SKILLS, FailureRates  # noqa: E402

BASE: dict[str, FailureRates] = {
    "grasp": FailureRates(miss_retry=0.10, miss=0.03, wrong_object=0.03, stall=0.01),
    "carry": FailureRates(drop=0.05, stall=0.01),
    "press": FailureRates(extra=0.03, short=0.03, late=0.04, early=0.04, stall=0.01),
    "stick": FailureRates(extra=0.04, short=0.02, wrong_turn=0.04, stall=0.01),
}
"""The profile's shape at scale 1: per subgoal of each skill (module docstring)."""
S_MAX = 24.0


def profile_for(scales: dict[str, float], fit: dict | None = None) -> dict:
    """The profile JSON: every task's skills at its scale (0: clean)."""
    tasks = {t: {k: asdict(BASE[k].scaled(s)) for k in SKILLS} for t, s in scales.items() if s > 0}
    out = {"name": "pi05-like", "skills": {}, "tasks": tasks}
    if fit is not None:
        out["fit"] = fit
    return out


def oracle_success(scales: dict[str, float], episodes: str, workers: int, seed: int) -> dict[str, float]:
    """Oracle success (%) per task on train ``episodes`` under the profile with these scales."""
    from experiments.loop.results import read_rows

    with tempfile.TemporaryDirectory() as tmp:
        prof = Path(tmp) / "profile.json"
        prof.write_text(json.dumps(profile_for(scales)))
        cmd = [sys.executable, "-m", "experiments.run", "--tasks", *scales, "--split", "train", "--episodes", episodes,
               "--conditions", "oracle", "--seeds", str(seed), "--executor-profile", str(prof),
               "--wandb", "disabled", "--workers", str(workers), "--out", str(Path(tmp) / "run")]
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        rows = read_rows(Path(tmp) / "run")
    out = {}
    for t in scales:
        mine = [r for r in rows if r["task"] == t]
        out[t] = 100.0 * sum(r["status"] == "success" for r in mine) / max(1, len(mine))
    return out


def fit(episodes: str, rounds: int, workers: int, seed: int, tasks: list[str]) -> dict:
    clean = oracle_success({t: 0.0 for t in tasks}, episodes, workers, seed)
    print("clean:", clean, flush=True)
    lo = {t: 0.0 for t in tasks}  # success(lo) > target
    hi: dict[str, float | None] = {t: None for t in tasks}  # success(hi) <= target
    succ = {t: {0.0: clean[t]} for t in tasks}
    todo = [t for t in tasks if clean[t] > ORACLE_SUBGOAL[t]]
    for r in range(rounds):
        if not todo:
            break
        trial = {}
        for t in todo:
            if hi[t] is None:
                trial[t] = 1.0 if lo[t] == 0 else min(S_MAX, lo[t] * 2)
            else:
                trial[t] = math.sqrt(max(lo[t], hi[t] / 8) * hi[t])
        got = oracle_success(trial, episodes, workers, seed)
        print(f"round {r}:", {t: (round(trial[t], 3), got[t]) for t in trial}, flush=True)
        for t, s in trial.items():
            succ[t][s] = got[t]
            if got[t] <= ORACLE_SUBGOAL[t]:
                hi[t] = s
            else:
                lo[t] = s
        todo = [t for t in todo if not (hi[t] is None and lo[t] >= S_MAX)]
    scales = {}
    for t in tasks:
        if clean[t] <= ORACLE_SUBGOAL[t]:
            scales[t] = 0.0
            continue
        if hi[t] is None:
            scales[t] = lo[t]
            continue
        # interpolate between the bracketing trials by success
        a, b = lo[t], hi[t]
        sa, sb = succ[t][a], succ[t][b]
        w = 0.0 if sa == sb else (sa - ORACLE_SUBGOAL[t]) / (sa - sb)
        scales[t] = round(a + w * (b - a), 4)
    return {"scales": scales, "clean": clean, "trials": {t: {str(k): v for k, v in succ[t].items()} for t in tasks}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.fit_executor_profile", description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", default="0:16", help="train episodes to fit on (START:STOP)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--tasks", nargs="+", default=list(ALL_TASKS))
    ap.add_argument("--out", type=Path, default=PROFILE_DIR / "pi05_like.json")
    ap.add_argument("--table", type=Path, default=ROOT / "benchmarks" / "executor_fit.md")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    result = fit(args.episodes, args.rounds, args.workers, args.seed, args.tasks)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    check = oracle_success(result["scales"], args.episodes, args.workers, args.seed)
    record = {"split": "train", "episodes": args.episodes, "seed": args.seed, "commit": commit,
              "target": {t: ORACLE_SUBGOAL[t] for t in args.tasks}, "fitted_success": check, **result}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(profile_for(result["scales"], record), indent=1) + "\n")
    lines = ["# The `pi05-like` executor profile's fit (train)", "",
             f"`python -m scripts.fit_executor_profile --episodes {args.episodes} --rounds {args.rounds}` at {commit} "
             f"(oracle arm, train {args.episodes}, seed {args.seed}; load average {load0:.2f}). Scale: the multiplier "
             "of the declared failure shape on that task (0: clean). Success in %.", "",
             "| task | π0.5 oracle-subgoal (target) | clean | scale | fitted (train) |", "|---|---|---|---|---|"]
    for t in args.tasks:
        lines.append(f"| {t} | {ORACLE_SUBGOAL[t]:.1f} | {result['clean'][t]:.1f} | {result['scales'][t]:g} | {check[t]:.1f} |")
    mean = lambda d: sum(d[t] for t in args.tasks) / len(args.tasks)  # noqa: E731
    lines.append(f"| mean | {mean(ORACLE_SUBGOAL):.2f} | {mean(result['clean']):.1f} | | {mean(check):.1f} |")
    args.table.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
