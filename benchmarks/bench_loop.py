"""Loop benchmark: where an episode's time goes, what the render schedule saves, how runs scale.

Everything is measured in ONE run on one machine and reported as ratios, which transfer between
machines far better than seconds (the absolute times are in the table too, for the record):

1. memory layer (observe + revise) / the env loop at the same render schedule, per episode;
2. episode wall time with every step rendered (and the conditioning video, and every query view)
   / with the render schedule (``experiments/loop/render_schedule.py``), and the schedule against the
   harness as it was before it (``legacy``: memory conditions every ``--render-stride`` steps,
   the conditioning video always rendered);
3. throughput (episodes per second) of the harness's ``LocalExecutor`` with 1 vs 2 worker
   processes on the same units, each in a fresh process and a fresh output directory;
4. time per memory tool per episode (observe / gate / re-ground), and a micro-benchmark of the
   colour predicate the tools spend it in, against an OpenCV version (the plan).

    .venv/bin/python benchmarks/bench_loop.py                      # PickXtimes episodes 0-2
    .venv/bin/python benchmarks/bench_loop.py --tasks PickXtimes VideoUnmask --out benchmarks/loop.md

Every mode of an episode is played right after the others (interleaved), so load that comes and
goes on a shared machine hits all modes alike. The outcome (status, steps, subgoal trace) of every
mode is compared with the scheduled one and reported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODES = ("scheduled", "legacy", "full")


# --------------------------------------------------------------------------- playing one episode
def _execution(env):
    from wrappers.subgoal_execution import SubgoalExecution

    e = env
    while not isinstance(e, SubgoalExecution):
        e = e.env
    return e


def play(unit, cfg, mode: str):
    """Play ``unit`` with the harness's parts, its render schedule replaced according to ``mode``."""
    from envs.episodes import episode_spec
    from experiments.loop.conditions import condition_from_name
    from experiments.loop.episode import run_episode
    from experiments.loop.unit import build_parts

    parts = build_parts(unit, cfg)
    ex = _execution(parts.env)
    cond = condition_from_name(unit.condition)
    uses_memory = cond.memory or cond.recent_window is not None
    if mode == "legacy":  # the harness before the render schedule
        ex.frame_stride = cfg.render.render_stride if uses_memory else 0
        ex.early_stride = ex.early_until = 0
        ex.render_query = uses_memory or cfg.composer.kind == "vlm"
        ex.low.video_stride = 1
    elif mode == "full":  # no schedule at all: every step, every query, the whole video
        ex.frame_stride, ex.early_stride, ex.early_until, ex.render_query = 1, 0, 0, True
        ex.low.video_stride = 1
    elif mode != "scheduled":
        raise ValueError(f"unknown mode {mode!r}")
    cpu0 = _cpu()
    r = run_episode(episode_spec(unit.task, unit.episode, unit.split), parts)
    r.timings["cpu_s"] = _cpu() - cpu0
    return r


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def _outcome(r) -> tuple:
    return (r.status, r.steps, [(s["step"], s["executed"]) for s in r.subgoals])


# --------------------------------------------------------------------------- throughput (child process)
def throughput_child(args) -> None:
    from experiments.loop.config import ExperimentConfig
    from experiments.loop.executors import LocalExecutor, make_units
    from experiments.loop.results import ResultsWriter

    t0 = time.perf_counter()
    cfg = ExperimentConfig.from_flat(tasks=tuple(args.tasks), episodes=(args.episodes,), conditions=tuple(args.conditions),
                                     out=Path(args.child_out), workers=args.workers, wandb="disabled")
    units = make_units(cfg)
    walls = []
    with ResultsWriter(cfg.execution.out) as w:
        def on_result(r):
            w.write(r)
            walls.append(r.wall_s)

        LocalExecutor(args.workers).run(units, cfg, on_result)
    elapsed = time.perf_counter() - t0
    print(json.dumps({"workers": args.workers, "n": len(units), "elapsed_s": elapsed, "episode_wall_s": walls,
                      "load_end": os.getloadavg()[0]}))


def throughput(args, workers: int) -> dict:
    out = tempfile.mkdtemp(prefix=f"bench_loop_w{workers}_")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--throughput-child", "--workers", str(workers),
           "--child-out", out, "--episodes", args.episodes, "--tasks", *(args.workers_tasks or args.tasks[:1]),
           "--conditions", *args.conditions]
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"throughput child (workers={workers}) failed:\n{p.stderr[-3000:]}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res.update(process_s=time.perf_counter() - t0, load_start=load0, out=out,
               tasks=list(args.workers_tasks or args.tasks[:1]), episodes=args.episodes, conditions=list(args.conditions))
    return res


# --------------------------------------------------------------------------- the plan: colour predicate cost
def colour_microbench(frame, reps: int = 30) -> dict:
    import cv2
    import numpy as np

    from memory.perception.blobs import find_blobs, hsv

    def timeit(fn):
        fn()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        return (time.perf_counter() - t0) / reps * 1e3

    def cv_blobs():
        h = cv2.cvtColor(frame, cv2.COLOR_RGB2HSV_FULL)  # hue 0..255 over 360 degrees
        lo, hi = int(80 / 360 * 256), int(165 / 360 * 256)
        mask = ((h[..., 0] >= lo) & (h[..., 0] < hi) & (h[..., 1] >= int(0.7 * 255)) & (h[..., 2] >= 50)).astype(np.uint8)
        return cv2.connectedComponentsWithStats(mask, connectivity=8)

    return {
        "hsv_numpy_ms": timeit(lambda: hsv(frame)),
        "find_blobs_1_colour_ms": timeit(lambda: find_blobs(frame, ["green"])),
        "opencv_hsv_mask_components_ms": timeit(cv_blobs),
    }


# --------------------------------------------------------------------------- report
def _mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else float("nan")


def _ratio(by, keys, mode: str) -> float:
    """Summed wall time of ``mode`` / of ``scheduled`` over the episodes both were played on."""
    both = [k for k in keys if mode in by[k] and "scheduled" in by[k]]
    if not both:
        return float("nan")
    return sum(by[k][mode].wall_s for k in both) / sum(by[k]["scheduled"].wall_s for k in both)


def machine_facts() -> dict:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)), "cpu_model": model,
            "python": platform.python_version(), "platform": platform.platform()}


def fmt(x, nd=2):
    return "-" if x != x else f"{x:.{nd}f}"  # NaN -> "-"


def write_report(path: Path, args, facts, rows, thr, micro, loads, started, total_s) -> str:
    by = defaultdict(dict)  # (task, episode, condition) -> mode -> result
    for mode, r in rows:
        by[(r.task, r.episode, r.condition)][mode] = r
    conds = list(dict.fromkeys(r.condition for _, r in rows))
    L = []
    L.append("# Loop benchmark: render schedule, memory cost, workers\n")
    L.append(f"Generated by `benchmarks/bench_loop.py {' '.join(args.argv)}`".rstrip() + f" on {started} "
             f"({total_s / 60:.1f} min for the whole run). Ratios are measured within this one run; the "
             "absolute seconds are for the record only (they depend on the machine and its load).\n")
    L.append("## Machine\n")
    L.append(f"- CPU: {facts['cpu_model']}, {facts['cpus']} logical CPUs visible, {facts['affinity']} usable by this process")
    L.append(f"- {facts['platform']}, Python {facts['python']}; rendering: SAPIEN on software Vulkan (CPU)")
    L.append(f"- other load: 1-min load average {fmt(min(loads), 1)} to {fmt(max(loads), 1)} during the run "
             f"(this benchmark alone keeps it near 1; the rest is other processes sharing the {facts['affinity']} CPUs)")
    sched = [r for m, r in rows if m == "scheduled"]
    share = sum(r.timings.get("cpu_s", 0) for r in sched) / max(1e-9, sum(r.wall_s for r in sched))
    L.append(f"- CPU share this process got while playing scheduled episodes: {share:.2f} CPU-seconds per wall second\n")

    # 1. outcomes and the render schedule
    L.append("## 1. Render schedule: wall time and outcomes\n")
    L.append("Per condition, mean over episodes. `full`: every env step rendered, the current view at every "
             "query and every frame of the conditioning video; `legacy`: the harness before the schedule; "
             "`scheduled`: now. Renders are frames requested by the subgoal wrapper (not counting the reset frame, "
             "the oracle's segmentation frames or the video).\n")
    L.append("| condition | episodes | renders full / legacy / sched | wall s full / legacy / sched | **full / sched** | **legacy / sched** | same outcome legacy, full |")
    L.append("|---|---|---|---|---|---|---|")
    tot = {m: 0.0 for m in MODES}
    for c in conds:
        keys = [k for k in by if k[2] == c]
        eps = ", ".join(f"{k[0]} {k[1]}" for k in keys)
        walls = {m: [by[k][m].wall_s for k in keys if m in by[k]] for m in MODES}
        rend = {m: _mean([by[k][m].timings.get("renders") for k in keys if m in by[k]]) for m in MODES}
        for m in MODES:
            tot[m] += sum(walls[m])
        same = {m: (sum(_outcome(by[k][m]) == _outcome(by[k]["scheduled"]) for k in keys if m in by[k]),
                    sum(m in by[k] for k in keys)) for m in ("legacy", "full")}
        L.append(
            f"| {c} | {eps} | {fmt(rend['full'], 0)} / {fmt(rend['legacy'], 0)} / {fmt(rend['scheduled'], 0)} | "
            f"{fmt(_mean(walls['full']), 1)} / {fmt(_mean(walls['legacy']), 1)} / {fmt(_mean(walls['scheduled']), 1)} | "
            f"**{fmt(_ratio(by, keys, 'full'))}x** | **{fmt(_ratio(by, keys, 'legacy'))}x** | "
            f"{same['legacy'][0]}/{same['legacy'][1]}, {same['full'][0]}/{same['full'][1]} |"
        )
    allk = list(by)
    L.append(f"| **all (quick-style: every condition, these episodes)** | | | {fmt(tot['full'], 0)} / {fmt(tot['legacy'], 0)} / "
             f"{fmt(tot['scheduled'], 0)} (sums) | **{fmt(_ratio(by, allk, 'full'))}x** | **{fmt(_ratio(by, allk, 'legacy'))}x** | |\n")
    L.append("Ratios compare the same episodes only (a mode played on fewer episodes, e.g. with `--full-episodes`, "
             "is compared on those).\n")
    L.append("Rendering never changes the simulation (`tests/test_render_schedule.py`), so the oracle and "
             "no-memory outcomes must match in every mode. A memory episode may legitimately differ under "
             "`full`: its tools then see every frame instead of every 4th (memory outcomes at render stride 2 "
             "and 4 are the same on PickXtimes 0-1: `test_memory_outcomes_same_at_render_stride_2_and_4`).\n")

    # 2. where the time goes
    L.append("## 2. Where an episode's time goes (scheduled)\n")
    L.append("Mean seconds per episode. `env loop` = physics (`env_s`) + rendering (`render_s`) + policy (`policy_s`), "
             "all measured by the subgoal wrapper; `memory` = inside the memory layer (observe + revise + the "
             "reset with the video); `other` = wall minus those (env reset and scene build, the oracle's "
             "segmentation frames, composer, audit).\n")
    L.append("| condition | wall | reset | physics | render | policy | memory | other | **memory / env loop** | memory / physics |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    mem_ratio = None
    for c in conds:
        rs = [by[k]["scheduled"] for k in by if k[2] == c]
        t = {key: _mean([r.timings.get(key, 0.0) for r in rs]) for key in ("reset_s", "env_s", "render_s", "policy_s", "memory_s")}
        wall = _mean([r.wall_s for r in rs])
        loop = t["env_s"] + t["render_s"] + t["policy_s"]
        other = wall - loop - t["reset_s"] - t["memory_s"]
        ratio = t["memory_s"] / loop if loop else float("nan")
        if any("memory_s" in r.timings for r in rs):
            mem_ratio = ratio if mem_ratio is None else max(mem_ratio, ratio)
        L.append(f"| {c} | {fmt(wall, 1)} | {fmt(t['reset_s'])} | {fmt(t['env_s'])} | {fmt(t['render_s'])} | {fmt(t['policy_s'])} | "
                 f"{fmt(t['memory_s'])} | {fmt(other)} | **{fmt(100 * ratio, 1)} %** | {fmt(100 * t['memory_s'] / t['env_s'], 0) if t['env_s'] else '-'} % |")
    L.append("")
    rend = [r for r in sched if r.timings.get("renders")]
    if rend:
        per_frame = sum(r.timings["render_s"] for r in rend) / sum(r.timings["renders"] for r in rend)
        per_step = sum(r.timings["env_s"] for r in sched) / max(1, sum(r.steps for r in sched))
        L.append(f"One rendered front frame costs {per_frame * 1e3:.0f} ms = **{per_frame / per_step:.0f} physics steps** "
                 f"({per_step * 1e3:.1f} ms each) on this machine.\n")

    # 3. memory tools
    mem_rows = [r for r in sched if r.memory.get("tool_time_s")]
    if mem_rows:
        L.append("## 3. Time per memory tool per episode (scheduled memory episodes)\n")
        L.append("Mean seconds per episode (cf. SimpleARM's 2.02 s/episode breakdown); tools that never ran on these "
                 "episodes show zeros.\n")
        L.append("| part | observe | gate | re-ground | total | share of memory |")
        L.append("|---|---|---|---|---|---|")
        mem_total = _mean([r.timings.get("memory_s", 0.0) for r in mem_rows])
        tools = list(dict.fromkeys(n for r in mem_rows for n in r.memory["tool_time_s"]))
        tool_sum = 0.0
        for n in tools:
            d = {k: _mean([r.memory["tool_time_s"].get(n, {}).get(k, 0.0) for r in mem_rows]) for k in ("observe_s", "gate_s", "reground_s", "reset_s")}
            total = sum(d.values())
            tool_sum += total
            L.append(f"| tool `{n}` | {fmt(d['observe_s'], 3)} | {fmt(d['gate_s'], 3)} | {fmt(d['reground_s'], 3)} | {fmt(total, 3)} | {fmt(100 * total / mem_total, 0)} % |")
        L.append(f"| layer: access, store, bookkeeping | | | | {fmt(mem_total - tool_sum, 3)} | {fmt(100 * (mem_total - tool_sum) / mem_total, 0)} % |")
        L.append(f"| **memory layer total** | | | | **{fmt(mem_total, 3)}** | 100 % |\n")
        if micro:
            L.append("Where the tools spend it: both pixel tools call `find_blobs`, which converts the whole 256x256 frame "
                     "to HSV in float32 numpy once per colour and per tool, then labels it with scipy. On one rendered frame:\n")
            L.append("| operation | ms per frame |")
            L.append("|---|---|")
            L.append(f"| `hsv()` (numpy float32) | {fmt(micro['hsv_numpy_ms'])} |")
            L.append(f"| `find_blobs(frame, ['green'])` (hsv + mask + scipy label/sum/centre) | {fmt(micro['find_blobs_1_colour_ms'])} |")
            L.append(f"| OpenCV: `cvtColor(RGB2HSV_FULL)` + mask + `connectedComponentsWithStats` | {fmt(micro['opencv_hsv_mask_components_ms'])} |")
            L.append(f"| **ratio** | **{fmt(micro['find_blobs_1_colour_ms'] / micro['opencv_hsv_mask_components_ms'], 0)}x** |\n")

    # 4. workers
    if thr:
        w1, w2 = thr.get(1), thr.get(2)
        L.append("## 4. Throughput: 1 vs 2 worker processes (LocalExecutor, same units, fresh output dirs)\n")
        ref = w1 or w2
        L.append(f"Units: {' '.join(ref['tasks'])}, episodes {ref['episodes']}, conditions {' '.join(ref['conditions'])}. "
                 "Each executor runs in a fresh process, so both pay the env build and shader compilation "
                 "(workers=2 pays it in each of its two workers).\n")
        L.append("| workers | episodes | elapsed s | episodes / s | mean episode wall s | load avg start → end |")
        L.append("|---|---|---|---|---|---|")
        for w in (w1, w2):
            if w:
                L.append(f"| {w['workers']} | {w['n']} | {fmt(w['elapsed_s'], 1)} | {w['n'] / w['elapsed_s']:.4f} | "
                         f"{fmt(_mean(w['episode_wall_s']), 1)} | {fmt(w['load_start'], 1)} → {fmt(w['load_end'], 1)} |")
        if w1 and w2:
            speed = w1["elapsed_s"] / w2["elapsed_s"]
            slow = _mean(w2["episode_wall_s"]) / _mean(w1["episode_wall_s"])
            L.append(f"\n**Speed-up 1 → 2 workers: {speed:.2f}x** (target ≥ 1.8x). Each episode ran {slow:.2f}x slower with two "
                     f"workers than with one: with {facts['affinity']} CPUs shared by other processes (load average "
                     f"above), two workers do not get two free CPUs, and the software renderer itself is multi-threaded.\n")

    # targets
    L.append("## Targets\n")
    if mem_ratio is not None:
        verdict = "met" if mem_ratio <= 0.10 else "not met"
        L.append(f"- memory CPU ≤ 10 % of the env loop: **{verdict}** ({100 * mem_ratio:.1f} % in the worst condition). "
                 + ("" if verdict == "met" else "The profile above says where it goes: the colour predicate, run on every "
                    "rendered frame by two tools. Plan: one HSV/blob pass per frame shared by all tools (a per-frame cache "
                    "keyed by the frame's step), computed with OpenCV on uint8 (the micro-benchmark's ratio), which "
                    "brings the tools well under 10 %; that change lives in `memory/tools/` (not in this change)."))
    if thr and thr.get(1) and thr.get(2):
        speed = thr[1]["elapsed_s"] / thr[2]["elapsed_s"]
        L.append(f"- 1 → 2 workers ≥ 1.8x: **{'met' if speed >= 1.8 else 'not met'}** ({speed:.2f}x; reason above).")
    allk = list(by)
    L.append(f"- quick-style wall time (every condition on these episodes): before the schedule {fmt(tot['legacy'], 0)} s, "
             f"with it {fmt(tot['scheduled'], 0)} s (**{fmt(_ratio(by, allk, 'legacy'))}x**); with every step rendered "
             f"{fmt(_ratio(by, allk, 'full'))}x the scheduled time on the episodes played that way.\n")
    text = "\n".join(L) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return text


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="+", default=["PickXtimes"])
    ap.add_argument("--episodes", default="0:3", help="episode indices, as for experiments.run (default 0:3)")
    ap.add_argument("--conditions", nargs="+", default=["oracle", "no-memory", "memory"])
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    ap.add_argument("--full-episodes", default=None, help="play the `full` mode only on these episodes (default: all)")
    ap.add_argument("--no-workers", action="store_true", help="skip the 1 vs 2 workers measurement")
    ap.add_argument("--workers-tasks", nargs="+", default=None,
                    help="tasks of the 1 vs 2 workers measurement (default: the first of --tasks)")
    ap.add_argument("--out", default="benchmarks/loop.md")
    ap.add_argument("--json", default=None, help="also dump the raw rows here (default: <tmp>/bench_loop_rows.json)")
    # internal: one throughput measurement in a fresh process
    ap.add_argument("--throughput-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--child-out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.throughput_child:
        throughput_child(args)
        return 0

    import envs
    from experiments.loop.config import ExperimentConfig, parse_episodes
    from experiments.loop.executors import make_units

    tasks = []
    for t in args.tasks:
        try:
            envs.task_class(t)
            tasks.append(t)
        except Exception as e:  # noqa: BLE001 - tasks being written elsewhere may not import yet
            print(f"skipping {t}: {type(e).__name__}: {e}", file=sys.stderr)
    args.tasks = tasks
    started = time.strftime("%Y-%m-%d %H:%M %Z")
    t_start = time.perf_counter()
    loads = [os.getloadavg()[0]]
    cfg = ExperimentConfig.from_flat(tasks=tuple(tasks), episodes=(args.episodes,), conditions=tuple(args.conditions),
                                     out=Path(tempfile.mkdtemp(prefix="bench_loop_")), wandb="disabled")
    units = make_units(cfg)
    full_eps = set(parse_episodes(args.full_episodes)) if args.full_episodes else None

    # warm up: build every task's env and compile the shaders before anything is timed
    for t in tasks:
        u = next(u for u in units if u.task == t)
        play(u, cfg, "scheduled")
        print(f"warmed up {t}", file=sys.stderr, flush=True)

    rows = []
    for i, u in enumerate(units):
        for mode in args.modes:
            if mode == "full" and full_eps is not None and u.episode not in full_eps:
                continue
            r = play(u, cfg, mode)
            rows.append((mode, r))
            loads.append(os.getloadavg()[0])
            print(f"[{i + 1}/{len(units)}] {u.task} ep{u.episode} {u.condition} {mode}: {r.status} {r.steps} steps, "
                  f"{r.wall_s:.1f} s, {r.timings.get('renders', 0):.0f} renders", file=sys.stderr, flush=True)

    micro = None
    try:
        from envs import make_env
        from envs.episodes import episode_spec

        env = make_env(tasks[0])
        env.reset(options={"episode": episode_spec(tasks[0], 0)})
        micro = colour_microbench(env.front_frame())
    except Exception as e:  # noqa: BLE001 - the micro-benchmark is a footnote
        print(f"colour micro-benchmark skipped: {e!r}", file=sys.stderr)

    thr = {}
    if not args.no_workers:
        for w in (1, 2):
            thr[w] = throughput(args, w)
            loads += [thr[w]["load_start"], thr[w]["load_end"]]
            print(f"workers={w}: {thr[w]['n']} episodes in {thr[w]['elapsed_s']:.1f} s", file=sys.stderr, flush=True)

    total = time.perf_counter() - t_start
    text = write_report(Path(args.out), args, machine_facts(), rows, thr, micro, loads, started, total)
    dump = Path(args.json) if args.json else Path(tempfile.gettempdir()) / "bench_loop_rows.json"
    dump.write_text(json.dumps({"rows": [{"mode": m, **r.to_dict()} for m, r in rows], "throughput": thr, "micro": micro,
                                "loads": loads}, default=str))
    print(text)
    print(f"wrote {args.out} (raw rows: {dump})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
