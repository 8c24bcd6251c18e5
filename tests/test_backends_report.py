"""Rows say which envs they come from, and the report never pools the two backends.

Why: on ours and on the benchmark's own envs the same (task, split, episode) is another scene, so a
cell that pooled both would mean nothing. A row carries ``backend``; a run written before rows did
takes it from its ``config.json``; a report over both refuses; the docs put them side by side.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.loop.records import EpisodeResult
from experiments.loop.results import read_rows
from experiments.reporting.backends_section import backends_section
from experiments.reporting.publish import publish
from experiments.reporting.readme_tables import write_readme
from experiments.reporting.report import load_rows


def _row(task="PickXtimes", condition="oracle", episode=0, success=True, commit="a" * 40, backend=None):
    row = {"task": task, "split": "test", "episode": episode, "seed": 7, "condition": condition, "env_seed": 1,
           "difficulty": "easy", "status": "success" if success else "fail", "success": success, "steps": 10,
           "code_commit": commit, "code_dirty": False}
    if backend is not None:
        row["backend"] = backend
    return row


def _run(path: Path, rows, backend: str | None) -> Path:
    path.mkdir(parents=True)
    (path / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = {"config": {"env": {"backend": backend}}} if backend else {"config": {}}
    (path / "config.json").write_text(json.dumps({"git_commit": rows[0]["code_commit"], **config}))
    return path


def test_a_row_without_a_backend_takes_its_runs_and_a_new_row_names_its_own(tmp_path):
    old_official = _run(tmp_path / "official", [_row()], "robomme")
    old_ours = _run(tmp_path / "ours", [_row()], None)
    assert [r["backend"] for r in read_rows(old_official)] == ["robomme"]
    assert [r["backend"] for r in read_rows(old_ours)] == ["robomem"]
    assert EpisodeResult.from_dict(_row()).backend == "robomem"
    assert EpisodeResult.from_dict(_row(backend="robomme")).to_dict()["backend"] == "robomme"


def test_a_report_over_both_backends_refuses_to_pool_them(tmp_path):
    official = _run(tmp_path / "official", [_row()], "robomme")
    ours = _run(tmp_path / "ours", [_row()], "robomem")
    with pytest.raises(ValueError, match="2 backends .*robomem, robomme"):
        load_rows([official, ours])
    assert len(load_rows([official])) == 1


def test_the_backends_table_keeps_the_episodes_both_ran_and_each_cell_one_backend():
    ours = [_row(condition=c, episode=e, success=c != "no-memory", backend="robomem") for c in ("oracle", "no-memory", "memory")
            for e in range(4)]
    official = [_row(condition=c, episode=e, success=(c == "oracle") or (c == "memory" and e < 3), backend="robomme")
                for c in ("oracle", "no-memory", "memory") for e in range(5)]  # episode 4: ours has none
    table, records = backends_section(official, ours)
    lines = table.splitlines()
    assert lines[0] == ("| suite | task | oracle ours | oracle official | no-memory ours | no-memory official | "
                        "memory ours | memory official | official memory ÷ oracle |")
    assert "| counting | PickXtimes | 100.0 | 100.0 | 0.0 | 0.0 | 100.0 | 75.0 | 0.75 |" in lines
    assert {r["n_episodes"] for r in records} == {4}
    with pytest.raises(ValueError, match="robomem side holds rows of robomme"):
        backends_section(official, official)


def test_a_backends_block_is_generated_beside_a_run_at_another_commit(tmp_path):
    results = tmp_path / "results"
    publish(_run(tmp_path / "o", [_row(condition=c, episode=e, backend="robomme") for c in ("oracle", "memory") for e in range(2)],
                 "robomme"), "off", dest_root=results)
    publish(_run(tmp_path / "u", [_row(condition=c, episode=e, commit="b" * 40) for c in ("oracle", "memory") for e in range(3)],
                 None), "ours", dest_root=results)
    readme = tmp_path / "README.md"
    readme.write_text("<!-- results name=off section=backends beside=ours episodes=0:2 -->\n<!-- /results -->\n")
    write_readme(readme, results)
    text = readme.read_text()
    assert "beside `benchmarks/results/ours` at `bbbbbbbbbb`" in text and f"commit `{'a' * 10}`" in text
    assert "| counting | PickXtimes | 100.0 | 100.0 | 100.0 | 100.0 | 1.00 |" in text
    readme.write_text("<!-- results name=off section=backend_suites beside=ours episodes=0:2 -->\n<!-- /results -->\n")
    write_readme(readme, results)
    assert "| counting | 100.0 | 100.0 | 100.0 | 100.0 | 1.00 |" in readme.read_text()
    assert "| counting | PickXtimes |" not in readme.read_text()
    readme.write_text("<!-- results name=off section=tasks beside=ours -->\n<!-- /results -->\n")
    with pytest.raises(ValueError, match="go together"):
        write_readme(readme, results)
