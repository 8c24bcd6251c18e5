"""A run beside an earlier run of the same backend: what a change of code moved, generated, never typed.

Why: "every task within 2 points of its Results v1 figure or better" compares two published runs at
two commits. The section keeps the episodes both ran, refuses two backends, and says per task how
far the memory arm moved and whether it held its earlier figure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.reporting.publish import publish
from experiments.reporting.readme_tables import write_readme
from experiments.reporting.versus_section import versus_section


def _row(task: str, condition: str, episode: int, success: bool, commit: str, backend: str = "robomem") -> dict:
    return {"task": task, "split": "test", "episode": episode, "seed": 7, "condition": condition, "env_seed": 1,
            "difficulty": "easy", "status": "success" if success else "fail", "success": success, "steps": 10,
            "code_commit": commit, "code_dirty": False, "backend": backend}


def _rows(commit: str, memory_wins: dict[str, int], n: int = 10) -> list[dict]:
    """Oracle succeeds on all ``n`` episodes; memory on the first ``memory_wins[task]``."""
    return [_row(t, c, e, c == "oracle" or e < memory_wins[t], commit)
            for t in memory_wins for c in ("oracle", "memory") for e in range(n)]


def test_versus_gives_then_and_now_and_whether_memory_held_its_figure():
    then = _rows("a" * 40, {"PickXtimes": 10, "VideoRepick": 8})
    now = _rows("b" * 40, {"PickXtimes": 9, "VideoRepick": 10}) + [_row("VideoRepick", "memory", 11, True, "b" * 40)]
    lines = versus_section(now, then).splitlines()
    assert lines[0].startswith("| suite | task | oracle then | oracle now | memory then | memory now |")
    # PickXtimes: 100 -> 90 is 10 points down, not within 2; VideoRepick: 80 -> 100 (episode 11: only now, left out)
    assert "| counting | PickXtimes | 100.0 | 100.0 | 100.0 | 90.0 | 1.00 | 0.90 | -10.0 | no |" in lines
    assert "| reference | VideoRepick | 100.0 | 100.0 | 80.0 | 100.0 | 0.80 | 1.00 | +20.0 | yes |" in lines
    assert lines[-1].endswith("| 1/2 tasks |")
    # exactly the tolerance below (49 of 50 after 50 of 50) holds the figure, whatever the float sum says
    edge = versus_section(_rows("b" * 40, {"PickXtimes": 49}, n=50), _rows("a" * 40, {"PickXtimes": 50}, n=50))
    assert "| -2.0 | yes |" in edge


def test_versus_refuses_two_backends_and_runs_with_nothing_in_common():
    then = _rows("a" * 40, {"PickXtimes": 10})
    official = [dict(r, backend="robomme") for r in then]
    with pytest.raises(ValueError, match="compare one backend with itself"):
        versus_section(official, then)
    with pytest.raises(ValueError, match="share no"):
        versus_section([dict(r, episode=r["episode"] + 100) for r in then], then)


def _run(path: Path, rows: list[dict]) -> Path:
    path.mkdir(parents=True)
    (path / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (path / "config.json").write_text(json.dumps({"git_commit": rows[0]["code_commit"], "config": {}}))
    return path


def test_a_versus_block_is_generated_beside_a_run_at_another_commit(tmp_path):
    results = tmp_path / "results"
    publish(_run(tmp_path / "then", _rows("a" * 40, {"PickXtimes": 8})), "v1", dest_root=results)
    publish(_run(tmp_path / "now", _rows("b" * 40, {"PickXtimes": 9})), "v2", dest_root=results)
    readme = tmp_path / "README.md"
    readme.write_text("<!-- results name=v2 section=versus beside=v1 -->\n<!-- /results -->\n")
    write_readme(readme, results)
    text = readme.read_text()
    assert "beside `benchmarks/results/v1` at `aaaaaaaaaa`" in text and f"commit `{'b' * 10}`" in text
    assert "| counting | PickXtimes | 100.0 | 100.0 | 80.0 | 90.0 | 0.80 | 0.90 | +10.0 | yes |" in text
