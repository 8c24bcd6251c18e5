"""What the memory arm costs beside the oracle arm, episode for episode, in one run.

The oracle arm is handed the history-dependent answers, so it renders nothing beyond what the
executor needs (the scripted executor needs no frame at all); the memory arm pays for every frame
its tools look at (the conditioning video at reset, the live frames of the render schedule) and
for its own work on them. This benchmark plays both arms on the same episodes, interleaved (oracle
then memory, episode by episode, so load that comes and goes hits both alike), and reports:

- **memory wall ÷ oracle wall** per task (the target: at most 2x on the quick preset's tasks);
- where the memory arm's extra time goes: the conditioning video (reset), live renders, the
  memory layer itself;
- **the memory's own CPU per episode**: thread CPU inside the layer's entry points
  (``memory.cpu_s`` of a row), apart from the renderer's threads and other processes.

Absolute seconds depend on the machine and its load (both are in the report); the ratios are the
result.

``--image-policy`` measures the research setting's cost instead: a learned low-level policy (π0.5)
reads the front and wrist views at every query, so both arms render those whatever the memory does.
The scripted executor still acts (it ignores the images); only what is rendered changes, through the
render schedule's own ``policy_images`` switch.

``--benchmark-video`` adds what the benchmark's own env does at every reset: it renders the whole
conditioning video, front and wrist at every recorded step, for whichever policy is evaluated
(RoboMME's ``DemonstrationWrapper`` returns it from ``reset()``), whether anything reads it or not.
Our env renders only the frames a consumer reads, so without the flag an arm that reads no video
pays nothing for it. With it both arms pay what the benchmark's env pays; the memory still reads
only the frames its tools declare (the extra renders are drawn and dropped, so its answers do not
change). The ratio then says what the memory adds to a benchmark episode, not what it adds to ours.
Usage::

    .venv/bin/python benchmarks/bench_memory_cost.py                  # quick preset: 16 tasks, episode 0
    .venv/bin/python benchmarks/bench_memory_cost.py --tasks PickXtimes MoveCube --episodes 0:2
    .venv/bin/python benchmarks/bench_memory_cost.py --image-policy --out benchmarks/memory_cost_image_policy.md
    .venv/bin/python benchmarks/bench_memory_cost.py --image-policy --benchmark-video --tasks PickXtimes VideoUnmaskSwap VideoPlaceOrder MoveCube --out benchmarks/memory_cost_benchmark_env.md
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_loop import _mean, machine_facts, play  # noqa: E402  (after the path insert)
from benchmarks.bench_loop import fmt as _f  # noqa: E402
from experiments.loop.results import git_info  # noqa: E402

#: The four tasks the issue quoted the ratio on (2.9x then); reported apart in the summary.
NAMED = ("PickXtimes", "VideoUnmaskSwap", "VideoPlaceOrder", "MoveCube")
TARGET = 2.0


def _commit() -> str:
    """The short commit, said to carry uncommitted changes where it does."""
    g = git_info(ROOT)
    if g.commit == "unknown":
        return g.commit
    return g.commit[:7] + (" (with uncommitted changes)" if g.dirty else "")


def _per_task(rows: list[dict], task: str) -> dict:
    o = [r for r in rows if r["task"] == task and r["condition"] == "oracle"]
    m = [r for r in rows if r["task"] == task and r["condition"] == "memory"]

    def t(rs, key):
        return _mean([r["timings"].get(key, 0.0) for r in rs])

    ow, mw = sum(r["wall_s"] for r in o), sum(r["wall_s"] for r in m)
    return {
        "task": task, "n": len(m), "oracle_wall": _mean([r["wall_s"] for r in o]), "memory_wall": _mean([r["wall_s"] for r in m]),
        "ratio": mw / ow if ow else float("nan"),
        "video_s": t(m, "reset_s") - t(o, "reset_s"), "renders": t(m, "renders"), "render_s": t(m, "render_s"),
        "memory_s": t(m, "memory_s"), "memory_cpu_s": _mean([r["memory"].get("cpu_s") for r in m]),
        "episode_cpu_memory": t(m, "cpu_s"), "episode_cpu_oracle": t(o, "cpu_s"),
        "success": (sum(r["success"] for r in o), sum(r["success"] for r in m)),
    }


def _policy_reads_images() -> None:
    """Make the run's low-level policy declare that it reads images (front and wrist at every query),
    as π0.5 does: the render schedule then draws those views for both arms. The scripted executor
    keeps acting from the simulator; nothing else about the episode changes."""
    import experiments.loop.unit as unit

    real = unit.build_policy
    unit.build_policy = lambda cfg, low: (real(cfg, low)[0], True)


def _env_renders_the_whole_video() -> None:
    """Make every arm's env render the conditioning video as the benchmark's env does: front and
    wrist at every recorded demonstration step. Frames no consumer reads are rendered and dropped
    (the same renderer calls, the cost the benchmark pays); what is recorded for the memory is
    unchanged."""
    from envs.robomme_env import RoboMMEEnv

    real = RoboMMEEnv._demo_step

    def demo_step(self, action, entry, video) -> None:
        real(self, action, entry, video)
        if not entry.record:
            return
        if self.task.clock % self._video_every != 0:
            self.front_frame()
            self.task.render_wrist()
        elif not self.wrist:
            self.task.render_wrist()

    RoboMMEEnv._demo_step = demo_step


def write_report(path: Path, argv: list[str], facts: dict, rows: list[dict], loads: list[float], started: str,
                 total_s: float, commit: str, image_policy: bool = False, benchmark_video: bool = False) -> str:
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    per = [_per_task(rows, t) for t in tasks]
    L = ["# Memory cost: the memory arm beside the oracle arm" + (", both reading images as π0.5 does" if image_policy else "")
         + (", both given the conditioning video as the benchmark's env renders it" if benchmark_video else "") + "\n",
         f"Generated by `benchmarks/bench_memory_cost.py {' '.join(argv)}`".rstrip() + f" at commit {commit} on {started} "
         f"({total_s / 60:.1f} min for the whole run). Both arms play the same episodes, interleaved, in one process; "
         "the ratios are the result, the seconds are for the record (they depend on the machine and its load).\n",
         "## Machine\n",
         f"- CPU: {facts['cpu_model']}, {facts['cpus']} logical CPUs visible, {facts['affinity']} usable by this process",
         f"- {facts['platform']}, Python {facts['python']}; rendering: SAPIEN on software Vulkan (CPU)",
         f"- 1-min load average {_f(min(loads), 1)} to {_f(max(loads), 1)} during the run (this benchmark alone keeps it "
         "near 1; the rest is other processes on the same CPUs)\n",
         "## Per task\n",
         "Mean seconds per episode. `video` = the memory arm's reset minus the oracle arm's (rendering the conditioning "
         "video the memory watches); `renders` = live frames the render schedule drew for the memory; `memory wall` / "
         "`memory CPU` = inside the memory layer (observe, revise, reset), wall clock and the calling thread's CPU.\n",
         "| task | episodes | oracle wall | memory wall | **memory ÷ oracle** | video | renders (s) | memory wall in layer | **memory CPU** | successes oracle / memory |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for p in per:
        L.append(f"| {p['task']} | {p['n']} | {_f(p['oracle_wall'], 1)} | {_f(p['memory_wall'], 1)} | **{_f(p['ratio'])}x** | "
                 f"{_f(p['video_s'], 1)} | {_f(p['renders'], 0)} ({_f(p['render_s'], 1)}) | {_f(p['memory_s'])} | "
                 f"**{_f(p['memory_cpu_s'])}** | {p['success'][0]} / {p['success'][1]} |")

    def pooled(group):
        o = sum(p["oracle_wall"] * p["n"] for p in group)
        m = sum(p["memory_wall"] * p["n"] for p in group)
        return m / o if o else float("nan")

    named = [p for p in per if p["task"] in NAMED]
    over = [p["task"] for p in per if p["ratio"] > TARGET]
    L += ["", "## Summary\n",
          f"- memory ÷ oracle wall, pooled over every task played: **{_f(pooled(per))}x**; over {', '.join(NAMED)} "
          f"(the tasks the target was first quoted on, 2.9x then): **{_f(pooled(named))}x**.",
          f"- target ≤ {TARGET:g}x on every task: **{'met' if not over else 'not met'}**"
          + (f" ({len(over)} of {len(per)} tasks above it: {', '.join(over)})." if over else "."),
          f"- the memory's own CPU per episode: **{_f(_mean([p['memory_cpu_s'] for p in per]))} s** on average over tasks "
          f"(range {_f(min(p['memory_cpu_s'] for p in per))} to {_f(max(p['memory_cpu_s'] for p in per))} s); the whole "
          f"memory episode's process CPU {_f(_mean([p['episode_cpu_memory'] for p in per]), 1)} s against the oracle "
          f"episode's {_f(_mean([p['episode_cpu_oracle'] for p in per]), 1)} s.",
          ("- both arms rendered the front and wrist views at every query, as an image policy (π0.5) reads them "
           "(`--image-policy`); the memory arm's extra work is its conditioning video, the live frames its tools look "
           "at between queries and the layer itself.\n" if image_policy else
           "- where the rest goes: the oracle arm draws no frame at all (the scripted executor needs none), so the "
           "memory arm's live renders and its conditioning video are extra work a pixel-reading memory cannot avoid "
           "here; with a learned low-level policy, which reads the views at every query, both arms pay for rendering "
           "(`--image-policy` measures that setting).\n"),
          ("- both arms' envs rendered the whole conditioning video, front and wrist at every recorded step, as the "
           "benchmark's env does at every reset whatever the policy reads (`--benchmark-video`); `video` above is then "
           "what the memory's reset costs beyond that (its tools' work at reset). The ratio is the memory's cost on top "
           "of a benchmark episode; in our env, where an arm that reads no video renders none, it is larger (the runs "
           "without the flag).\n" if benchmark_video else "")]
    text = "\n".join(L) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="+", default=None, help="default: every task (the quick preset's)")
    ap.add_argument("--episodes", default="0:1", help="episode indices, as for experiments.run (default 0:1)")
    ap.add_argument("--split", default="test")
    ap.add_argument("--out", default="benchmarks/memory_cost.md")
    ap.add_argument("--json", default=None, help="also dump the raw rows here")
    ap.add_argument("--image-policy", action="store_true",
                    help="both arms render the front and wrist views at every query, as an image policy (π0.5) reads them")
    ap.add_argument("--benchmark-video", action="store_true",
                    help="both arms' envs render the whole conditioning video (front and wrist, every recorded step), "
                         "as the benchmark's env does at every reset")
    args = ap.parse_args(argv)
    raw_argv = list(sys.argv[1:] if argv is None else argv)

    import envs
    from experiments.loop.config import ExperimentConfig
    from experiments.loop.executors import make_units

    if args.image_policy:
        _policy_reads_images()
    if args.benchmark_video:
        _env_renders_the_whole_video()
    tasks = tuple(args.tasks or envs.ALL_TASKS)
    for t in tasks:
        envs.check_task(t)  # an unknown name fails here, naming it
    started = time.strftime("%Y-%m-%d %H:%M %Z")
    t_start = time.perf_counter()
    cfg = ExperimentConfig.from_flat(tasks=tasks, episodes=(args.episodes,), split=args.split,
                                     conditions=("oracle", "memory"), out=Path(tempfile.mkdtemp(prefix="bench_cost_")),
                                     wandb="disabled")
    units = sorted(make_units(cfg), key=lambda u: (u.task, u.episode, u.condition != "oracle"))
    # warm up: compile the renderer's shaders once, before anything is timed
    play(next(u for u in units if u.condition == "memory"), cfg, "scheduled")
    loads = [os.getloadavg()[0]]
    rows = []
    for i, u in enumerate(units):
        r = play(u, cfg, "scheduled")
        rows.append(r.to_dict())
        loads.append(os.getloadavg()[0])
        print(f"[{i + 1}/{len(units)}] {u.task} ep{u.episode} {u.condition}: {r.status}, {r.wall_s:.1f} s", file=sys.stderr, flush=True)
    text = write_report(Path(args.out), raw_argv, machine_facts(), rows, loads, started, time.perf_counter() - t_start, _commit(),
                        image_policy=args.image_policy, benchmark_video=args.benchmark_video)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "loads": loads}, default=str))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
