"""Regenerate the episode manifest: the retry offset r of every (task, split, episode).

The benchmark's generator draws seed = base + r for r = 0, 1, ... until its own oracle solves the
episode. We do the same with our scripted solvers: r is the first offset whose scene can be
sampled and whose oracle rollout succeeds (up to the split's maximum; if none does, r = 0 and the
episode stays in the set as an honest oracle failure). Results are written to
``envs/manifests/<split>.json`` as ``{task: {episode: r}}`` (only non-zero offsets are stored).

    python scripts/build_manifest.py --split test --tasks PickXtimes --episodes 0:50
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    from envs import implemented_tasks, make_env
    from envs.episodes import MANIFEST_DIR, base_seed, check_split, difficulty_for, EpisodeSpec
    from envs.oracle_rollout import run_oracle
    from scripts.check_oracle import parse_range

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="test")
    ap.add_argument("--tasks", nargs="*", default=None, help="default: every implemented task")
    ap.add_argument("--episodes", default=None, help="range a:b or list; default: the whole split")
    args = ap.parse_args()
    sp = check_split(args.split)
    episodes = parse_range(args.episodes) if args.episodes else list(range(sp.size))
    path = MANIFEST_DIR / f"{args.split}.json"
    manifest = json.loads(path.read_text()) if path.exists() else {}
    for task in args.tasks or implemented_tasks():
        env = make_env(task)
        offsets = manifest.setdefault(task, {})
        for ep in episodes:
            chosen = 0
            for r in range(sp.max_retry + 1):
                spec = EpisodeSpec(task, args.split, ep, base_seed(task, args.split, ep) + r, difficulty_for(ep))
                out = run_oracle(env, spec)
                print(f"{task} ep{ep} r={r} {out.status} {out.error or out.fail_reason or ''}", flush=True)
                if out.status == "success":
                    chosen = r
                    break
            if chosen:
                offsets[str(ep)] = chosen
            else:
                offsets.pop(str(ep), None)
        manifest[task] = dict(sorted(offsets.items(), key=lambda kv: int(kv[0])))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        del env
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
