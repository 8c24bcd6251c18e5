"""Fit the ``pi05-like`` executor profile on train episodes: one failure scale per task.

The profile's *shape* is declared here (:data:`BASE`: which failures each skill makes and in what
proportion, from how a learned visuomotor policy fails: missed grasps that are mostly retried, a
drop now and then, presses that land twice or short, a late or early timed press, a stick that
overshoots a node or turns the wrong way, rare stalls). Its *size* is fitted per task: the scale
``s`` multiplying every rate of ``BASE`` on that task, chosen so the oracle arm's success on train
episodes lands on π0.5's published oracle-subgoal success for the task
(``experiments.reporting.paper_reference.ORACLE_SUBGOAL``). Success falls about geometrically as
``s`` grows, so each round takes a secant step on log success (:func:`fit`) and runs one real
``python -m experiments.run`` over the tasks not yet within half an episode of their target, on the
same train episodes and seed; the fitted scale is the last one run, and its success is the one
reported. A task whose clean oracle is already at or below its target gets ``s = 0`` (clean).

    python -m scripts.fit_executor_profile --episodes 0:12 --rounds 6 --workers 2

``--work DIR`` keeps every round's run under ``DIR`` (named by its trial scales) instead of a
temporary directory: rerunning the same command resumes, replaying the finished rounds from their
rows (each trial is a function of the earlier rounds' success) and finishing the interrupted one,
so a fit longer than a session loses nothing (commit ``DIR`` as it grows).

writes ``policies/profiles/pi05_like.json`` (the profile, with a ``fit`` record) and
``benchmarks/executor_fit.md`` (per task: target, clean success, fitted scale, fitted success);
``--backend robomme`` fits on the benchmark's own envs (its planner perturbed,
policies/official_faults.py) and writes ``pi05_like_official.json`` and ``executor_fit_official.md``.
Never fitted on test: the test split's success is the check (README, issue 36's must-show).
"""

from __future__ import annotations

import argparse
import hashlib
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
from experiments.loop.results import git_info  # noqa: E402
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


BACKEND_OUTPUT = {
    "robomem": ("pi05-like", PROFILE_DIR / "pi05_like.json", ROOT / "benchmarks" / "executor_fit.md"),
    "robomme": ("pi05-like-official", PROFILE_DIR / "pi05_like_official.json",
                ROOT / "benchmarks" / "executor_fit_official.md"),
}
"""Per backend the fit runs on: the profile's name, where it is written, where its table goes. The
official envs get a fit of their own: the benchmark's planner and its subgoal checker recover from a
failure differently (after a missed grasp it asks for the pick again), so the same rates give a
different ceiling there."""


def profile_for(scales: dict[str, float], fit: dict | None = None, name: str = "pi05-like") -> dict:
    """The profile JSON: every task's skills at its scale (0: clean)."""
    tasks = {t: {k: asdict(BASE[k].scaled(s)) for k in SKILLS} for t, s in scales.items() if s > 0}
    out = {"name": name, "skills": {}, "tasks": tasks}
    if fit is not None:
        out["fit"] = fit
    return out


def trial_dir(work: Path, scales: dict[str, float]) -> Path:
    """Where a trial's run lives under ``--work``: named by its scales, so the same trial (replayed
    after an interruption) finds its rows and a different one never mixes with them."""
    key = json.dumps(sorted((t, float(s)) for t, s in scales.items()))
    return work / ("clean" if not any(scales.values()) else "trial-" + hashlib.sha256(key.encode()).hexdigest()[:10])


def oracle_success(scales: dict[str, float], episodes: str, workers: int, seed: int,
                   backend: str = "robomem", work: Path | None = None) -> dict[str, float]:
    """Oracle success (%) per task on train ``episodes`` under the profile with these scales (the run
    in ``work``'s trial directory, resumed, when given; else in a temporary one)."""
    if work is None:
        with tempfile.TemporaryDirectory() as tmp:
            return _run_trial(scales, episodes, workers, seed, backend, Path(tmp))
    return _run_trial(scales, episodes, workers, seed, backend, trial_dir(work, scales))


def _run_trial(scales: dict[str, float], episodes: str, workers: int, seed: int, backend: str, where: Path) -> dict[str, float]:
    from experiments.loop.results import read_rows

    where.mkdir(parents=True, exist_ok=True)
    prof = where / "profile.json"
    prof.write_text(json.dumps(profile_for(scales), indent=1) + "\n")
    cmd = [sys.executable, "-m", "experiments.run", "--tasks", *scales, "--split", "train", "--episodes", episodes,
           "--conditions", "oracle", "--seeds", str(seed), "--executor-profile", str(prof),
           "--backend", backend, "--wandb", "disabled", "--workers", str(workers), "--out", str(where / "run")]
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    rows = read_rows(where / "run")
    out = {}
    for t in scales:
        mine = [r for r in rows if r["task"] == t]
        out[t] = 100.0 * sum(r["status"] == "success" for r in mine) / max(1, len(mine))
    return out


def fit(episodes: str, rounds: int, workers: int, seed: int, tasks: list[str],
        start: dict[str, float] | None = None, backend: str = "robomem", work: Path | None = None) -> dict:
    """Secant steps on log success: success falls about geometrically with the scale (each subgoal's
    failures are drawn independently), so ``ln success(s) ~ ln clean + slope * s``; each round runs
    every unfitted task at the scale this line, through its latest trial, says hits the target.
    ``start`` (an earlier fit's scales) is the first trial of each task instead of 1, so a refit on
    more episodes begins where the last one ended."""
    clean = oracle_success({t: 0.0 for t in tasks}, episodes, workers, seed, backend, work)
    print("clean:", clean, flush=True)
    succ = {t: {0.0: clean[t]} for t in tasks}
    scales = {t: 0.0 for t in tasks}
    todo = [t for t in tasks if clean[t] > ORACLE_SUBGOAL[t]]
    last = {t: 0.0 for t in tasks}
    for r in range(rounds):
        if not todo:
            break
        trial = {t: (_first_scale(t, start) if r == 0 else _next_scale(t, succ[t], _n(episodes))) for t in todo}
        got = oracle_success(trial, episodes, workers, seed, backend, work)
        print(f"round {r}:", {t: (round(trial[t], 3), got[t]) for t in trial}, flush=True)
        for t, s in trial.items():
            succ[t][s], last[t], scales[t] = got[t], s, s
        todo = [t for t in todo if abs(got[t] - ORACLE_SUBGOAL[t]) > 100.0 / _n(episodes) / 2 and trial[t] < S_MAX]
    fitted = {t: succ[t][scales[t]] for t in tasks}
    return {"scales": scales, "clean": clean, "fitted_success": fitted,
            "trials": {t: {str(k): v for k, v in succ[t].items()} for t in tasks}}


def _first_scale(task: str, start: dict[str, float] | None) -> float:
    """The first trial: the earlier fit's scale where it had one above 0, else the declared shape (1)."""
    s = (start or {}).get(task, 0.0)
    return float(s) if s > 0 else 1.0


def start_scales(path: Path) -> dict[str, float]:
    """The fitted scales an earlier run of this script recorded in its profile (``fit.scales``)."""
    try:
        record = json.loads(path.read_text())["fit"]["scales"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"--start {path}: not a profile this script wrote (no fit.scales): {exc}") from exc
    return {str(t): float(s) for t, s in record.items()}


def _n(episodes: str) -> int:
    a, b = (int(x) for x in episodes.split(":"))
    return b - a


def _next_scale(task: str, trials: dict[float, float], n: int) -> float:
    """The next scale to try: log success interpolated linearly in the scale between the two trials
    that bracket the target (the highest scale above it, the lowest at or below it), or, with no
    bracket yet, along the line from the clean run through the latest trial. A success of 0 counts as
    half an episode, so an overshoot still gives a finite slope."""
    target = ORACLE_SUBGOAL[task]
    floor = 100.0 / (2 * n)
    above = [s for s, v in trials.items() if v > target]
    below = [s for s, v in trials.items() if v <= target]
    if above and below and min(below) > max(above):
        a, b = max(above), min(below)
    else:
        a, b = 0.0, max(trials)
    la, lb = math.log(max(trials[a], floor)), math.log(max(trials[b], floor))
    if lb >= la:  # no measurable effect yet
        return min(S_MAX, 4 * max(b, 0.25))
    s = a + (math.log(target) - la) * (b - a) / (lb - la)
    return round(min(S_MAX, max(0.01, s)), 4)


def _shown(path: Path) -> Path:
    """``path`` as the command in the table shows it: relative to the checkout when inside it."""
    return path.relative_to(ROOT) if path.is_absolute() and path.is_relative_to(ROOT) else path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.fit_executor_profile", description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", default="0:12", help="train episodes to fit on (START:STOP)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--tasks", nargs="+", default=list(ALL_TASKS))
    ap.add_argument("--start", type=Path, default=None,
                    help="an earlier fit's profile JSON: its scales are the first trials (default: scale 1)")
    ap.add_argument("--backend", choices=tuple(BACKEND_OUTPUT), default="robomem",
                    help="the envs to fit on: ours, or the benchmark's own (its planner perturbed)")
    ap.add_argument("--work", type=Path, default=None,
                    help="keep each round's run here and resume from it (default: temporary directories)")
    ap.add_argument("--out", type=Path, default=None, help="default: the backend's profile (BACKEND_OUTPUT)")
    ap.add_argument("--table", type=Path, default=None, help="default: the backend's table (BACKEND_OUTPUT)")
    args = ap.parse_args(argv)
    name, default_out, default_table = BACKEND_OUTPUT[args.backend]
    args.out, args.table = args.out or default_out, args.table or default_table
    load0 = os.getloadavg()[0]
    start = start_scales(args.start) if args.start else None
    result = fit(args.episodes, args.rounds, args.workers, args.seed, args.tasks, start, args.backend, args.work)
    commit = git_info(ROOT).commit[:7]
    check = result["fitted_success"]
    record = {"backend": args.backend, "split": "train", "episodes": args.episodes, "seed": args.seed, "commit": commit,
              "start": {t: _first_scale(t, start) for t in args.tasks} if start else None,
              "target": {t: ORACLE_SUBGOAL[t] for t in args.tasks}, **result}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(profile_for(result["scales"], record, name), indent=1) + "\n")
    started = f" --start {_shown(args.start)}" if args.start else ""
    started += f" --backend {args.backend}" if args.backend != "robomem" else ""
    started += f" --work {_shown(args.work)}" if args.work else ""
    lines = [f"# The `{name}` executor profile's fit (train)", "",
             f"`python -m scripts.fit_executor_profile --episodes {args.episodes} --rounds {args.rounds}{started}` at {commit} "
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
