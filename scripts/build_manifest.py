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
    python scripts/build_manifest.py --split ood --episodes 0:10 --skip-checked --from-run runs/ood_0_10
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
    from experiments.loop.oracle_rollout import run_oracle

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


def solved_in_run(run_dir: str, task: str, split: str, episode: int) -> int | None:
    """The offset at which an ``oracle`` row of the run at ``run_dir`` solved this episode, if one did.

    A run's ``reset`` moves past offsets whose scene cannot be sampled or demonstrated, and its oracle
    arm plays the same scripted policy on the env's own subgoals, so a successful oracle row at offset
    r says what :func:`search_episode` would find; reading it saves replaying the rollout. Rows of a
    failed oracle are not evidence: those episodes are searched as usual."""
    from experiments.loop.results import read_rows

    for row in read_rows(run_dir, warn=False):
        if (row.get("condition"), row.get("task"), row.get("split"), row.get("episode")) == ("oracle", task, split, episode) \
                and row.get("status") == "success" and isinstance(row.get("retry_offset"), int):
            return int(row["retry_offset"])
    return None


def main() -> None:
    from envs import implemented_tasks, make_env
    from envs.episodes import MANIFEST_DIR, check_split
    from scripts.check_oracle import parse_range

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="test")
    ap.add_argument("--tasks", nargs="*", default=None, help="default: every implemented task")
    ap.add_argument("--episodes", default=None, help="range a:b or list; default: the whole split")
    ap.add_argument("--skip-checked", action="store_true", help="leave episodes the manifest already has alone")
    ap.add_argument("--from-run", default=None, help="a run directory whose successful oracle rows give offsets without replaying them")
    ap.add_argument("--reverse", action="store_true", help="tasks in reverse order (a second builder beside a first)")
    args = ap.parse_args()
    sp = check_split(args.split)
    episodes = parse_range(args.episodes) if args.episodes else list(range(sp.size))
    path = MANIFEST_DIR / f"{args.split}.json"
    tasks = list(args.tasks or implemented_tasks())
    for task in (tasks[::-1] if args.reverse else tasks):
        # the oracle reads no pixels of the demonstration: play its physics without rendering it
        env = make_env(task, video_stride=10**6)
        for ep in episodes:
            if args.skip_checked and path.exists():
                m = json.loads(path.read_text())
                if str(ep) in m.get(task, {}):
                    continue
            t0 = time.perf_counter()
            if args.from_run and (r := solved_in_run(args.from_run, task, args.split, ep)) is not None:
                record(path, task, ep, r, None)
                print(f"{task} {args.split} ep{ep}: r={r} (the oracle row of {args.from_run})", flush=True)
                continue
            offset, reason, lines = search_episode(env, task, args.split, ep, sp.max_retry)
            print("\n".join(lines), flush=True)
            record(path, task, ep, offset, reason)
            print(f"{task} {args.split} ep{ep}: r={offset}{' UNSOLVED' if reason else ''} ({time.perf_counter() - t0:.1f}s)", flush=True)
        del env
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
