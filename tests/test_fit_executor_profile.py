"""The executor-profile fit's arithmetic: the secant step, the warm start, what it refuses."""

from __future__ import annotations

import json
import math

import pytest

from scripts.fit_executor_profile import _first_scale, _next_scale, profile_for, start_scales


def test_secant_step_lands_on_the_target_of_a_geometric_success_curve():
    # success(s) = 100 * exp(-0.5 s): StopCube's target 49.7 is reached at s = -2 ln(0.497)
    trials = {0.0: 100.0, 1.0: 100.0 * math.exp(-0.5)}
    s = _next_scale("StopCube", trials, n=50)
    assert s == pytest.approx(-2 * math.log(0.497), abs=1e-3)


def test_secant_step_interpolates_between_the_bracketing_trials():
    trials = {0.0: 100.0, 1.0: 90.0, 4.0: 30.0, 2.0: 70.0}  # target 49.7 lies between 2 and 4
    s = _next_scale("StopCube", trials, n=50)
    assert 2.0 < s < 4.0


def test_no_measurable_effect_quadruples_the_scale():
    assert _next_scale("InsertPeg", {0.0: 90.0, 1.0: 90.0}, n=12) == 4.0


def test_warm_start_takes_an_earlier_fit_and_falls_back_to_the_declared_shape(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile_for({"StopCube": 4.2, "PickXtimes": 0.0}, {"scales": {"StopCube": 4.2, "PickXtimes": 0.0}})))
    start = start_scales(path)
    assert _first_scale("StopCube", start) == 4.2
    assert _first_scale("PickXtimes", start) == 1.0  # clean before: this fit starts at the shape
    assert _first_scale("RouteStick", None) == 1.0


def test_a_profile_without_a_fit_record_is_refused_naming_it(tmp_path):
    path = tmp_path / "hand_written.json"
    path.write_text(json.dumps({"name": "mine", "skills": {}, "tasks": {}}))
    with pytest.raises(SystemExit, match="hand_written.json"):
        start_scales(path)


def test_the_official_fit_has_its_own_profile_and_a_clear_error_until_it_is_fitted():
    from policies.executor_profile import BUILTIN, load_profile
    from scripts.fit_executor_profile import BACKEND_OUTPUT

    name, out, table = BACKEND_OUTPUT["robomme"]
    assert name == "pi05-like-official" and BUILTIN[name] == out and out != BACKEND_OUTPUT["robomem"][1]
    assert profile_for({"InsertPeg": 2.0}, name=name)["name"] == name
    if not out.is_file():
        with pytest.raises(ValueError, match="has not been fitted here"):
            load_profile(name)
    else:
        assert load_profile(name).name == name


def test_a_trial_directory_is_named_by_its_scales_whatever_their_order(tmp_path):
    from scripts.fit_executor_profile import trial_dir

    a = trial_dir(tmp_path, {"PickXtimes": 1.5, "StopCube": 2.0})
    assert a == trial_dir(tmp_path, {"StopCube": 2.0, "PickXtimes": 1.5})
    assert a != trial_dir(tmp_path, {"StopCube": 2.0, "PickXtimes": 1.6})
    assert trial_dir(tmp_path, {"StopCube": 0.0}).name == "clean"


@pytest.mark.slow
def test_a_fit_with_a_work_directory_resumes_instead_of_running_again(tmp_path):
    """The second call finds the trial's rows and runs no episode: its rows file is unchanged."""
    from scripts.fit_executor_profile import oracle_success, trial_dir

    scales = {"PickXtimes": 1.0}
    first = oracle_success(scales, "0:1", 1, 7, "robomem", tmp_path)
    rows = trial_dir(tmp_path, scales) / "run" / "episodes.jsonl"
    before = rows.read_bytes()
    assert len(before.splitlines()) == 1 and first["PickXtimes"] in (0.0, 100.0)
    assert oracle_success(scales, "0:1", 1, 7, "robomem", tmp_path) == first
    assert rows.read_bytes() == before
