"""Fit the best memoryless predictor's prior on train episodes (issue 37, the fair memoryless arm).

Two passes, both real episodes on the ``train`` split (never ``test``):

1. **Record.** Every episode is played with the oracle's subgoals while a
   :class:`policies.composers.PriorComposer` without a prior notes, at each history slot, what a
   memoryless predictor sees (the task, the slot's name, the number of alternatives, the goal's
   number: :func:`policies.slot_prior.slot_key`) and which alternative's position the oracle chose.
   The counts are the prior.
2. **Choose the mode.** The same episodes are played by the ``best-memoryless`` arm with the prior
   used both ways (``argmax``: always the most frequent position; ``matched``: drawn with the
   frequencies); each task keeps the mode with more successes (a tie keeps ``matched``).

    python -m scripts.fit_slot_prior --episodes 0:20 --seed 7

writes ``policies/priors/slot_prior.json`` (the prior, the modes and a ``fit`` record) and
``benchmarks/slot_prior_fit.md`` (per task: decisions recorded, successes of each mode, the mode kept).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envs.episodes import ALL_TASKS, episode_spec  # noqa: E402
from experiments.loop.results import git_info  # noqa: E402
from policies.slot_prior import DEFAULT_PATH, MODES, SlotPrior  # noqa: E402


def _play(task: str, episode: int, seed: int, cfg, prior: SlotPrior | None, mode: str | None):
    """One train episode with a PriorComposer (``prior=None``: the oracle's choices, recorded)."""
    from experiments.loop.episode import run_episode
    from experiments.loop.records import WorkUnit
    from experiments.loop.unit import build_parts
    from policies.composers import PriorComposer

    parts = build_parts(WorkUnit(task, "train", episode, "oracle", seed), cfg)
    parts = replace(parts, composer=PriorComposer(parts.composer.env, prior, mode),
                    condition="oracle" if prior is None else "best-memoryless")
    result = run_episode(episode_spec(task, episode, "train"), parts)
    return result, parts.composer.draws


def record(tasks, episodes, seed: int, cfg, log=print) -> tuple[SlotPrior, dict[str, int]]:
    prior, decisions = SlotPrior(), {}
    for task in tasks:
        decisions[task] = 0
        for ep in episodes:
            _, draws = _play(task, ep, seed, cfg, None, None)
            for d in draws:
                if d["chosen"] is not None:
                    prior.add(task, d["key"], d["n_options"], d["chosen"])
                    decisions[task] += 1
        log(f"recorded {task}: {decisions[task]} slot decisions on train {episodes[0]}..{episodes[-1]}")
    return prior, decisions


def choose_modes(prior: SlotPrior, tasks, episodes, seed: int, cfg, log=print) -> dict[str, dict[str, int]]:
    wins: dict[str, dict[str, int]] = {}
    for task in tasks:
        wins[task] = {m: sum(_play(task, ep, seed, cfg, prior, m)[0].success for ep in episodes) for m in MODES}
        prior.modes[task] = "argmax" if wins[task]["argmax"] > wins[task]["matched"] else "matched"
        log(f"{task}: argmax {wins[task]['argmax']}, matched {wins[task]['matched']} of {len(episodes)} -> {prior.modes[task]}")
    return wins


def report(prior: SlotPrior, decisions, wins, n: int, argv: list[str], commit: str, load: float) -> str:
    lines = ["# The best memoryless predictor's prior (train)\n",
             f"`python -m scripts.fit_slot_prior {' '.join(argv)}`".replace(" `", "`") + f" at {commit} (load average {load:.2f}). "
             "Per task: slot decisions recorded from the oracle's choices, then episodes won by the "
             "`best-memoryless` arm using the prior each way, on the same train episodes; the mode kept.\n",
             "| task | slot decisions | argmax | matched | mode kept |", "|---|---|---|---|---|"]
    for task in decisions:
        w = wins.get(task, {})
        lines.append(f"| {task} | {decisions[task]} | {w.get('argmax', '-')}/{n} | {w.get('matched', '-')}/{n} | {prior.modes.get(task, '-')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from experiments.loop.config import ExperimentConfig, parse_episodes

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="+", default=list(ALL_TASKS))
    ap.add_argument("--episodes", default="0:20", help="train episodes (default 0:20)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=DEFAULT_PATH)
    ap.add_argument("--report", type=Path, default=ROOT / "benchmarks" / "slot_prior_fit.md")
    args = ap.parse_args(argv)
    raw = list(sys.argv[1:] if argv is None else argv)
    episodes = list(parse_episodes(args.episodes, "train"))
    cfg = ExperimentConfig.from_flat(tasks=tuple(args.tasks), split="train", episodes=(args.episodes,),
                                     conditions=("oracle",), seeds=(args.seed,), wandb="disabled")
    t0 = time.perf_counter()
    commit = git_info(ROOT).commit[:7]
    prior, decisions = record(args.tasks, episodes, args.seed, cfg)
    wins = choose_modes(prior, args.tasks, episodes, args.seed, cfg)
    prior.fit = {"split": "train", "episodes": args.episodes, "seed": args.seed, "commit": commit,
                 "decisions": decisions, "wins": wins, "minutes": round((time.perf_counter() - t0) / 60, 1)}
    prior.save(args.out)
    args.report.write_text(report(prior, decisions, wins, len(episodes), raw, commit, os.getloadavg()[0]))
    print(f"wrote {args.out} and {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
