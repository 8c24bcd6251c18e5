"""Executor profiles (``--executor-profile``): loading, the draws, the motion transforms, and real
failures in real episodes (a missed grasp leaves the cube on the table; a drop lets it fall; the
clean profile changes nothing)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from policies import failure_model as F
from policies.executor_profile import FailureRates, load_profile, skill_of


def test_skills_are_read_from_the_option():
    assert skill_of("pick") == "grasp"
    assert [skill_of(o) for o in ("place", "put_down", "move_over", "insert_left")] == ["carry"] * 4
    assert skill_of("press") == "press"
    assert [skill_of(o) for o in ("route_left_clockwise", "move_up", "stick_start")] == ["stick"] * 3
    assert skill_of("wait") is None and skill_of(None) is None


def test_a_bad_profile_is_named(tmp_path):
    with pytest.raises(ValueError, match="neither a built-in"):
        load_profile(str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"skills": {"grasp": {"miss": 1.5}}}))
    with pytest.raises(ValueError, match="miss must be a probability"):
        load_profile(str(bad))
    bad.write_text(json.dumps({"skills": {"juggle": {"miss": 0.1}}}))
    with pytest.raises(ValueError, match="unknown skill 'juggle'"):
        load_profile(str(bad))
    bad.write_text(json.dumps({"skills": {"grasp": {"mis": 0.1}}}))
    with pytest.raises(ValueError, match="skills.grasp"):
        load_profile(str(bad))
    bad.write_text(json.dumps({"tasks": {"PickTwice": {}}}))
    with pytest.raises(ValueError, match="unknown task 'PickTwice'"):
        load_profile(str(bad))
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_profile(str(bad))


def test_task_overrides_replace_a_skill_and_clean_draws_nothing(tmp_path):
    p = tmp_path / "mine.json"
    p.write_text(json.dumps({"name": "mine", "skills": {"grasp": {"miss": 0.2}},
                             "tasks": {"InsertPeg": {"grasp": {"miss": 0.9}}}}))
    prof = load_profile(str(p))
    assert prof.name == "mine" and prof.active
    assert prof.rates("PickXtimes", "grasp").miss == 0.2 and prof.rates("InsertPeg", "grasp").miss == 0.9
    assert not prof.rates("PickXtimes", "press").active
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert F.draw_failure(rng, FailureRates(), "grasp") is None
    assert F.draw_failure(rng, FailureRates(drop=0.5), "grasp") is None  # no grasp failure declared
    assert rng.bit_generator.state == state  # nothing drawn: the clean executor's stream is untouched
    assert not load_profile("clean").active


def test_draws_are_deterministic_and_follow_the_rates():
    rates = FailureRates(miss_retry=0.2, miss=0.1, wrong_object=0.1)
    a = [F.draw_failure(np.random.default_rng(s), rates, "grasp") for s in range(400)]
    b = [F.draw_failure(np.random.default_rng(s), rates, "grasp") for s in range(400)]
    assert [(x.kind, x.params) if x else None for x in a] == [(x.kind, x.params) if x else None for x in b]
    kinds = [x.kind if x else None for x in a]
    assert 0.3 < sum(k is not None for k in kinds) / 400 < 0.5
    assert {"miss_retry", "miss", "wrong_object"} <= set(kinds)
    assert FailureRates(miss=0.4).scaled(3).miss == 1.0 and FailureRates(miss=0.1).scaled(0).active is False


def test_motion_transforms():
    acts = [np.array([i, 0, 1.0], dtype=np.float32) for i in range(10)]
    assert len(list(F.truncated(iter(acts), 4))) == 4
    slipped = list(F.slipping(iter(acts), 3, -1.0))
    assert [a[-1] for a in slipped] == [1.0] * 3 + [-1.0] * 7
    waiting = [acts[0]] * 5 + acts[1:4]
    assert len(list(F.hurried(iter(waiting), 3))) == len(waiting) - 3
    held = list(F.delayed(iter(acts[:2]), lambda n: iter([acts[9]] * n), 3))
    assert len(held) == 5 and np.array_equal(held[0], acts[9])
    assert [len(list(F.chained(iter(acts[:2]), lambda: iter(acts[:3]))))] == [5]
    opts = ["route_left_clockwise", "route_left_counterclockwise", "route_right_clockwise", "stick_start", "press"]
    sibs = {F.sibling_option("route_left_clockwise", opts, u) for u in np.linspace(0, 0.99, 9)}
    assert sibs == {"route_left_counterclockwise", "route_right_clockwise"}
    assert F.sibling_option("stick_start", opts + ["stick_return"], 0.5) is None
    assert F.sibling_option("move_up", ["move_up", "move_over", "move_down"], 0.0) == "move_down"


def _run(tmp_path, profile: dict | str, task="PickXtimes", episode="0", name="run"):
    from experiments.loop.results import read_rows
    from experiments.run import main

    spec = profile
    if isinstance(profile, dict):
        spec = str(tmp_path / f"{name}.json")
        (tmp_path / f"{name}.json").write_text(json.dumps(profile))
    out = tmp_path / name
    rc = main(["--tasks", task, "--split", "train", "--episodes", episode, "--conditions", "oracle",
               "--executor-profile", spec, "--wandb", "disabled", "--out", str(out)])
    assert rc == 0
    return read_rows(out)[0]


@pytest.mark.timeout(600)
def test_failures_happen_in_the_simulator_and_are_listed_in_the_row(tmp_path):
    """Every pick misses without a retry: nothing is ever lifted, so the oracle arm cannot succeed on
    PickXtimes, and each miss is a row event. The clean profile gives the exact executor's row."""
    clean = _run(tmp_path, "clean", name="clean")
    assert clean["status"] == "success" and clean["executor_events"] == [] and clean["executor_profile"] == "clean"
    missed = _run(tmp_path, {"name": "all-miss", "skills": {"grasp": {"miss": 1.0}}}, name="miss")
    assert missed["executor_profile"] == "all-miss"
    assert missed["status"] != "success"
    ev = missed["executor_events"]
    assert ev and all(e["skill"] == "grasp" and e["failure"] == "miss" and e["option"] == "pick" for e in ev)
    assert {e["attempt"] for e in ev} <= {"high", "offset"}


def test_a_profile_is_refused_where_it_cannot_act_and_taken_on_both_backends(tmp_path):
    from experiments.loop.config import ConfigError, ExperimentConfig

    p = tmp_path / "p.json"
    p.write_text(json.dumps({"skills": {"grasp": {"miss": 0.1}}}))
    from envs.official.install import robomme_available

    if robomme_available()[0]:  # the profile perturbs the benchmark's planner there (policies/official_faults.py)
        assert ExperimentConfig.from_flat(backend="robomme", executor_profile=str(p)).policy.executor_profile == str(p)
    else:  # without the official package the install is what is missing, not the profile
        with pytest.raises(ConfigError, match="robomme_benchmark"):
            ExperimentConfig.from_flat(backend="robomme", executor_profile=str(p))
    with pytest.raises(ConfigError, match="--policy openpi executes its own actions"):
        ExperimentConfig.from_flat(policy="openpi", executor_profile=str(p))
    with pytest.raises(ConfigError, match="--executor-profile: executor profile 'nope'"):
        ExperimentConfig.from_flat(executor_profile="nope")
    assert ExperimentConfig.from_flat(executor_profile=str(p)).policy.executor_profile == str(p)
