"""The Results v1 campaign: every stage is a valid run, and rows never mix commits."""

from __future__ import annotations

import json

import pytest

from experiments.reporting import campaign
from envs.official.install import robomme_available
from experiments.loop.config import ConfigError, parse_config
from experiments.reporting.publish import publish
from experiments.loop.results import read_rows


@pytest.mark.parametrize("stage", campaign.known_stages(), ids=lambda s: f"{s.run_dir}:{s.name}")
def test_every_stage_parses_as_a_paper_run(stage):
    if stage.backend == "robomme" and not robomme_available()[0]:  # CI: the official package is not installed
        with pytest.raises(ConfigError, match="robomme_benchmark"):
            parse_config(stage.argv(workers=2))
        return
    cfg = parse_config(stage.argv(workers=2))
    flat = cfg.flat_dict()
    assert flat["backend"] == stage.backend
    assert flat["split"] == stage.split and flat["goal_style"] == stage.goal_style
    assert tuple(flat["conditions"]) == stage.conditions and tuple(flat["seeds"]) == stage.seeds
    assert flat["executor_profile"] == stage.executor_profile
    if stage.backend == "robomme":  # the benchmark's planner executes: no policy noise to take from a preset
        assert flat["policy_noise"]["p_fail_grasp"] == 0 and flat["policy_noise"]["p_drop"] == 0
    elif stage.executor_profile == "clean":
        assert flat["preset"] == "paper"
        assert flat["policy_noise"]["p_fail_grasp"] > 0  # the paper preset's noise, not the quick default
    else:  # the profile's failures alone, as it was fitted
        assert flat["policy_noise"]["p_fail_grasp"] == 0 and flat["policy_noise"]["p_drop"] == 0


def test_the_profile_plan_runs_the_headline_arms_under_the_fitted_profile():
    (stage,) = campaign.PROFILE_V2
    assert stage.conditions == campaign.HEADLINE and stage.executor_profile == "pi05-like" and stage.planned == 16 * 50 * 3
    row = {"condition": "memory", "seed": 7, "episode": 3, "split": "test", "goal_style": "template"}
    assert not stage.selects(row)  # a clean executor's row is not this stage's
    assert stage.selects({**row, "executor_profile": "pi05-like"})


def test_results_v2_runs_the_protocol_on_the_official_envs():
    plan = campaign.RESULTS_V2
    assert all(s.backend == "robomme" for s in plan) and plan[0].name == "headline-s7"
    headline = [s for s in plan if s.conditions == campaign.HEADLINE and s.executor_profile == "clean"]
    assert sum(s.planned for s in headline) == 7200 and sorted(x for s in headline for x in s.seeds) == [7, 11, 23]
    memoryless = [s for s in plan if s.conditions == ("best-memoryless",)]
    assert sorted(x for s in memoryless for x in s.seeds) == [7, 11, 23]
    assert {s.name for s in plan if s.seeds == (7,)} >= {"profile-s7", "recent-s7", "reworded-s7"}
    from policies.executor_profile import load_profile

    profile = next(s for s in plan if s.name == "profile-s7").executor_profile
    assert profile == "pi05-like-official" and load_profile(profile).name == profile, "the fit for the official envs, committed"
    row = {"condition": "memory", "seed": 7, "episode": 3, "split": "test", "goal_style": "template"}
    assert not plan[0].selects(row), "a row of our envs is not an official stage's"
    assert plan[0].selects({**row, "backend": "robomme"})
    assert "--backend" in plan[0].argv(2) and "--preset" not in plan[0].argv(2)
    assert not {s.run_dir for s in plan} & {s.run_dir for s in campaign.V1 + campaign.MEMORY_V2 + campaign.PROFILE_V2}


def test_the_plan_covers_the_protocol():
    names = {s.name for s in campaign.V1}
    assert {"headline-s7", "headline-s11", "headline-s23", "reworded", "recent", "ablations", "ladder", "ood"} == names
    ablations = next(s for s in campaign.V1 if s.name == "ablations").conditions
    assert "memory-no-count" in ablations and not set(campaign.LADDER) & set(ablations)
    assert next(s for s in campaign.V1 if s.name == "headline-s7").planned == 16 * 50 * 3


def test_the_memory_v2_plan_checks_issue_35_at_one_commit():
    by = {s.name: s for s in campaign.MEMORY_V2}
    assert by["test-s7"].conditions == by["ood"].conditions == ("oracle", "memory")
    assert by["ood"].split == "ood" and by["held-out"].goal_style == "reworded-held-out"
    assert by["test-s7"].planned == 16 * 50 * 2 and by["held-out"].planned == 16 * 50
    # no run dir is shared with Results v1, so neither campaign's pin can block the other
    assert not {s.run_dir for s in campaign.V1} & {s.run_dir for s in campaign.MEMORY_V2}
    for plan in campaign.CAMPAIGNS.values():
        assert len({s.name for s in plan}) == len(plan)


@pytest.mark.parametrize("name", ["memory-v3", "memory-v4", "memory-v5", "memory-v6", "memory-v7", "memory-v8", "memory-v9", "memory-v10", "memory-v11", "memory-v12"])
def test_a_later_memory_plan_repeats_memory_v2_in_run_dirs_of_its_own(name):
    """A later pin of issue 35's checks: the same stages, never the run dirs of another plan (the
    campaign refuses rows of a second commit in one run dir)."""
    plan = campaign.CAMPAIGNS[name]
    assert [(s.name, s.conditions, s.episodes, s.split, s.goal_style) for s in plan] == \
        [(s.name, s.conditions, s.episodes, s.split, s.goal_style) for s in campaign.MEMORY_V2]
    others = {s.run_dir for other, p in campaign.CAMPAIGNS.items() if other != name for s in p}
    assert not {s.run_dir for s in plan} & others


def test_a_stage_named_on_the_wrong_results_says_where_it_writes():
    with pytest.raises(ValueError, match="'ood' writes to memory_v10_ood, memory_v11_ood, memory_v12_ood, memory_v2_campaign_ood, memory_v3_ood, memory_v4_ood, memory_v5_ood, memory_v6_ood, memory_v7_ood, memory_v8_ood, memory_v9_ood, results_v1_ood, not here"):
        campaign.stage_rows([], ("ood",), "results_v1_test")
    with pytest.raises(ValueError, match="unknown stage 'nope'"):
        campaign.stage_rows([], ("nope",), "results_v1_test")


def _write_rows(run_dir, commit, n=2):
    run_dir.mkdir(parents=True)
    with open(run_dir / "episodes.jsonl", "w") as fh:
        for ep in range(n):
            fh.write(json.dumps({"task": "StopCube", "condition": "memory", "episode": ep, "seed": 7,
                                 "split": "test", "status": "success", "success": True, "code_commit": commit}) + "\n")


def test_rows_at_another_commit_stop_the_campaign(tmp_path, monkeypatch):
    monkeypatch.setattr(campaign, "RUNS", tmp_path / "runs")
    monkeypatch.setattr(campaign, "PUBLISHED", tmp_path / "published")
    monkeypatch.setattr(campaign, "head_commit", lambda: ("a" * 40, False))
    stages = campaign.V1[:1]
    assert campaign.check_pin(stages) == "a" * 40  # nothing yet: HEAD is the pin
    _write_rows(tmp_path / "runs" / stages[0].run_dir, "b" * 40)
    with pytest.raises(campaign.CampaignError, match="bbbbbbbbbbbb.*HEAD is aaaaaaaaaaaa"):
        campaign.check_pin(stages)
    assert stages[0].done() == 2


def test_a_dirty_checkout_is_refused(monkeypatch):
    monkeypatch.setattr(campaign, "head_commit", lambda: ("a" * 40, True))
    with pytest.raises(campaign.CampaignError, match="uncommitted"):
        campaign.check_pin(campaign.V1[:1])


def test_a_new_clone_resumes_from_published_rows_and_publishes_back(tmp_path, monkeypatch):
    monkeypatch.setattr(campaign, "RUNS", tmp_path / "clone" / "runs")
    monkeypatch.setattr(campaign, "PUBLISHED", tmp_path / "clone" / "published")
    monkeypatch.setattr(campaign, "head_commit", lambda: ("a" * 40, False))
    stages = campaign.V1[:1]
    first = tmp_path / "first_session" / "runs" / stages[0].run_dir
    _write_rows(first, "a" * 40, n=3)
    (first / "config.json").write_text(json.dumps({"git_commit": "a" * 40, "config": {}}))
    results = tmp_path / "main" / "benchmarks" / "results"
    publish(first, stages[0].run_dir, dest_root=results)
    assert stages[0].done() == 0
    assert campaign.resume_from(results, stages) == [campaign.RUNS / stages[0].run_dir]
    assert stages[0].done() == 3 and campaign.check_pin(stages) == "a" * 40
    assert campaign.resume_from(results, stages) == []  # rows already there are never overwritten
    assert campaign.stale_local_copies(results, stages) == []
    monkeypatch.setattr(campaign, "head_commit", lambda: ("c" * 40, False))
    with pytest.raises(campaign.CampaignError, match="aaaaaaaaaaaa"):
        campaign.check_pin(stages)
    assert campaign.publish_all(stages, dest_root=results) == [results / stages[0].run_dir]


def test_an_older_local_copy_is_named_and_never_published_over_more_rows(tmp_path, monkeypatch):
    """A checkout keeps the runs/ copy it resumed once while later sessions publish more: its status
    would count the old rows, and publishing it would drop the newer ones."""
    monkeypatch.setattr(campaign, "RUNS", tmp_path / "clone" / "runs")
    stages = campaign.V1[:1]
    results = tmp_path / "main" / "benchmarks" / "results"
    for session, n in (("first", 3), ("later", 5)):
        run = tmp_path / session / "runs" / stages[0].run_dir
        _write_rows(run, "a" * 40, n=n)
        (run / "config.json").write_text(json.dumps({"git_commit": "a" * 40, "config": {}}))
        publish(run, stages[0].run_dir, dest_root=results, replace=True)
        if session == "first":
            campaign.resume_from(results, stages)  # the clone resumes from the first session's 3 rows
    (stale,) = campaign.stale_local_copies(results, stages)
    assert "has 3 rows" in stale and "has 5" in stale and stages[0].done() == 3
    with pytest.raises(campaign.CampaignError, match="has 3 rows"):
        campaign.publish_all(stages, dest_root=results)
    assert len(read_rows(results / stages[0].run_dir, warn=False)) == 5


def test_no_two_stages_plan_the_same_unit():
    """README blocks join stages by concatenating their rows: that is only right if none overlap."""
    units = {}
    for s in campaign.V1:
        for c in s.conditions:
            for seed in s.seeds:
                key = (s.run_dir, c, seed, s.split, s.goal_style)
                assert key not in units, f"{s.name} and {units[key]} both plan {key}"
                units[key] = s.name


def test_status_estimates_the_cpu_hours_left_from_the_rows_so_far(tmp_path, monkeypatch):
    monkeypatch.setattr(campaign, "RUNS", tmp_path / "runs")
    monkeypatch.setattr(campaign, "PUBLISHED", tmp_path / "results")
    monkeypatch.setattr(campaign, "TASKS", 1)
    stages = (campaign.Stage("head", "v1", ("oracle", "memory"), "0:4"), campaign.Stage("abl", "v1", ("memory-no-count",), "0:4"))
    (tmp_path / "runs" / "v1").mkdir(parents=True)
    rows = [{"task": "StopCube", "condition": c, "episode": e, "seed": 7, "split": "test", "goal_style": "template",
             "status": "success", "success": True, "code_commit": "a" * 40, "wall_s": w}
            for c, w in (("oracle", 1800.0), ("memory", 3600.0)) for e in range(2)]
    (tmp_path / "runs" / "v1" / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    per_row = campaign.seconds_per_row(campaign.local_rows(stages))
    assert per_row == {"oracle": 1800.0, "memory": 3600.0}
    assert campaign.remaining_cpu_hours(stages[0], 4, per_row) == 4 * 0.75  # 4 of 8 rows left at 0.75 h each
    assert campaign.remaining_cpu_hours(stages[1], 0, per_row) == 4.0  # an ablation costs what memory does
    text = campaign.status(stages, workers=2)
    assert "CPU-hours left, from each condition's seconds per row so far: 7.0" in text


def test_every_stage_config_survives_a_resume_and_a_republish(tmp_path, monkeypatch):
    """Stages sharing a run dir each leave a config; a session that resumes from the published copy and
    runs one more stage publishes all of them back, oldest first, the newest as config.json (the bug:
    the clone got config.json only, and the re-publish replaced the published configs with its two)."""
    monkeypatch.setattr(campaign, "RUNS", tmp_path / "clone" / "runs")
    monkeypatch.setattr(campaign, "head_commit", lambda: ("a" * 40, False))
    stages = campaign.V1[:1]
    name = stages[0].run_dir
    first = tmp_path / "first_session" / "runs" / name
    _write_rows(first, "a" * 40, n=3)
    docs = [{"git_commit": "a" * 40, "config": {"stage": s}} for s in ("s7", "recent", "ladder", "s11")]
    for n, doc in enumerate(docs[:2], start=1):
        (first / f"config.{n}.json").write_text(json.dumps(doc))
    (first / "config.json").write_text(json.dumps(docs[2]))
    results = tmp_path / "main" / "benchmarks" / "results"
    publish(first, name, dest_root=results)
    campaign.resume_from(results, stages)
    clone = campaign.RUNS / name
    assert sorted(p.name for p in clone.glob("config*.json")) == ["config.1.json", "config.2.json", "config.json"]
    # the next stage's run sets the latest config aside under the next free number, as write_config_json does
    (clone / "config.json").replace(clone / "config.3.json")
    (clone / "config.json").write_text(json.dumps(docs[3]))
    campaign.publish_all(stages, dest_root=results)
    got = [json.loads((results / name / f).read_text()) for f in ("config.1.json", "config.2.json", "config.3.json", "config.json")]
    assert got == docs
    # a clone that holds only the latest config (what resume_from copied before) loses nothing either
    for p in clone.glob("config.*.json"):
        p.unlink()
    (clone / "config.1.json").write_text(json.dumps(docs[2]))
    campaign.publish_all(stages, dest_root=results)
    assert [json.loads((results / name / f).read_text()) for f in ("config.1.json", "config.2.json", "config.3.json",
                                                                   "config.json")] == docs
    assert not (results / name / "config.4.json").exists()
