"""Render level of detail benchmark: CPU frame cost, pixel fidelity, quick-preset wall time, workers.

    .venv/bin/python benchmarks/bench_render.py --out benchmarks/render.md

In one run:

1. per task scene, full vs simplified meshes (``render_lod``), one process per level rendering
   every task (a process that has loaded the full meshes renders the simplified scene more slowly): the
   median ms of ``render_front()`` over ``--frames`` frames after a warm-up, the scene's visual
   triangles, and the front frames at ``--poses`` arm poses reached by one fixed action sequence
   (the same physics with both levels: the joint states are compared too);
2. pixel difference of those front frames (mean absolute difference, max abs difference, PSNR)
   per task and over all, and a PNG pair (full | simplified | 4x difference) per task;
3. the ``quick`` preset (``python -m experiments.run --preset quick``) with both levels: wall
   time per arm (condition) from each row's ``wall_s``, total wall time, every episode's outcome
   compared between the levels, then the simplified level again with ``--workers 2`` (episodes
   per second for 1 and 2 workers with the load average beside them).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# row fields that are timings or bookkeeping, not outcomes
_NOT_OUTCOME = ("wall", "time", "started", "finished", "pid", "host", "worker", "git", "versions", "_s", "timestamp", "stream")


# --------------------------------------------------------------------------- frame child process
def frame_child(tasks: list[str], lod: str, frames: int, poses: int, out: str) -> None:
    for task in tasks:
        _frame_task(task, lod, frames, poses, f"{out}/{task}_{lod}.npz")


def _frame_task(task: str, lod: str, frames: int, poses: int, out: str) -> None:
    import envs
    from envs.core.render_lod import visual_triangles
    from envs.episodes import episode_spec

    build_t0 = time.perf_counter()
    env = envs.task_class(task)(render_lod=lod)
    env.reset(options={"episode": episode_spec(task, 0)})
    build_s = time.perf_counter() - build_t0
    tris = visual_triangles(env.scene)
    for _ in range(3):
        env.render_front()
    ts = []
    for _ in range(frames):
        t = time.perf_counter()
        env.render_front()
        ts.append(time.perf_counter() - t)
    # one fixed action sequence: joint targets swept from the rest pose (the same with both levels)
    q0 = env.qpos()
    n = env.action_space.shape[0]
    imgs, qs = [env.render_front()["rgb"]], [env.qpos()]
    for k in range(1, poses):
        target = np.zeros(n, np.float32)
        target[: min(7, n)] = q0[: min(7, n)]
        # reach forward over the table (shoulder and elbow unfold) while sweeping sideways, so the
        # arm, the hand and the wrist camera come into the front view
        a = k / (poses - 1)
        target[0] += 0.35 * np.sin(1.3 * k)
        target[1] += 1.0 * a
        target[3] += 0.3 * a
        target[5] += 0.6 * a
        if n > 7:
            target[7:] = 0.04 if k % 2 else 0.0
        for _ in range(25):
            env.step(target)
        imgs.append(env.render_front()["rgb"])
        qs.append(env.qpos())
    np.savez_compressed(out, imgs=np.stack(imgs), qpos=np.stack(qs), ms=np.array(ts) * 1e3, build_s=build_s,
                        tris=json.dumps(tris), load=os.getloadavg()[0], overhead=json.dumps(overhead(env, frames)))
    env.close()


def _median_ms(fn, frames: int) -> float:
    for _ in range(2):
        fn()
    ts = []
    for _ in range(frames):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts) * 1e3)


def overhead(env, frames: int) -> dict:
    """Where a front frame's time goes: the render pass vs the copy back to numpy, and what the
    frame costs with parts of the scene hidden (render visibility only; restored afterwards)."""
    import sapien

    cam = env._sensors["base_camera"]
    out = {"render_front": _median_ms(env.render_front, frames)}
    out["take_picture"] = _median_ms(cam.capture, frames)
    cam.capture()
    out["copy_to_numpy"] = _median_ms(lambda: cam.get_obs(rgb=True, depth=False, position=False, segmentation=False)["rgb"][0].cpu().numpy(), frames)
    bodies = {}
    for ent in env.scene.sub_scenes[0].entities:
        for c in ent.components:
            if isinstance(c, sapien.render.RenderBodyComponent):
                bodies[ent.name] = c
    robot = {link.name for link in env.agent.robot.get_links()}
    groups = {"wrist camera model hidden": {"camera_link"}, "robot hidden": robot,
              "robot, table, ground hidden": robot | {n for n in bodies if "table" in n or "ground" in n}, "everything hidden": set(bodies)}
    for label, names in groups.items():
        for n, c in bodies.items():
            c.visibility = 0.0 if n in names else 1.0
        out[label] = _median_ms(env.render_front, frames)
    for c in bodies.values():
        c.visibility = 1.0
    out["lp_num_threads"] = os.environ.get("LP_NUM_THREADS", "default")
    return out


def run_frame_child(tasks: list[str], lod: str, frames: int, poses: int, tmp: Path, env_extra: dict | None = None) -> None:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--frame-child", lod, "--tasks", *tasks, "--frames", str(frames),
           "--poses", str(poses), "--child-out", str(tmp)]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False,
                       env={**os.environ, **(env_extra or {})})
    if p.returncode != 0:
        raise RuntimeError(f"frame child {lod} failed:\n{p.stderr[-3000:]}")


def load_frames(task: str, lod: str, tmp: Path) -> dict:
    z = np.load(tmp / f"{task}_{lod}.npz")
    return {"imgs": z["imgs"], "qpos": z["qpos"], "ms": float(np.median(z["ms"])), "build_s": float(z["build_s"]), "overhead": json.loads(str(z["overhead"])),
            "tris": sum(json.loads(str(z["tris"])).values()), "load": float(z["load"])}


def pixel_diff(a: np.ndarray, b: np.ndarray) -> dict:
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    mse = float((d**2).mean())
    return {"mad": float(d.mean()), "max": int(d.max()), "psnr": float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse),
            "px_over_32": float((d.max(axis=-1) > 32).mean())}


def save_pair(path: Path, full: np.ndarray, simp: np.ndarray) -> None:
    import imageio.v2 as imageio

    d = np.clip(np.abs(full.astype(np.int16) - simp.astype(np.int16)) * 4, 0, 255).astype(np.uint8)
    imageio.imwrite(path, np.concatenate([full, simp, d], axis=1))


# --------------------------------------------------------------------------- quick preset
def run_quick(lod: str, workers: int, tmp: Path, extra: list[str]) -> dict:
    from experiments.loop.config import flatten_config

    out = tmp / f"quick_{lod}_w{workers}"
    cmd = [sys.executable, "-m", "experiments.run", "--preset", "quick", "--wandb", "disabled", "--out", str(out),
           "--render-lod", lod, "--workers", str(workers), *extra]
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    load1 = os.getloadavg()[0]
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()] if (out / "episodes.jsonl").exists() else []
    cfg = json.loads((out / "config.json").read_text()).get("config", {}) if (out / "config.json").exists() else {}
    cfg = flatten_config(cfg)  # config.json by groups (now) or flat (before the groups)
    return {"lod": lod, "workers": workers, "rc": p.returncode, "stderr": p.stderr[-2000:], "wall": wall, "rows": rows,
            "load_start": load0, "load_end": load1, "cfg_render_lod": cfg.get("render_lod"), "cmd": " ".join(cmd[1:])}


def _key(r: dict) -> tuple:
    return (r.get("task"), r.get("episode"), r.get("seed"), r.get("condition"))


def _outcome(r: dict) -> dict:
    return {k: v for k, v in r.items() if not any(s in k for s in _NOT_OUTCOME)}


def _flatten(d, prefix=""):
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            if any(s in str(k) for s in _NOT_OUTCOME):
                continue
            out.update(_flatten(v, f"{prefix}{k}."))
    else:
        out[prefix[:-1]] = d
    return out


def compare_outcomes(a: list[dict], b: list[dict]) -> tuple[int, int, list[str]]:
    ka, kb = {_key(r): r for r in a}, {_key(r): r for r in b}
    same, diffs = 0, []
    for k in sorted(set(ka) & set(kb), key=str):
        fa, fb = _flatten(_outcome(ka[k])), _flatten(_outcome(kb[k]))
        bad = sorted(x for x in set(fa) | set(fb) if fa.get(x) != fb.get(x))
        if bad:
            diffs.append(f"{k[0]} ep {k[1]} seed {k[2]} {k[3]}: " + "; ".join(f"{x} {fa.get(x)!r} full vs {fb.get(x)!r} simplified" for x in bad[:6]))
        else:
            same += 1
    for k in sorted(set(ka) ^ set(kb), key=str):
        diffs.append(f"{k}: only in one run")
    return same, len(set(ka) | set(kb)), diffs


def per_arm(rows: list[dict]) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for r in rows:
        out[r.get("condition", "?")] += float(r.get("wall_s") or 0.0)
    return dict(out)


# --------------------------------------------------------------------------- report
def machine() -> list[str]:
    from benchmarks.bench_loop import machine_facts

    m = machine_facts()
    return [f"- CPU: {m['cpu_model']}, {m['cpus']} logical CPUs, {m['affinity']} usable by this process",
            f"- {m['platform']}, Python {m['python']}; rendering: SAPIEN on software Vulkan (lavapipe, CPU)",
            f"- LP_NUM_THREADS: {os.environ.get('LP_NUM_THREADS', 'unset (lavapipe: one thread per CPU)')} in the one-worker processes; "
            f"the 2-worker pool sets it to CPUs / workers per worker (experiments/loop/executors.py)"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="*", default=None, help="task scenes for the frame part (default: all 16)")
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--poses", type=int, default=6)
    ap.add_argument("--skip-quick", action="store_true", help="frame part only")
    ap.add_argument("--quick-args", nargs=argparse.REMAINDER, default=[], help="extra flags for every quick-preset run (last)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "render.md"))
    ap.add_argument("--png-dir", default=None, help="where the PNG pairs go (default: beside --out)")
    ap.add_argument("--json", default=None, help="also write the raw numbers here")
    ap.add_argument("--frame-child", metavar="LOD", help=argparse.SUPPRESS)
    ap.add_argument("--child-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.frame_child:
        frame_child(args.tasks, args.frame_child, args.frames, args.poses, args.child_out)
        return 0

    from envs import ALL_TASKS

    tasks = args.tasks or list(ALL_TASKS)
    out_md = Path(args.out)
    png_dir = Path(args.png_dir) if args.png_dir else out_md.parent
    png_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench_render_"))
    t_start = time.perf_counter()
    started = dt.datetime.now(dt.timezone.utc)
    load_start = os.getloadavg()
    raw: dict = {"tasks": {}, "quick": []}

    # 1-2: frames
    frame_rows, all_full, all_simp, phys = [], [], [], []
    for lod in ("simplified", "full"):
        run_frame_child(tasks, lod, args.frames, args.poses, tmp)
    # software-Vulkan threads: the first task again with one lavapipe thread, both levels
    lp1 = tmp / "lp1"
    lp1.mkdir()
    for lod in ("simplified", "full"):
        run_frame_child(tasks[:1], lod, args.frames, 2, lp1, {"LP_NUM_THREADS": "1"})
    lp_rows = {lod: load_frames(tasks[0], lod, lp1) for lod in ("simplified", "full")}
    for task in tasks:
        res = {lod: load_frames(task, lod, tmp) for lod in ("simplified", "full")}
        f, s = res["full"], res["simplified"]
        diff = pixel_diff(f["imgs"], s["imgs"])
        qdiff = float(np.abs(f["qpos"] - s["qpos"]).max())
        phys.append(qdiff)
        all_full.append(f["imgs"])
        all_simp.append(s["imgs"])
        # the pose whose frames differ most is the one worth looking at
        worst = int(np.argmax([np.abs(a.astype(int) - b.astype(int)).sum() for a, b in zip(f["imgs"], s["imgs"])]))
        save_pair(png_dir / f"render_pair_{task}.png", f["imgs"][worst], s["imgs"][worst])
        row = {"task": task, "ms_full": f["ms"], "ms_simplified": s["ms"], "ratio": f["ms"] / s["ms"], "tris_full": f["tris"],
               "tris_simplified": s["tris"], "qpos_maxdiff": qdiff, "load": (f["load"] + s["load"]) / 2, **diff}
        frame_rows.append(row)
        raw["tasks"][task] = row
        print(f"{task}: {f['ms']:.1f} ms full, {s['ms']:.1f} simplified ({row['ratio']:.2f}x), PSNR {diff['psnr']:.1f} dB, "
              f"max {diff['max']}, qpos diff {qdiff:g}", flush=True)
    overall = pixel_diff(np.concatenate(all_full), np.concatenate(all_simp))
    t_frames = time.perf_counter() - t_start

    # 3: quick preset
    quick = []
    if not args.skip_quick:
        for lod, workers in (("simplified", 1), ("full", 1), ("simplified", 2)):
            q = run_quick(lod, workers, tmp, args.quick_args)
            quick.append(q)
            print(f"quick {lod} workers={workers}: rc {q['rc']}, {len(q['rows'])} rows, {q['wall']:.0f} s, load {q['load_start']:.2f}->{q['load_end']:.2f}", flush=True)
            raw["quick"].append({k: v for k, v in q.items() if k != "rows"} | {"per_arm": per_arm(q["rows"]), "n": len(q["rows"])})
    load_end = os.getloadavg()
    total_min = (time.perf_counter() - t_start) / 60

    # ------------------------------------------------------------------ write
    L: list[str] = []
    cmdline = "benchmarks/bench_render.py " + " ".join(sys.argv[1:])
    L += ["# Render level of detail: CPU frame cost, fidelity, quick-preset wall time, workers", "",
          f"Generated by `{cmdline.strip()}` on {started:%Y-%m-%d %H:%M} UTC ({total_min:.1f} min for the whole run). "
          "Every number below comes from this one run; ratios compare measurements of the same run, the absolute "
          "milliseconds and seconds depend on the machine and its load.", "", "## Machine", ""]
    L += machine()
    L += [f"- load average (1, 5, 15 min) at start: {load_start[0]:.2f}, {load_start[1]:.2f}, {load_start[2]:.2f}; "
          f"at end: {load_end[0]:.2f}, {load_end[1]:.2f}, {load_end[2]:.2f} (this benchmark alone keeps the 1-min figure near 1-2)", ""]
    ms_f = [r["ms_full"] for r in frame_rows]
    ms_s = [r["ms_simplified"] for r in frame_rows]
    L += ["## 1. ms per 256x256 front frame, full vs simplified meshes", "",
          f"Median of {args.frames} `render_front()` calls after 3 warm-up frames, each level in its own process (never both levels in one process), the scene of "
          "episode 0 of the task's test split right after its reset (no conditioning video). Triangles: visual triangles of the "
          "whole scene.", "",
          "| task | ms full | ms simplified | **full / simplified** | triangles full | triangles simplified | load (1 min) |",
          "|---|---|---|---|---|---|---|"]
    for r in frame_rows:
        L.append(f"| {r['task']} | {r['ms_full']:.1f} | {r['ms_simplified']:.1f} | **{r['ratio']:.2f}x** | {r['tris_full']:,} | {r['tris_simplified']:,} | {r['load']:.2f} |")
    L += [f"| **all (median of the tasks)** | {statistics.median(ms_f):.1f} | {statistics.median(ms_s):.1f} | "
          f"**{statistics.median(ms_f) / statistics.median(ms_s):.2f}x** | | | |", "",
          f"Ratio per task: min {min(r['ratio'] for r in frame_rows):.2f}x, max {max(r['ratio'] for r in frame_rows):.2f}x. "
          f"Frame part: {t_frames / 60:.1f} min.", ""]
    L += ["## 2. Pixel difference of the front frame, simplified vs full", "",
          f"{args.poses} front frames per task: after the reset and after each of {args.poses - 1} arm moves of one fixed joint-target "
          "sequence (25 env steps each), the last reaching down over the table, the same actions with both levels. Joint states after the sequence are compared too: "
          f"max |qpos full - qpos simplified| over all tasks and poses = **{max(phys):g}** (bit-identical physics gives 0). "
          "`> 32`: share of pixels whose largest channel differs by more than 32 of 255.", "",
          "| task | mean abs diff | max abs diff | PSNR dB | pixels > 32 |", "|---|---|---|---|---|"]
    for r in frame_rows:
        L.append(f"| {r['task']} | {r['mad']:.3f} | {r['max']} | {r['psnr']:.1f} | {100 * r['px_over_32']:.2f} % |")
    L += [f"| **all {len(tasks) * args.poses} frames** | {overall['mad']:.3f} | {overall['max']} | **{overall['psnr']:.1f}** | {100 * overall['px_over_32']:.2f} % |", "",
          "PNG pairs (full | simplified | 4x the absolute difference), the pose with the largest difference per task: "
          f"`{png_dir.name}/render_pair_<task>.png`.", ""]
    ov = {lod: load_frames(tasks[0], lod, tmp)["overhead"] for lod in ("full", "simplified")}
    L += ["## 2b. Where the rest of a frame goes (" + tasks[0] + ")", "",
          "Median ms per `render_front()` in the same processes as section 1, parts of the scene hidden by render visibility "
          "(then shown again); `take_picture`: the render pass alone; `copy to numpy`: reading the finished 256x256 RGB back. "
          "Shadows are off (ManiSkill's `enable_shadow=False` default: no shadow pass); the shader pack is `minimal`. "
          "`LP_NUM_THREADS=1`: the same scene in a process with one lavapipe thread instead of one per CPU.", "",
          "| measurement | full | simplified |", "|---|---|---|"]
    for k in ("render_front", "take_picture", "copy_to_numpy", "wrist camera model hidden", "robot hidden", "robot, table, ground hidden", "everything hidden"):
        L.append(f"| {k.replace('_', ' ')} | {ov['full'][k]:.1f} | {ov['simplified'][k]:.1f} |")
    L += [f"| render front, LP_NUM_THREADS=1 | {lp_rows['full']['ms']:.1f} | {lp_rows['simplified']['ms']:.1f} |", ""]
    raw["overhead"] = ov | {"lp1": {k: v["ms"] for k, v in lp_rows.items()}}
    if quick:
        L += ["## 3. Quick preset (`--preset quick`: 16 tasks x episode 0 x oracle / no-memory / memory, seed 7)", "",
              "Per arm: the sum of the rows' `wall_s`. Total: the command's wall time (process start, env builds, all episodes).", "",
              "| render_lod | workers | rows | exit | config.json render_lod | oracle s | no-memory s | memory s | **memory / oracle** | total wall s | episodes / s | load 1-min start -> end |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for q in quick:
            pa = per_arm(q["rows"])
            ratio = pa.get("memory", float("nan")) / pa["oracle"] if pa.get("oracle") else float("nan")
            L.append(f"| {q['lod']} | {q['workers']} | {len(q['rows'])} | {q['rc']} | {q['cfg_render_lod']} | {pa.get('oracle', 0):.0f} | "
                     f"{pa.get('no-memory', 0):.0f} | {pa.get('memory', 0):.0f} | **{ratio:.2f}** | {q['wall']:.0f} | "
                     f"{len(q['rows']) / q['wall']:.3f} | {q['load_start']:.2f} -> {q['load_end']:.2f} |")
        by = {(q["lod"], q["workers"]): q for q in quick}
        if ("full", 1) in by and ("simplified", 1) in by:
            same, n, diffs = compare_outcomes(by[("full", 1)]["rows"], by[("simplified", 1)]["rows"])
            L += ["", f"**Outcomes, full vs simplified (1 worker): {same}/{n} episodes identical** in every recorded outcome field "
                  "(status, success, steps, the memory's read counts and audit numbers; timings excluded)."]
            L += [f"- differs: {d}" for d in diffs] or []
        if ("simplified", 1) in by and ("simplified", 2) in by:
            a, b = by[("simplified", 1)], by[("simplified", 2)]
            same, n, diffs = compare_outcomes(a["rows"], b["rows"])
            L += ["", f"**Workers, simplified: 1 worker {len(a['rows']) / a['wall']:.3f} episodes/s, 2 workers "
                  f"{len(b['rows']) / b['wall']:.3f} episodes/s = {(len(b['rows']) / b['wall']) / (len(a['rows']) / a['wall']):.2f}x** "
                  f"(1-min load average {a['load_start']:.2f} -> {a['load_end']:.2f} and {b['load_start']:.2f} -> {b['load_end']:.2f}); "
                  f"outcomes 1 vs 2 workers: {same}/{n} identical."]
            L += [f"- differs: {d}" for d in diffs]
        for q in quick:
            if q["rc"] != 0:
                L += ["", f"`{q['cmd']}` exited {q['rc']}:", "```", q["stderr"][-1500:], "```"]
        L.append("")
    out_md.parent.mkdir(parents=True, exist_ok=True)
    out_md.write_text("\n".join(L) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=1, default=str))
    print(f"wrote {out_md} ({total_min:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
