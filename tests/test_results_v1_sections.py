"""The Results v1 report parts: the paper's transcribed numbers, the failure reasons, ablation
specificity, the run's cost, and README blocks that refuse a half-run campaign stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envs.episodes import ALL_TASKS
from experiments.reporting import campaign
from experiments.reporting.cost_section import cost_section
from experiments.reporting.failure_reasons import classify, failures_section, oracle_solved_memory_failed
from experiments.reporting.paper_comparison import anchors_section, specificity_section
from experiments.reporting.paper_reference import ABLATIONS
from experiments.reporting.publish import publish
from experiments.reporting.readme_tables import write_readme


@pytest.mark.parametrize("ab", [a for a in ABLATIONS.values() if a.cells], ids=lambda a: a.condition)
def test_the_transcribed_paper_cells_reproduce_its_pooled_and_active_means(ab):
    """Table 9 came from flattened text: its rows must give Table 7's pooled and Table 8's active means."""
    assert len(ab.cells) == len(ALL_TASKS) and all(v % 2 == 0 for v in ab.cells)  # 50 episodes: even points
    assert sum(ab.cells) / len(ab.cells) == pytest.approx(ab.pooled, abs=0.07)
    if ab.predicted_active:
        assert sum(ab.cell(t) for t in ab.predicted_active) / len(ab.predicted_active) == pytest.approx(ab.active_delta, abs=0.1)


def _row(task="StopCube", condition="memory", episode=0, seed=7, success=False, **extra):
    return {"task": task, "condition": condition, "episode": episode, "seed": seed, "split": "test", "goal_style": "template",
            "status": "success" if success else "fail", "success": success, "steps": 100, "code_commit": "a" * 40,
            "code_dirty": False, **extra}


def _probes(kind, asked, wrong=0, missing=0, log=()):
    return {"assessment": {"by_kind": {kind: {"asked": asked, "right": asked - wrong - missing, "wrong": wrong,
                                              "not_available": missing}}, "log": list(log)}}


def _audit(decisions, wrong=0, abstained=0, silent=0):
    return {"decisions": decisions, "right": decisions - wrong - abstained - silent, "corrected": 0, "wrong": wrong,
            "abstained": abstained, "silent_wrong": silent, "proposals_wrong": wrong + abstained + silent}


def test_each_failure_gets_the_first_cause_its_audit_supports():
    log = [{"step": 40, "question": "how many times?", "memory": 1, "truth": 1, "verdict": "right"},
           {"step": 96, "question": "how many times?", "memory": 1, "truth": 2, "verdict": "wrong"}]
    state = classify(_row(memory=_probes("count", 4, wrong=2, log=log), history_audit=_audit(3, wrong=2)))
    assert state.cause == "state wrong" and "first at clock 96" in state.line and "truth 2" in state.line
    grounding = classify(_row(memory=_probes("binding", 4), history_audit=_audit(3, wrong=1),
                              subgoals=[{"step": 8, "right": True}, {"step": 24, "right": False, "executed": "pick up the cube at <1, 2>",
                                                                      "oracle": "pick up the cube at <5, 6>"}]))
    assert grounding.cause == "grounding wrong" and "step 24" in grounding.line and "<5, 6>" in grounding.line
    missed = classify(_row(memory=_probes("count", 2), history_audit=_audit(3, abstained=1, silent=1)))
    assert missed.cause == "read missed" and "1 abstained, 1 passed silently" in missed.line
    assert classify(_row(memory=_probes("count", 2), history_audit=_audit(3))).cause == "execution"
    drop = {"subgoal": "put it into the bin", "option": "place", "skill": "carry", "failure": "drop", "after_steps": 4}
    faulted = classify(_row(memory=_probes("count", 2), history_audit=_audit(3), executor_events=[drop]))
    assert faulted.cause == "executor fault" and "drop on 'put it into the bin'" in faulted.line
    # a wrong read stays the memory's, whatever the executor did
    assert classify(_row(memory=_probes("count", 2), history_audit=_audit(3, wrong=1),
                         executor_events=[drop])).cause == "grounding wrong"
    assert classify(_row()).cause == "unaudited"


def test_only_episodes_the_oracle_solved_are_explained():
    rows = [_row(condition="oracle", episode=0, success=True), _row(episode=0),      # explained
            _row(condition="oracle", episode=1, success=False), _row(episode=1),     # both fail: not memory's doing
            _row(condition="oracle", episode=2, success=True), _row(episode=2, success=True),
            _row(condition="oracle", episode=3, success=True), _row(episode=3, seed=11)]  # another seed: unmatched
    assert [m["episode"] for m, _ in oracle_solved_memory_failed(rows)] == [0]
    md, records = failures_section(rows)
    assert len(records) == 1 and "| StopCube | 1 |" in md and "<details>" in md
    # under an executor profile every failure of the arm is attributed, the oracle's too
    md, records = failures_section(rows, every=True)
    assert [r["episode"] for r in records] == [0, 1, 3] and "memory failed |" in md


def test_specificity_names_the_tasks_an_ablation_hurts_beside_the_papers():
    rows = []
    for e in range(20):
        for task in ("PatternLock", "StopCube"):
            rows.append(_row(task=task, episode=e, success=True))
        rows.append(_row(task="PatternLock", condition="memory-no-route", episode=e, success=e < 5))  # -75 pts
        rows.append(_row(task="StopCube", condition="memory-no-route", episode=e, success=e != 0))    # -5 pts: spared
    md, records = specificity_section(rows)
    (rec,) = records
    assert rec["hurt"] == "PatternLock" and rec["spared"] == 1 and rec["paper_name"] == "no route state"
    assert rec["ours_on_predicted"] == pytest.approx(-0.75) and rec["ours_elsewhere"] == pytest.approx(-0.05)
    assert "PatternLock −75" in md.replace("-", "−") and "PatternLock -90" in md


def test_a_drop_of_exactly_the_threshold_counts_as_hurt():
    """18 of 20 against 20 of 20 is -10 points: the table says "Δ ≤ −10", so the task is hurt, though
    0.9 - 1.0 falls just short of -0.1 in floating point."""
    rows = [_row(task="InsertPeg", episode=e, success=True) for e in range(20)]
    rows += [_row(task="InsertPeg", condition="memory-no-route", episode=e, success=e >= 2) for e in range(20)]
    (rec,) = specificity_section(rows)[1]
    assert rec["hurt"] == "InsertPeg" and rec["spared"] == 0


def test_anchors_put_each_arm_beside_the_paper():
    rows = [_row(condition=c, episode=e, success=e < k) for c, k in (("oracle", 4), ("memory", 2)) for e in range(4)]
    md, records = anchors_section(rows)
    by = {r["condition"]: r for r in records}
    assert by["memory"]["ours_of_oracle"] == pytest.approx(0.5) and by["memory"]["paper_mean"] == pytest.approx(0.6717)
    assert "| memory | 1 | 4 | 50.0 | 0.50 | 67.17 ± 1.23 | 0.80 |" in md


def test_cost_sums_episode_wall_time_into_cpu_hours():
    rows = [_row(episode=e, wall_s=1800.0, timings={"memory_s": 360.0, "render_s": 1.0, "env_s": 2.0, "policy_s": 0.5})
            for e in range(2)] + [_row(condition="no-memory", wall_s=3600.0)]
    md, records = cost_section(rows)
    by = {r["condition"]: r for r in records}
    assert by["memory"]["cpu_hours"] == pytest.approx(1.0) and by["all"]["cpu_hours"] == pytest.approx(2.0)
    assert by["memory"]["memory_s_per_episode"] == pytest.approx(360.0) and by["memory"]["memory_share_of_wall"] == pytest.approx(0.2)


def _publish(tmp_path, rows, *, replace=False) -> Path:
    """``rows`` published as ``demo`` under ``tmp_path/results`` (the README blocks' root)."""
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    (run / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "config.json").write_text(json.dumps({"git_commit": "a" * 40, "config": {}}))
    publish(run, "demo", dest_root=tmp_path / "results", replace=replace)
    return tmp_path / "results"


def test_a_readme_block_refuses_a_stage_that_is_not_complete(tmp_path, monkeypatch):
    stage = campaign.Stage("tiny", "demo", ("oracle", "memory"), "0:2")
    monkeypatch.setattr(campaign, "V1", (stage,))
    monkeypatch.setattr(campaign, "TASKS", 1)  # the tiny plan covers one task
    rows = [_row(condition=c, episode=e, success=True) for c in ("oracle", "memory") for e in range(2)]
    rows.append(_row(condition="memory", episode=5))  # outside the stage: never in its tables
    results = _publish(tmp_path, rows[1:])
    readme = tmp_path / "README.md"
    readme.write_text("<!-- results name=demo section=tasks stage=tiny -->\n<!-- /results -->\n")
    with pytest.raises(ValueError, match="3 of its 4 rows"):
        write_readme(readme, results)
    _publish(tmp_path, rows, replace=True)
    write_readme(readme, results)
    text = readme.read_text()
    assert "(stage tiny)" in text and "(4 episodes" in text and "| counting | StopCube | 100.0 | 100.0 |" in text


def test_a_stage_filter_names_an_unknown_stage(tmp_path):
    results = _publish(tmp_path, [_row(success=True)])
    readme = Path(tmp_path / "README.md")
    readme.write_text("<!-- results name=demo section=tasks stage=nonesuch -->\n<!-- /results -->\n")
    with pytest.raises(ValueError, match="unknown stage 'nonesuch'"):
        write_readme(readme, results)


def test_the_campaign_block_shows_each_stage_against_its_plan(tmp_path, monkeypatch):
    monkeypatch.setattr(campaign, "V1", (campaign.Stage("tiny", "demo", ("oracle",), "0:2"),
                                         campaign.Stage("later", "demo", ("memory",), "0:2"),
                                         campaign.Stage("elsewhere", "other", ("memory",), "0:2")))
    monkeypatch.setattr(campaign, "TASKS", 1)
    _publish(tmp_path, [_row(condition="oracle", episode=e, success=True, wall_s=1800.0) for e in range(2)])
    readme = tmp_path / "README.md"
    readme.write_text("<!-- results name=demo section=campaign -->\n<!-- /results -->\n")
    write_readme(readme, tmp_path / "results")
    text = readme.read_text()
    assert "| tiny | oracle | test 0–1 | 7 | 2 | 2 | 1.0 | complete |" in text
    assert "| later | memory | test 0–1 | 7 | 0 | 2 | 0.0 | not started |" in text and "elsewhere" not in text


def test_an_episode_range_compares_arms_on_their_common_episodes(tmp_path):
    rows = [_row(condition="memory", episode=e, success=e < 2) for e in range(4)]
    rows += [_row(condition="recent4", episode=e, success=False) for e in range(2)]
    _publish(tmp_path, rows)
    readme = tmp_path / "README.md"
    readme.write_text("<!-- results name=demo section=tasks episodes=0:2 -->\n<!-- /results -->\n")
    write_readme(readme, tmp_path / "results")
    assert "| counting | StopCube | 0.0 | 100.0 |" in readme.read_text()  # memory on 0-1 only, not 50 %
    readme.write_text("<!-- results name=demo section=tasks episodes=2:1 -->\n<!-- /results -->\n")
    with pytest.raises(ValueError, match="LO:HI"):
        write_readme(readme, tmp_path / "results")


def test_the_campaign_block_shows_the_plan_of_a_directory_nothing_was_published_to(tmp_path, monkeypatch):
    monkeypatch.setattr(campaign, "V1", (campaign.Stage("tiny", "demo", ("oracle",), "0:2"),))
    monkeypatch.setattr(campaign, "TASKS", 1)
    (tmp_path / "results").mkdir()
    readme = tmp_path / "README.md"
    readme.write_text("<!-- results name=demo section=campaign -->\n<!-- /results -->\n")
    write_readme(readme, tmp_path / "results")
    text = readme.read_text()
    assert "Nothing published under `benchmarks/results/demo` yet" in text
    assert "| tiny | oracle | test 0–1 | 7 | 0 | 2 | 0.0 | not started |" in text
    readme.write_text("<!-- results name=nowhere section=campaign -->\n<!-- /results -->\n")
    with pytest.raises(ValueError, match="no campaign stage writes here"):
        write_readme(readme, tmp_path / "results")


def test_the_ceiling_table_sets_the_oracle_beside_the_published_column():
    from experiments.reporting.readme_tables import SECTIONS

    rows = [_row(task="InsertPeg", condition="oracle", episode=e, success=e < 2) for e in range(10)]
    rows += [_row(task="InsertPeg", condition="memory", episode=e, success=e < 1) for e in range(10)]
    md = SECTIONS["ceiling"](rows)
    # 2 of 10 against 15.6 %: 4.4 points, 0.4 standard errors of a 10-episode rate
    assert "| InsertPeg | 10 | 20.0 | 15.6 | +4.4 | yes | +0.4 | yes | 10.0 | 0.50 |" in md
    assert "1/1 within 5" in md and "χ² 0.1, 1 df, p 0.70" in md and "1/1 within 2 SE" in md
    far = [_row(task="VideoUnmask", condition="oracle", episode=e, success=e < 44) for e in range(50)]
    assert "| VideoUnmask | 50 | 88.0 | 98.8 | -10.8 | no | -7.0 | no |" in SECTIONS["ceiling"](far)
    md = SECTIONS["attribution"](rows)
    assert "memory failed" in md and "| InsertPeg | 9 |" in md
