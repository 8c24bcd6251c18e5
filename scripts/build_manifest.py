"""Regenerate the episode manifest: the retry offset r of every (task, split, episode).

The benchmark's generator draws seed = base + r for r = 0, 1, ... until its own oracle solves the
episode. We do the same with our scripted solvers: r is the first offset whose scene can be
sampled and demonstrated and whose oracle rollout succeeds, up to the split's maximum retry.

``envs/manifests/<split>.json`` maps ``{task: {episode: r}}`` for every episode that was checked
(``0`` included, so a checked episode is told apart from one never searched), and
``{"unsolved": {task: {episode: reason}}}`` for the episodes no offset solved: those keep the
first offset whose scene resets and stay in the set as honest oracle failures, with the reason.
An episode whose scene cannot be reset at any offset gets no entry; ``reset`` then raises an error
naming task, split, episode and why.

Several builders may run at once on different tasks: each one re-reads the file under a lock and
merges only its own entries before writing, after every episode, so an interrupted build keeps
what it found.

    python scripts/build_manifest.py --split val --tasks PickXtimes --episodes 0:50
"""

from __future__ import annotations

import argparse
import fcntl
import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

UNSOLVED = "unsolved"


@contextmanager
def _locked(path: Path):
    lock = path.with_suffix(".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def record(path: Path, task: str, episode: int, offset: int | None, unsolved_reason: str | None) -> None:
    """Merge one episode's result into the manifest file (under the lock)."""
    with _locked(path):
        manifest = json.loads(path.read_text()) if path.exists() else {}
        offsets = manifest.setdefault(task, {})
        unsolved = manifest.setdefault(UNSOLVED, {}).setdefault(task, {})
        key = str(episode)
        offsets.pop(key, None)
        unsolved.pop(key, None)
        if offset is not None:
            offsets[key] = offset
        if unsolved_reason is not None:
            unsolved[key] = unsolved_reason
        manifest[task] = dict(sorted(offsets.items(), key=lambda kv: int(kv[0])))
        manifest[UNSOLVED] = {t: dict(sorted(v.items(), key=lambda kv: int(kv[0])))
                              for t, v in sorted(manifest[UNSOLVED].items()) if v}
        ordered = {t: manifest[t] for t in sorted(k for k in manifest if k != UNSOLVED)}
        ordered[UNSOLVED] = manifest[UNSOLVED]
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(ordered, indent=1) + "\n")
        tmp.replace(path)


def search_episode(env, task: str, split: str, episode: int, max_retry: int):
    """(offset, unsolved reason, log lines) for one episode; offset None when no scene resets."""
    from envs.episodes import EpisodeSpec, base_seed, difficulty_for
    from envs.oracle_rollout import run_oracle

    first_resettable, reasons, lines = None, [], []
    for r in range(max_retry + 1):
        spec = EpisodeSpec(task, split, episode, base_seed(task, split, episode) + r, difficulty_for(episode, split, task))
        out = run_oracle(env, spec, retry=False)
        why = out.error or out.fail_reason or ""
        lines.append(f"{task} {split} ep{episode} r={r} {out.status} {out.wall_s:.1f}s {why}".rstrip())
        if out.status == "success":
            return r, None, lines
        if not out.reset_failed:
            first_resettable = r if first_resettable is None else first_resettable
        reasons.append(f"r={r}: {out.status} {why}".strip())
    if first_resettable is None:
        return None, None, lines
    return first_resettable, "; ".join(reasons)[:500], lines


def main() -> None:
    from envs import implemented_tasks, make_env
    from envs.episodes import MANIFEST_DIR, check_split
    from scripts.check_oracle import parse_range

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="test")
    ap.add_argument("--tasks", nargs="*", default=None, help="default: every implemented task")
    ap.add_argument("--episodes", default=None, help="range a:b or list; default: the whole split")
    ap.add_argument("--skip-checked", action="store_true", help="leave episodes the manifest already has alone")
    args = ap.parse_args()
    sp = check_split(args.split)
    episodes = parse_range(args.episodes) if args.episodes else list(range(sp.size))
    path = MANIFEST_DIR / f"{args.split}.json"
    for task in args.tasks or implemented_tasks():
        # the oracle reads no pixels of the demonstration: play its physics without rendering it
        env = make_env(task, video_stride=10**6)
        for ep in episodes:
            if args.skip_checked and path.exists():
                m = json.loads(path.read_text())
                if str(ep) in m.get(task, {}):
                    continue
            t0 = time.perf_counter()
            offset, reason, lines = search_episode(env, task, args.split, ep, sp.max_retry)
            print("\n".join(lines), flush=True)
            record(path, task, ep, offset, reason)
            print(f"{task} {args.split} ep{ep}: r={offset}{' UNSOLVED' if reason else ''} ({time.perf_counter() - t0:.1f}s)", flush=True)
        del env
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
