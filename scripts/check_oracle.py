"""Run oracle subgoals + scripted solvers on test episodes and print per-episode status.

    python scripts/check_oracle.py --task PickXtimes --episodes 0:20
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def parse_range(text: str) -> list[int]:
    if ":" in text:
        a, b = text.split(":")
        return list(range(int(a), int(b)))
    return [int(x) for x in text.split(",")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--task", required=True)
    ap.add_argument("--episodes", default="0:20")
    ap.add_argument("--split", default="test")
    args = ap.parse_args()
    from experiments.loop.oracle_rollout import oracle_success_rate

    outs = oracle_success_rate(args.task, parse_range(args.episodes), args.split)
    for o in outs:
        why = o.fail_reason or o.error or ""
        print(f"{o.spec.task} ep{o.spec.episode_idx:>2} {o.spec.difficulty:<6} seed {o.spec.env_seed} {o.status:<8} "
              f"steps {o.steps:>4} {o.wall_s:5.1f}s {why} {'; '.join(o.solver_failures)}")
    ok = sum(o.status == "success" for o in outs)
    print(f"{args.task}: oracle success {ok}/{len(outs)} = {ok / len(outs):.0%}")


if __name__ == "__main__":
    main()
