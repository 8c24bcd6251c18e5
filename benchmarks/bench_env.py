"""Env speed benchmark: physics step, rendered front frame, and oracle episode wall time per task.

All numbers come from one run on one machine; the table also gives the render/physics ratio,
which is what transfers between machines.

    python benchmarks/bench_env.py --tasks PickXtimes --episodes 0:3 --out benchmarks/env_speed.md
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def bench_task(task: str, episodes: list[int], n_steps: int = 200, n_frames: int = 20) -> dict:
    from envs import make_env
    from envs.episodes import episode_spec
    from experiments.loop.oracle_rollout import run_oracle

    env = make_env(task)
    env.reset(options={"episode": episode_spec(task, episodes[0])})
    hold = env.unwrapped.qpos()[: env.action_space.shape[-1]]
    if hold.shape[0] == 8:
        hold[7] = 1.0
    t0 = time.perf_counter()
    for _ in range(n_steps):
        env.unwrapped.step(hold)  # the raw ManiSkill step: physics, scene scripts, checker
    physics_ms = (time.perf_counter() - t0) / n_steps * 1e3
    t0 = time.perf_counter()
    for _ in range(n_frames):
        env.front_frame()
    render_ms = (time.perf_counter() - t0) / n_frames * 1e3
    outs = [run_oracle(env, episode_spec(task, i)) for i in episodes]
    return {
        "task": task,
        "physics_ms": physics_ms,
        "render_ms": render_ms,
        "episode_s": float(np.mean([o.wall_s for o in outs])),
        "steps": float(np.mean([o.steps for o in outs])),
        "success": sum(o.status == "success" for o in outs) / len(outs),
    }


def main() -> None:
    from envs import implemented_tasks
    from scripts.check_oracle import parse_range

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="*", default=None)
    ap.add_argument("--episodes", default="0:3")
    ap.add_argument("--out", default="benchmarks/env_speed.md")
    args = ap.parse_args()
    rows = [bench_task(t, parse_range(args.episodes)) for t in (args.tasks or implemented_tasks())]
    lines = [
        "| task | physics ms/step | front render ms/frame | render / physics | oracle episode s (no per-step render) | policy steps | oracle success |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['task']} | {r['physics_ms']:.2f} | {r['render_ms']:.1f} | {r['render_ms'] / r['physics_ms']:.0f}x | "
                     f"{r['episode_s']:.2f} | {r['steps']:.0f} | {r['success']:.0%} |")
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"# Env speed (`python benchmarks/bench_env.py --episodes {args.episodes}`)\n\n" + text)


if __name__ == "__main__":
    main()
