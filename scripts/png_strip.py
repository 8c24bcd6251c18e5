"""Save a strip of front-camera frames per task for checking a scene by eye.

The strip shows up to four conditioning-video frames (video tasks), the first live frame, and
frames at every subgoal change of an oracle rollout, left to right.

    python scripts/png_strip.py --tasks PickXtimes VideoUnmask --episode 3 --out benchmarks/strips
    python scripts/png_strip.py --split ood --highest-tier --max-live 0 --out benchmarks/strips_ood

``--highest-tier`` picks, per task, the first episode of its highest ood tier (``envs/ood.py``);
``--max-live 0`` stops after the first live frame (no oracle rollout: the scene as the policy
first sees it, and the video before it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def strip(task: str, episode: int, max_live: int = 8, split: str = "test") -> np.ndarray:
    from envs import episode_spec, make_env
    from policies.scripted import ScriptedPolicy

    env = make_env(task, video_stride=4)  # the strip shows four video frames: no need to render every one
    obs, info = env.reset(options={"episode": episode_spec(task, episode, split)})
    frames = []
    video = info["video"]
    if len(video):
        idx = np.linspace(0, len(video) - 1, num=min(4, len(video))).astype(int)
        frames += [video.front[i] for i in idx]
    frames.append(obs["front_rgb"])
    if max_live <= 0:
        return np.concatenate(frames, axis=1)
    pol = ScriptedPolicy(env)
    pol.reset(0)
    last = None
    done = False
    while not done:
        sg = env.oracle_subgoal()
        if sg != last and last is not None and len(frames) < 5 + max_live:
            frames.append(env.front_frame())
        last = sg
        for a in pol.infer({**obs, "subgoal": sg, "goal": info["goal"]}):
            obs, _, term, trunc, info = env.step(a)
            if term or trunc:
                done = True
                break
    frames.append(env.front_frame())
    return np.concatenate(frames, axis=1)


def main() -> None:
    import imageio.v2 as imageio

    from envs import implemented_tasks

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="*", default=None)
    ap.add_argument("--episode", type=int, default=3)
    ap.add_argument("--out", default="docs/strips")
    ap.add_argument("--split", default="test")
    ap.add_argument("--highest-tier", action="store_true", help="ood: each task's first episode of its highest tier")
    ap.add_argument("--max-live", type=int, default=8, help="live frames at subgoal changes (0: no rollout)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for task in args.tasks or implemented_tasks():
        episode = args.episode
        if args.highest_tier:
            from envs.ood import n_tiers

            episode = n_tiers(task) - 1
        img = strip(task, episode, args.max_live, args.split)
        path = out / (f"{task}_ep{episode}.png" if args.split == "test" else f"{task}_{args.split}_ep{episode}.png")
        imageio.imwrite(path, img)
        print(path)


if __name__ == "__main__":
    main()
