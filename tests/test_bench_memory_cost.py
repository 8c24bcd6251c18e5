"""The memory cost benchmark's report: ratios pooled over the same episodes, the verdict per task."""

from __future__ import annotations

from benchmarks.bench_memory_cost import write_report


def _row(task, condition, wall, memory_cpu=None, reset=0.5):
    timings = {"reset_s": reset, "renders": 0 if condition == "oracle" else 50, "render_s": 0.0 if condition == "oracle" else 1.5,
               "memory_s": 0.0 if condition == "oracle" else 0.6, "cpu_s": wall}
    memory = {} if memory_cpu is None else {"cpu_s": memory_cpu}
    return {"task": task, "condition": condition, "wall_s": wall, "timings": timings, "memory": memory, "success": True}


def test_the_report_pools_ratios_and_names_the_tasks_over_the_target(tmp_path):
    rows = [_row("PickXtimes", "oracle", 2.0), _row("PickXtimes", "memory", 3.0, 0.4, reset=1.5),
            _row("StopCube", "oracle", 1.0), _row("StopCube", "memory", 5.0, 0.2)]
    facts = {"cpu_model": "test", "cpus": 2, "affinity": 2, "platform": "linux", "python": "3.11"}
    text = write_report(tmp_path / "cost.md", ["--tasks", "PickXtimes", "StopCube"], facts, rows, [1.0, 1.2], "now", 60.0, "abc")
    assert "| PickXtimes | 1 | 2.0 | 3.0 | **1.50x** | 1.0 |" in text  # video = memory reset - oracle reset
    assert "| StopCube | 1 | 1.0 | 5.0 | **5.00x** |" in text
    assert "pooled over every task played: **2.67x**" in text  # (3 + 5) / (2 + 1)
    assert "**not met** (1 of 2 tasks above it: StopCube)" in text
    assert "**0.30 s** on average over tasks" in text
    assert (tmp_path / "cost.md").read_text() == text


def test_the_benchmark_video_renders_every_recorded_step_and_records_the_same_frames(monkeypatch):
    """``--benchmark-video``: the env draws front and wrist at every shown demonstration step, as the
    benchmark's env does for any policy, while the frames recorded for the memory stay those of its
    stride (the memory's input, and so its answers, do not change)."""
    import numpy as np

    from benchmarks.bench_memory_cost import _env_renders_the_whole_video
    from envs import episode_spec, make_env
    from envs.robomme_env import RoboMMEEnv

    def play(patched: bool) -> tuple[int, int, list, list]:
        env = make_env("MoveCube", video_stride=2)
        t = env.task
        calls = {"front": 0, "wrist": 0}
        front, wrist = t.render_front, t.render_wrist

        def count_front(*a, **k):
            calls["front"] += 1
            return front(*a, **k)

        def count_wrist(*a, **k):
            calls["wrist"] += 1
            return wrist(*a, **k)

        t.render_front, t.render_wrist = count_front, count_wrist
        if patched:
            _env_renders_the_whole_video()
        _, info = env.reset(options={"episode": episode_spec("MoveCube", 1, split="train")})
        env.close()
        return calls["front"], calls["wrist"], list(info["video"].clock), info["video"].front

    monkeypatch.setattr(RoboMMEEnv, "_demo_step", RoboMMEEnv._demo_step)  # undone after the test
    f0, w0, clock0, frames0 = play(False)
    f1, w1, clock1, frames1 = play(True)
    assert clock1 == clock0 and all(np.array_equal(a, b) for a, b in zip(frames0, frames1))
    shown = 2 * len(clock0)  # every second shown step is recorded at stride 2
    assert w0 <= 1 and w1 >= shown - 2  # the wrist at every shown step, only with the flag
    assert f1 - f0 >= shown - len(clock0) - 2  # the front at the steps the stride skips, too
