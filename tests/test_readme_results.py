"""README numbers come from committed results: publishing refuses what is not one clean commit, the
result blocks are regenerated from ``benchmarks/results/``, and ``--check`` catches an edited number."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from experiments.reporting.publish import PublishError, check_publishable, publish
from experiments.reporting.readme_tables import check_readme, write_readme
from experiments.reporting.report import main as report_main

ROOT = Path(__file__).resolve().parents[1]


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_readme_and_docs_match_the_committed_results():
    total = 0
    for doc in DOCS:
        n, problems = check_readme(doc)
        assert not problems, problems
        total += n
    assert check_readme(ROOT / "README.md")[0] >= 1, "the README has no generated result block"
    assert check_readme(ROOT / "docs" / "RESULTS.md")[0] >= 10, "docs/RESULTS.md lost its generated blocks"


def test_check_cli_passes_on_several_docs(capsys):
    assert report_main(["--check", str(ROOT / "README.md"), str(ROOT / "docs" / "ood_split.md")]) == 0
    assert "match the committed results" in capsys.readouterr().out


def _row(task="PickXtimes", condition="oracle", episode=0, success=True, commit="a" * 40, dirty=False, seed=7):
    return {"task": task, "split": "test", "episode": episode, "seed": seed, "condition": condition, "env_seed": 1,
            "difficulty": "easy", "status": "success" if success else "fail", "success": success, "steps": 10,
            "code_commit": commit, "code_dirty": dirty, "history_audit": {"decisions": 2, "right": 1 + success,
            "corrected": 0, "wrong": 0, "abstained": 0, "silent_wrong": 1 - success, "proposals_wrong": 1 - success}}


def _run_dir(tmp_path: Path, rows, commit="a" * 40) -> Path:
    d = tmp_path / "run"
    d.mkdir(parents=True)
    (d / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "config.json").write_text(json.dumps({"git_commit": commit, "config": {}}))
    return d


def test_publish_refuses_mixed_commits_dirty_trees_and_old_rows():
    with pytest.raises(PublishError, match="2 commits"):
        check_publishable([_row(), _row(episode=1, commit="b" * 40)])
    with pytest.raises(PublishError, match="uncommitted"):
        check_publishable([_row(dirty=True)])
    with pytest.raises(PublishError, match="commits"):
        check_publishable([{k: v for k, v in _row().items() if k != "code_commit"}])
    assert check_publishable([_row(), _row(episode=1)]) == "a" * 40


def test_publish_then_generate_then_check(tmp_path):
    rows = [_row(episode=e, success=e != 1) for e in range(3)] + [_row(condition="no-memory", episode=e, success=e == 0) for e in range(3)]
    dest = publish(_run_dir(tmp_path, rows), "demo", dest_root=tmp_path / "results")
    with gzip.open(dest / "episodes.jsonl.gz", "rt") as f:
        assert len(f.read().splitlines()) == 6
    again = publish(_run_dir(tmp_path / "x", rows), "demo2", dest_root=tmp_path / "results")
    assert (again / "episodes.jsonl.gz").read_bytes() == (dest / "episodes.jsonl.gz").read_bytes()  # deterministic
    with pytest.raises(PublishError, match="exists"):
        publish(_run_dir(tmp_path / "y", rows), "demo", dest_root=tmp_path / "results")

    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- results name=demo section=tasks -->\nold text\n<!-- /results -->\n"
                      "<!-- results name=demo section=audit conditions=no-memory -->\n<!-- /results -->\nend\n")
    n, problems = check_readme(readme, tmp_path / "results")
    assert n == 2 and "2 of 2 generated blocks differ" in problems
    assert write_readme(readme, tmp_path / "results") == ["demo/tasks", "demo/audit"]
    text = readme.read_text()
    assert "| counting | PickXtimes | 66.7 | 33.3 |" in text and f"commit `{'a' * 10}`" in text
    assert text.startswith("intro\n") and text.endswith("end\n")
    assert check_readme(readme, tmp_path / "results") == (2, "")
    readme.write_text(text.replace("| 66.7 |", "| 70.0 |"))  # a number typed by hand
    n, problems = check_readme(readme, tmp_path / "results")
    assert "demo/tasks" in problems and "-| counting | PickXtimes | 70.0" in problems


def test_a_bad_marker_is_named(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("<!-- results name=demo section=nonsense -->\n<!-- /results -->\n")
    with pytest.raises(ValueError, match="nonsense"):
        check_readme(readme, tmp_path)


def test_a_rewording_block_pairs_episodes_and_refuses_two_commits(tmp_path):
    results = tmp_path / "results"
    template = [_row(condition="memory", episode=e, success=True) for e in range(4)]
    reworded = [_row(condition="memory", episode=e, success=e != 2) for e in range(4)]
    publish(_run_dir(tmp_path / "t", template), "tmpl", dest_root=results)
    publish(_run_dir(tmp_path / "w", reworded), "rew", dest_root=results)
    readme = tmp_path / "README.md"
    readme.write_text("<!-- results name=rew section=rewording baseline=tmpl -->\n<!-- /results -->\n")
    write_readme(readme, results)
    text = readme.read_text()
    assert "| memory | PickXtimes | 4 | 0 | 4 | 3 | 0.75 | -25.0 | 1 |" in text and "against `benchmarks/results/tmpl`" in text
    publish(_run_dir(tmp_path / "o", [dict(r, code_commit="b" * 40) for r in template], commit="b" * 40), "other",
            dest_root=results)
    readme.write_text("<!-- results name=rew section=rewording baseline=other -->\n<!-- /results -->\n")
    with pytest.raises(ValueError, match="one commit"):
        write_readme(readme, results)
    readme.write_text("<!-- results name=rew section=rewording -->\n<!-- /results -->\n")
    with pytest.raises(ValueError, match="go together"):
        write_readme(readme, results)


def test_a_republish_keeps_the_notes_and_the_earlier_configs(tmp_path):
    run = _run_dir(tmp_path, [_row()])
    (run / "config.1.json").write_text(json.dumps({"git_commit": "a" * 40, "config": {"conditions": ["oracle"]}}))
    dest = publish(run, "demo", dest_root=tmp_path / "results")
    assert (dest / "config.1.json").exists()
    (dest / "NOTES.md").write_text("session 1 ran the first stage\n")
    publish(run, "demo", dest_root=tmp_path / "results", replace=True)
    assert (dest / "NOTES.md").read_text() == "session 1 ran the first stage\n"


def test_a_figure_and_a_code_table_typed_by_hand_are_caught(tmp_path):
    rows = [_row(episode=e, success=e != 1) for e in range(3)] + [_row(condition="no-memory", episode=e, success=e == 0) for e in range(3)]
    publish(_run_dir(tmp_path, rows), "demo", dest_root=tmp_path / "results")
    doc = tmp_path / "doc.md"
    doc.write_text("oracle reaches <!-- figure name=demo metric=success condition=oracle -->?<!-- /figure --> %, "
                   "over <!-- figure name=demo metric=episodes condition=oracle -->?<!-- /figure --> episodes; "
                   "it wins <!-- figure name=demo metric=won condition=oracle reference=no-memory -->?<!-- /figure -->.\n"
                   "<!-- generated table=ood_tiers -->\n<!-- /generated -->\n")
    write_readme(doc, tmp_path / "results")
    text = doc.read_text()
    assert "oracle reaches <!-- figure name=demo metric=success condition=oracle -->66.7<!-- /figure --> %" in text
    assert "-->3<!-- /figure --> episodes" in text and "-->1<!-- /figure -->." in text
    assert "| PickXtimes | 1 | repeats=6" in text
    assert check_readme(doc, tmp_path / "results")[1] == ""
    doc.write_text(text.replace("-->66.7<!-- /figure -->", "-->70.0<!-- /figure -->"))
    assert "figure" in check_readme(doc, tmp_path / "results")[1]
    table_row = next(line for line in text.splitlines() if line.startswith("| ") and "PickXtimes" in line)
    doc.write_text(text.replace(table_row, table_row + " x |"))
    assert "generated/ood_tiers" in check_readme(doc, tmp_path / "results")[1]
    doc.write_text("<!-- figure name=demo metric=nonsense -->1<!-- /figure -->\n")
    with pytest.raises(ValueError, match="nonsense"):
        check_readme(doc, tmp_path / "results")
