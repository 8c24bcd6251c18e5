"""The results file: append, read back, survive a torn last line and a full disk; config.json."""

from __future__ import annotations

import errno
import json
import os
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness_fixture_fns as fx  # noqa: E402

from experiments.loop import results as results_mod  # noqa: E402
from experiments import run  # noqa: E402
from experiments.loop.config import ExperimentConfig  # noqa: E402
from experiments.loop.records import WorkUnit  # noqa: E402
from experiments.loop.results import (  # noqa: E402
    ResultsWarning,
    ResultsWriteError,
    ResultsWriter,
    config_mismatch,
    finished_keys,
    git_info,
    read_results,
    read_rows,
    write_config_json,
)


def _rows(n, condition="memory", seed=7):
    return [fx.det_unit(WorkUnit("BinFill", "test", i, condition, seed), None) for i in range(n)]


def test_write_read_round_trip(tmp_path):
    rs = _rows(3)
    with ResultsWriter(tmp_path) as w:
        for r in rs:
            w.write(r)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = read_results(tmp_path)
    assert [b.to_dict() for b in back] == [r.to_dict() for r in rs]
    assert finished_keys(tmp_path) == {r.key for r in rs}
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 3
    row = json.loads(lines[0])
    for k in ("task", "split", "episode", "env_seed", "seed", "condition", "status", "success", "steps"):
        assert k in row


def test_torn_last_line_is_skipped_with_its_line_number(tmp_path):
    with ResultsWriter(tmp_path) as w:
        for r in _rows(3):
            w.write(r)
    with open(tmp_path / "episodes.jsonl", "ab") as f:
        f.write(b'{"task": "BinFill", "split": "te')  # a kill -9 in the middle of a write
    with pytest.warns(ResultsWarning, match=r"episodes\.jsonl:4: .*unterminated"):
        assert len(read_rows(tmp_path)) == 3
    assert len(finished_keys(tmp_path)) == 3  # resume does not trip over it either

    # appending after the torn line: the new row gets a line of its own
    extra = _rows(4)[3]
    with ResultsWriter(tmp_path) as w:
        w.write(extra)
    with pytest.warns(ResultsWarning, match=r":4: "):
        rows = read_rows(tmp_path)
    assert len(rows) == 4 and rows[-1]["episode"] == 3


def test_garbage_and_incomplete_rows_are_skipped(tmp_path):
    p = tmp_path / "episodes.jsonl"
    good = json.dumps(_rows(1)[0].to_dict())
    other = good.replace('"episode": 0', '"episode": 5')
    p.write_text("\n".join([good, "not json at all", "[1, 2]", '{"task": "BinFill"}', "", other]) + "\n")
    with pytest.warns(ResultsWarning) as rec:
        rows = read_rows(p)
    assert [r["episode"] for r in rows] == [0, 5]
    msgs = " ".join(str(w.message) for w in rec)
    assert ":2:" in msgs and ":3:" in msgs and ":4:" in msgs and "missing" in msgs


def test_later_row_for_the_same_unit_wins(tmp_path):
    r = _rows(1)[0]
    err = dict(r.to_dict(), status="error", success=False, error="boom")
    with ResultsWriter(tmp_path) as w:
        w.write(err)
        w.write(r)
    rows = read_rows(tmp_path)
    assert len(rows) == 1 and rows[0]["status"] == r.status
    assert finished_keys(tmp_path, include_errors=False) == {r.key}


class _FullDisk:
    """A file object that writes half of what it is given and then reports ENOSPC."""

    def __init__(self, f):
        self._f = f

    def write(self, data):
        self._f.write(data[: len(data) // 2])
        self._f.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name):
        return getattr(self._f, name)


def test_full_disk_is_a_clear_error_and_keeps_written_rows(tmp_path):
    rs = _rows(3)
    w = ResultsWriter(tmp_path)
    w.write(rs[0])
    w.write(rs[1])
    w._f = _FullDisk(w._f)
    with pytest.raises(ResultsWriteError) as e:
        w.write(rs[2])
    assert "disk is full" in str(e.value) and "2 rows" in str(e.value)
    w.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the half-written row was rolled back: nothing torn remains
        rows = read_rows(tmp_path)
    assert [r["episode"] for r in rows] == [0, 1]


def test_full_disk_in_a_run_exits_1_without_losing_rows(tmp_path, monkeypatch, capsys):
    real_fsync = os.fsync
    calls = {"n": 0}

    def fsync(fd):
        calls["n"] += 1
        if calls["n"] > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(results_mod.os, "fsync", fsync)
    argv = ["--tasks", "BinFill", "--episodes", "0:5", "--conditions", "memory", "--out", str(tmp_path), "--wandb", "disabled"]
    assert run.main(argv, unit_fn=fx.det_unit) == 1
    assert "disk is full" in capsys.readouterr().err
    monkeypatch.setattr(results_mod.os, "fsync", real_fsync)
    assert len(read_rows(tmp_path)) == 2
    assert run.main(argv, unit_fn=fx.det_unit) == 0  # rerun resumes
    assert sorted(r["episode"] for r in read_rows(tmp_path)) == [0, 1, 2, 3, 4]


def test_config_json(tmp_path):
    cfg = ExperimentConfig.from_flat(tasks=("counting",), out=tmp_path)
    write_config_json(tmp_path, cfg, argv=["--tasks", "counting"])
    doc = json.loads((tmp_path / "config.json").read_text())
    assert doc["config"]["scope"]["tasks"] == ["counting"] and doc["config"]["execution"]["out"] == str(tmp_path)
    assert isinstance(doc["git_commit"], str) and doc["git_commit"]
    assert "git_dirty" in doc and doc["python"].count(".") == 2
    for pkg in ("numpy", "torch", "mani_skill", "sapien", "gymnasium", "mplib", "wandb", "tyro"):
        assert pkg in doc["packages"]
    assert doc["packages"]["numpy"] and doc["packages"]["tyro"]
    # a changed config keeps the previous file
    write_config_json(tmp_path, ExperimentConfig.from_flat(tasks=("imitation",), out=tmp_path))
    assert json.loads((tmp_path / "config.1.json").read_text())["config"]["scope"]["tasks"] == ["counting"]


def test_git_info_outside_a_checkout(tmp_path):
    g = git_info(tmp_path)
    assert g.commit == "unknown" or len(g.commit) == 40


def test_resume_refuses_changed_outcome_settings(tmp_path, capsys):
    base = ["--tasks", "BinFill", "--conditions", "memory", "--out", str(tmp_path), "--wandb", "disabled"]
    assert run.main(base, unit_fn=fx.det_unit) == 0
    assert config_mismatch(tmp_path, ExperimentConfig.from_flat(tasks=("BinFill",), out=tmp_path)) == {}
    assert run.main(base + ["--max-steps", "50"], unit_fn=fx.det_unit) == 2
    assert "max_steps" in capsys.readouterr().err
    # widening the scope is fine
    assert run.main(base + ["--episodes", "0:2"], unit_fn=fx.det_unit) == 0
    assert len(read_rows(tmp_path)) == 2
