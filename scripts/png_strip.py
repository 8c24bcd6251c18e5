"""Save a strip of front-camera frames per task for checking a scene by eye.

The strip shows up to four conditioning-video frames (video tasks), the first live frame, and
frames at every subgoal change of an oracle rollout, left to right.

    python scripts/png_strip.py --tasks PickXtimes VideoUnmask --episode 3 --out docs/strips
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def strip(task: str, episode: int, max_live: int = 8) -> np.ndarray:
    from envs import episode_spec, make_env
    from policies.scripted import ScriptedPolicy

    env = make_env(task)
    obs, info = env.reset(options={"episode": episode_spec(task, episode)})
    frames = []
    video = info["video"]
    if len(video):
        idx = np.linspace(0, len(video) - 1, num=min(4, len(video))).astype(int)
        frames += [video.front[i] for i in idx]
    frames.append(obs["front_rgb"])
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
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for task in args.tasks or implemented_tasks():
        img = strip(task, args.episode)
        path = out / f"{task}_ep{args.episode}.png"
        imageio.imwrite(path, img)
        print(path)


if __name__ == "__main__":
    main()
