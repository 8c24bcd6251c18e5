"""The best memoryless predictor (``best-memoryless``): its prior, its condition, and a real fit."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.loop.conditions import ALL_CONDITIONS, condition_from_name, condition_sort_key
from experiments.loop.config import PAPER_CONDITIONS, ConfigError, parse_config
from policies.slot_prior import SlotPrior, goal_number, slot_key


@pytest.mark.parametrize("goal, n", [
    ("pick up the red cube and place it on the target, repeating this action three times, then press the button", 3),
    ("press the button to stop the cube exactly at the target on its second visit", 2),
    ("touch the wall twice", 2),
    ("pick up the container hiding the red cube", None),
])
def test_the_goal_number_is_what_the_goal_states(goal, n):
    assert goal_number(goal) == n


def test_the_prior_chooses_by_its_counts_and_is_uniform_where_it_saw_nothing():
    prior = SlotPrior()
    key = slot_key("repeat or stop", 2, 3)
    for right in (0, 0, 1):
        prior.add("PickXtimes", key, 2, right)
    assert prior.counts["PickXtimes"][key] == [2, 1]
    rng = np.random.default_rng(0)
    assert {prior.choose("PickXtimes", key, 2, rng, "argmax") for _ in range(20)} == {0}
    matched = [prior.choose("PickXtimes", key, 2, np.random.default_rng(s), "matched") for s in range(600)]
    assert abs(np.mean(matched) - 1 / 3) < 0.06  # drawn with the frequencies it was right
    unseen = [prior.choose("PickXtimes", slot_key("repeat or stop", 2, 5), 2, np.random.default_rng(s)) for s in range(400)]
    assert abs(np.mean(unseen) - 0.5) < 0.08
    with pytest.raises(ValueError, match="right position 2 is not among 2"):
        prior.add("PickXtimes", key, 2, 2)
    with pytest.raises(ValueError, match="unknown prior mode 'best'"):
        prior.choose("PickXtimes", key, 2, rng, "best")


def test_the_prior_round_trips_and_a_missing_file_says_how_to_fit_one(tmp_path):
    prior = SlotPrior(counts={"StopCube": {"k|3|2": [1, 4, 0]}}, modes={"StopCube": "argmax"}, fit={"episodes": "0:2"})
    prior.save(tmp_path / "p.json")
    back = SlotPrior.load(tmp_path / "p.json")
    assert back.to_dict() == prior.to_dict()
    with pytest.raises(FileNotFoundError, match="scripts.fit_slot_prior"):
        SlotPrior.load(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text('{"modes": {"StopCube": "guess"}}')
    with pytest.raises(ValueError, match="unknown modes"):
        SlotPrior.load(tmp_path / "bad.json")


def test_best_memoryless_is_a_named_condition_outside_the_paper_preset(tmp_path):
    c = condition_from_name("best-memoryless")
    assert c.composer == "prior" and not c.memory and c.name == "best-memoryless"
    assert "best-memoryless" not in ALL_CONDITIONS and "best-memoryless" not in PAPER_CONDITIONS
    order = sorted(["memory", "best-memoryless", "no-memory", "oracle"], key=condition_sort_key)
    assert order == ["oracle", "no-memory", "best-memoryless", "memory"]
    with pytest.raises(ConfigError, match="best-memoryless: slot prior .*nowhere.json not found"):
        parse_config(["--conditions", "best-memoryless", "--slot-prior", "/nowhere.json"])
    SlotPrior().save(tmp_path / "p.json")
    cfg = parse_config(["--conditions", "best-memoryless", "--slot-prior", str(tmp_path / "p.json")])
    assert cfg.composer_for("best-memoryless") == "prior" and cfg.composer.slot_prior == str(tmp_path / "p.json")
    with pytest.raises(ValueError, match="unknown condition 'best-memoryles'.*best-memoryless"):
        condition_from_name("best-memoryles")


def test_a_fit_on_a_real_train_episode_records_the_oracles_choices_and_plays_both_modes(tmp_path):
    from scripts.fit_slot_prior import main

    out, report = tmp_path / "prior.json", tmp_path / "fit.md"
    assert main(["--tasks", "PickXtimes", "StopCube", "--episodes", "2", "--out", str(out), "--report", str(report)]) == 0
    prior = SlotPrior.load(out)
    # train 2 asks for two repetitions: one slot after the first place (pick again), one after the second (press)
    assert prior.counts["PickXtimes"] == {"repeat or stop|2|2": [1, 1]}
    # StopCube weights its blind draw by repeating "remain static" once per arrival left; the key
    # holds the two distinct choices only (how many repeats would tell how many arrivals passed)
    assert set(prior.counts["StopCube"]) == {"press at this arrival or wait|2|2"}
    assert prior.modes["PickXtimes"] in ("argmax", "matched") and prior.fit["split"] == "train"
    assert "| PickXtimes | 2 |" in report.read_text()


def test_the_report_pairs_memory_with_both_memoryless_arms():
    from experiments.reporting.report_sections import paired_section

    rows = []
    for ep in range(20):
        for cond, ok in (("no-memory", ep < 4), ("best-memoryless", ep < 10), ("memory", ep < 18)):
            rows.append({"task": "PickXtimes", "condition": cond, "episode": ep, "seed": 7, "split": "test",
                         "status": "success" if ok else "fail", "success": ok})
    text, comps = paired_section(rows, n_resamples=200)
    assert "## Paired comparisons against `no-memory`" in text and "## Paired comparisons against `best-memoryless`" in text
    fair = [c for c in comps if c.b == "best-memoryless" and c.a == "memory" and c.scope == "all"]
    assert len(fair) == 1 and fair[0].n == 20 and round(fair[0].diff * 100) == 40 and fair[0].better == 8


def test_the_prior_sees_the_choices_in_the_views_order_not_the_tasks():
    from policies.composers import visible_order

    alts = ("pick up the container at <120, 40> that hides the red cube",
            "pick up the container at <90, 200> that hides the red cube",
            "pick up the container at <120, 40> that hides the red cube")  # a repeat weights a blind draw
    assert visible_order(alts) == (alts[1], alts[0])  # top to bottom in the image, each once
    assert visible_order(("press the button at <60, 100> to stop", "pick up the red cube at <150, 90>")) == \
        ("pick up the red cube at <150, 90>", "press the button at <60, 100> to stop")  # by what they do first
