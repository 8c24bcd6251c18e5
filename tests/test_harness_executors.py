"""Executors: unit order, errors as rows, a dying worker, determinism and resume (in-process)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness_fixture_fns as fx  # noqa: E402

from experiments import run  # noqa: E402
from experiments.loop.config import ExperimentConfig  # noqa: E402
from experiments.loop.executors import LocalExecutor, UnitFnRef, make_units, pending_units, resolve_unit_fn, run_one  # noqa: E402
from experiments.loop.records import WorkUnit  # noqa: E402
from experiments.loop.results import iter_rows, read_rows  # noqa: E402


def _outcome(r):
    d = r if isinstance(r, dict) else r.to_dict()
    return (d["task"], d["split"], d["episode"], d["condition"], d["seed"], d["status"], d["success"], d["steps"], d["env_seed"])


def test_units_are_ordered_task_condition_seed_episode():
    cfg = ExperimentConfig.from_flat(tasks=("BinFill", "StopCube"), episodes=("0:2",), seeds=(7, 11), conditions=("no-memory", "memory"))
    units = make_units(cfg)
    assert len(units) == cfg.n_units == 16
    assert units[:5] == [
        WorkUnit("BinFill", "test", 0, "no-memory", 7),
        WorkUnit("BinFill", "test", 1, "no-memory", 7),
        WorkUnit("BinFill", "test", 0, "no-memory", 11),
        WorkUnit("BinFill", "test", 1, "no-memory", 11),
        WorkUnit("BinFill", "test", 0, "memory", 7),
    ]
    assert units == make_units(cfg)
    done = {units[0].key, units[3].key}
    assert pending_units(cfg, done) == [u for u in units if u.key not in done]


def test_default_unit_fn_is_lazy_and_picklable():
    ref = resolve_unit_fn(None)
    assert isinstance(ref, UnitFnRef) and ref.spec == "experiments.loop.unit:run_unit"
    assert resolve_unit_fn(fx.det_unit).spec == "harness_fixture_fns:det_unit"
    assert resolve_unit_fn(fx.det_unit).resolve() is fx.det_unit


def test_in_process_run_and_errors_are_rows():
    cfg = ExperimentConfig.from_flat(tasks=("BinFill",), episodes=("0:3",), conditions=("no-memory",))
    units = make_units(cfg)
    seen = []
    out = LocalExecutor(1, fx.raising_unit).run(units, cfg, seen.append)
    assert [r.key for r in out] == [u.key for u in units] == [r.key for r in seen]
    assert out[1].status == "error" and not out[1].success
    assert out[1].error.startswith("ValueError: boom on BinFill episode 1")
    assert out[1].env_seed > 0 and out[1].difficulty == "easy"
    assert _outcome(out[0]) == _outcome(fx.det_unit(units[0], cfg))
    assert _outcome(out[2]) == _outcome(fx.det_unit(units[2], cfg))


def test_a_row_for_the_wrong_unit_is_an_error():
    u = WorkUnit("BinFill", "test", 0, "memory", 7)
    r = run_one(fx.wrong_key_unit, u, ExperimentConfig())
    assert r.status == "error" and "expected" in r.error and r.key == u.key


def test_pool_survives_a_killed_worker():
    cfg = ExperimentConfig.from_flat(tasks=("BinFill",), episodes=("0:5",), conditions=("memory",))
    units = make_units(cfg)
    seen = []
    out = LocalExecutor(2, fx.killing_unit).run(units, cfg, seen.append)
    by_ep = {r.episode: r for r in out}
    assert sorted(by_ep) == [0, 1, 2, 3, 4] and len(out) == len(seen) == 5
    assert by_ep[2].status == "error" and "worker died" in by_ep[2].error
    for e in (0, 1, 3, 4):
        assert _outcome(by_ep[e]) == _outcome(fx.det_unit(units[e], cfg))


def test_same_config_twice_gives_the_same_rows(tmp_path, capsys):
    def argv(out, workers):
        return ["--tasks", "BinFill", "VideoUnmask", "--episodes", "0:3", "--seeds", "7", "11", "--conditions", "no-memory",
                "memory", "--out", str(out), "--wandb", "disabled", "--workers", str(workers)]

    assert run.main(argv(tmp_path / "a", 1), unit_fn=fx.det_unit) == 0
    assert run.main(argv(tmp_path / "b", 1), unit_fn=fx.det_unit) == 0
    assert run.main(argv(tmp_path / "c", 2), unit_fn=fx.det_unit) == 0
    a, b, c = (sorted(map(_outcome, read_rows(tmp_path / d))) for d in "abc")
    assert len(a) == 24 and a == b == c
    out = capsys.readouterr().out
    assert "| BinFill |" in out and "memory:" in out  # final per-task table


def test_errors_do_not_fail_the_run_and_resume_skips_finished(tmp_path, capsys):
    argv = ["--tasks", "BinFill", "--episodes", "0:3", "--conditions", "memory", "--out", str(tmp_path), "--wandb", "disabled"]
    assert run.main(argv, unit_fn=fx.raising_unit) == 0
    rows = read_rows(tmp_path)
    assert [r["status"] == "error" for r in rows] == [False, True, False]
    # resume: nothing to run, nothing duplicated
    assert run.main(argv, unit_fn=fx.raising_unit) == 0
    assert len(list(iter_rows(tmp_path))) == 3
    # widen the scope: only the new episodes run
    assert run.main(argv[:3] + ["0:5"] + argv[4:], unit_fn=fx.det_unit) == 0
    assert len(list(iter_rows(tmp_path))) == 5
    # --retry-errors runs the error again; the newer row wins
    assert run.main(argv + ["--retry-errors"], unit_fn=fx.det_unit) == 0
    assert len(list(iter_rows(tmp_path))) == 6
    assert all(r["status"] != "error" for r in read_rows(tmp_path)) and len(read_rows(tmp_path)) == 5
    assert "0 to run" in capsys.readouterr().err


def test_unknown_unit_module_is_a_config_error(tmp_path, capsys):
    argv = ["--tasks", "BinFill", "--out", str(tmp_path), "--wandb", "disabled", "--unit-fn", "no_such_module_xyz:run"]
    assert run.main(argv) == 2
    assert "no_such_module_xyz" in capsys.readouterr().err
