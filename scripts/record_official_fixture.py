"""Record a small fixture from the official RoboMME envs, for tests that run without the package.

Plays official test episodes with the benchmark's own oracle through ``envs.official.env`` and keeps,
per decision: the raw official info dict (JSON-safe), the multi_choice options, the oracle's subgoal
and option, the command the adapter built, the candidate points projected with the official camera,
the history slot's alternatives, the executed batch's clocks, joint states and captured actions, and
the first, middle and last front frames downsampled to 64x64. Output (about 100 KB per episode):
``tests/fixtures/official/<Task>_ep<i>.json`` + ``.npz``, plus that task's metadata record.

    PYTHONPATH=/path/to/robomme_src/src python scripts/record_official_fixture.py --tasks VideoUnmask VideoPlaceButton
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "official"
SIZE = 64


def jsonable(x):
    """Tensors/arrays to lists (large arrays summarised by shape), everything else to JSON types."""
    if hasattr(x, "cpu"):
        x = x.cpu().numpy()
    if isinstance(x, np.ndarray):
        return x.tolist() if x.size <= 16 else {"shape": list(x.shape), "dtype": str(x.dtype)}
    if isinstance(x, (np.integer, np.floating, np.bool_)):
        return x.item()
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    return repr(x)


def small(frame) -> np.ndarray:
    import cv2

    a = np.asarray(frame.cpu() if hasattr(frame, "cpu") else frame, dtype=np.uint8)
    return cv2.resize(a, (SIZE, SIZE), interpolation=cv2.INTER_AREA)


def batch_record(entry: dict, frames: dict, key: str) -> dict:
    obs = entry["obs"] or {}
    rgbs = obs.get("front_rgb_list", [])
    n = len(rgbs)
    picks = sorted({0, n // 2, n - 1}) if n else []
    for i in picks:
        frames[f"{key}_f{i}"] = small(rgbs[i])
    return {
        "kind": entry["kind"], "action": entry["action"], "n": n, "frame_indices": picks,
        "obs_keys": sorted(obs), "front_shape": list(np.asarray(rgbs[-1]).shape) if n else None,
        "joint_state": [np.asarray(q, dtype=np.float32).reshape(-1)[:7].round(5).tolist() for q in obs.get("joint_state_list", [])[-3:]],
        "actions_captured": len(entry["actions"]),
        "last_actions": [np.asarray(a).round(5).tolist() for a in entry["actions"][-3:]],
        "info": jsonable({k: v for k, v in (entry["info"] or {}).items() if k != "front_camera_intrinsic"}),
    }


def record(task: str, episode: int, split: str) -> None:
    from envs.official.env import OfficialSubgoalEnv
    from envs.official.episodes import metadata_dir, official_episode_spec

    spec = official_episode_spec(task, episode, split)
    env = OfficialSubgoalEnv(task, split=split, frame_stride=0, video_stride=1)
    env.raw_log = []
    obs, info = env.reset(options={"episode": spec})
    frames: dict[str, np.ndarray] = {}
    out = {"task": task, "split": split, "episode": episode, "spec": spec.to_dict(),
           "bridges": env.bridges.applied, "reset": batch_record(env.raw_log[-1], frames, "reset"),
           "video_len": len(info["video"]), "goal": info["goal"], "decisions": []}
    done = False
    while not done and len(out["decisions"]) < 40:
        oracle = env.oracle_subgoal()
        opts = env.options()
        slot = env.history_slot()
        d = {"oracle": oracle, "oracle_action": env.oracle_action(),
             "options": [{"label": o.get("label"), "action": o.get("action"), "need_parameter": "available" in o,
                          "points": env.candidate_points(o) if "available" in o else None} for o in opts],
             "slot": None if slot is None else {"name": slot.name, "alternatives": list(slot.alternatives)},
             "command": None if env.command(oracle) is None else env.command(oracle).to_action()}
        obs, _, term, trunc, info = env.step(oracle)
        d["result"] = batch_record(env.raw_log[-1], frames, f"d{len(out['decisions'])}")
        d["ours"] = {"status": info["status"], "steps": info["steps"], "clock": info["clock"],
                     "frame_clocks": [f.step for f in info["frames"]][-3:], "n_frames": len(info["frames"])}
        out["decisions"].append(d)
        done = term or trunc
    out["status"] = info["status"]
    meta = json.loads((metadata_dir() / split / f"record_dataset_{task}_metadata.json").read_text())
    out["metadata_record"] = next(r for r in meta["records"] if int(r["episode"]) == episode)
    OUT.mkdir(parents=True, exist_ok=True)
    stem = OUT / f"{task}_ep{episode}"
    stem.with_suffix(".json").write_text(json.dumps(out, indent=1) + "\n")
    np.savez_compressed(stem.with_suffix(".npz"), **frames)
    print(f"{task} ep{episode}: {out['status']} in {len(out['decisions'])} decisions -> {stem}.json/.npz")
    env.close()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=["VideoUnmask", "VideoPlaceButton"])
    ap.add_argument("--episode", type=int, default=0)
    ap.add_argument("--split", default="test")
    a = ap.parse_args(argv)
    for t in a.tasks:
        record(t, a.episode, a.split)


if __name__ == "__main__":
    main()
