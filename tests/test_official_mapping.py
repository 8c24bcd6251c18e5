"""The official backend's mapping (envs/official/mapping.py, slots.py, episodes.py) on a fixture
recorded from the real official envs by ``scripts/record_official_fixture.py``; no ``robomme`` needed."""

import json
from pathlib import Path

import numpy as np
import pytest

from envs.official import mapping as M
from envs.official.episodes import official_episode_spec
from envs.official.slots import HISTORY_OPTIONS, history_slot, nearest

FIXTURES = Path(__file__).parent / "fixtures" / "official"
EPISODES = sorted(FIXTURES.glob("*_ep*.json"))


def load(path):
    return json.loads(path.read_text()), np.load(path.with_suffix(".npz"))


def label_of(options, action):
    return next(o["label"] for o in options if o["action"] == action)


def test_fixture_present_and_small():
    assert EPISODES, f"no fixture under {FIXTURES}: run scripts/record_official_fixture.py"
    total = sum(p.stat().st_size for p in FIXTURES.iterdir())
    assert total < 1_000_000, f"fixture is {total} bytes; keep it under 1 MB"


@pytest.mark.parametrize("path", EPISODES, ids=lambda p: p.stem)
def test_oracle_subgoal_becomes_the_command_that_succeeded(path):
    fx, _ = load(path)
    assert fx["status"] == "success", "the fixture episode was played to success by the benchmark's oracle"
    for d in fx["decisions"]:
        cmd = M.command_for(d["oracle"], d["options"], d["oracle"], label_of(d["options"], d["oracle_action"]))
        assert cmd is not None and cmd.to_action() == d["command"]
        chosen = next(o for o in d["options"] if o["label"] == cmd.choice)
        assert chosen["action"] == d["oracle_action"]
        assert (cmd.point is not None) == chosen["need_parameter"]
        # the words alone (no oracle given) reach the same option where an action text prefixes them
        alone = M.option_label(d["oracle"], d["options"])
        assert alone in (None, cmd.choice)


@pytest.mark.parametrize("path", EPISODES, ids=lambda p: p.stem)
def test_history_slot_alternatives_point_at_each_candidate(path):
    fx, _ = load(path)
    seen = 0
    for d in fx["decisions"]:
        opt = next(o for o in d["options"] if o["action"] == d["oracle_action"])
        pts = [None if p is None else tuple(p) for p in (opt["points"] or [])]
        slot = history_slot(fx["task"], d["oracle_action"], d["oracle"], pts)
        if d["slot"] is None:
            assert slot is None
            continue
        seen += 1
        assert slot.name == d["slot"]["name"] and list(slot.alternatives) == d["slot"]["alternatives"]
        visible = [i for i, p in enumerate(pts) if p is not None]
        assert len(slot.alternatives) == len(visible) >= 2
        # every alternative resolves (benchmark rule: nearest projected candidate) to its own object,
        # and the oracle's segmentation-centroid point to one of them
        for alt, i in zip(slot.alternatives, visible):
            assert nearest(M.subgoal_point(alt), pts) == i
            assert M.strip_points(alt) == M.strip_points(d["oracle"])
        assert nearest(M.subgoal_point(d["oracle"]), pts) in visible
    assert seen == (fx["task"] in HISTORY_OPTIONS and seen), "a slot task's fixture has a slot decision"


@pytest.mark.parametrize("path", EPISODES, ids=lambda p: p.stem)
def test_info_and_batches_map_to_our_interface(path):
    fx, frames = load(path)
    reset = fx["reset"]
    assert M.goal_texts(reset["info"])[0] == fx["goal"]
    assert fx["video_len"] == reset["n"] - 1, "the reset lists are the video plus the current frame"
    assert {"front_rgb_list", "joint_state_list"} <= set(reset["obs_keys"])
    assert reset["front_shape"] == [256, 256, 3]
    arm = fx["task"] not in ("PatternLock", "RouteStick")
    for d in fx["decisions"]:
        r, ours = d["result"], d["ours"]
        assert M.status_of(r["info"]) == ours["status"]
        clock = M.elapsed_steps(r["info"])
        assert clock == ours["clock"]
        assert ours["frame_clocks"] == M.batch_clocks(r["n"], clock)[-3:]
        assert ours["n_frames"] == r["n"]
        assert r["actions_captured"] >= r["n"], "every env step of the batch has its executed action"
        assert all(len(a) == (8 if arm else 7) for a in r["last_actions"])
        assert all(len(q) == 7 for q in r["joint_state"])
    for key in frames.files:
        f = M.as_uint8_rgb(frames[key])
        assert f.shape == (64, 64, 3) and f.dtype == np.uint8 and type(f) is np.ndarray


def test_statuses_and_errors_name_the_bad_value():
    assert M.status_of({"status": "timeout"}) == "timeout"
    assert M.status_of(None) == "error"
    with pytest.raises(ValueError, match="'weird'"):
        M.status_of({"status": "weird"})
    with pytest.raises(ValueError, match="no <y, x>"):
        M.with_point("put down the container", (1, 2))
    with pytest.raises(ValueError, match=r"\(4,\)"):
        M.as_uint8_rgb(np.zeros(4))


def test_option_label_prefers_the_longest_action_and_refuses_unknown_verbs():
    opts = [{"label": "a", "action": "press the button"}, {"label": "b", "action": "press the button to finish"},
            {"label": "c", "action": "put it down"}]
    assert M.option_label("press the button to finish", opts) == "b"
    assert M.option_label("press the button at <10, 20>", opts) == "a"
    assert M.option_label("put it down", opts) == "c"
    assert M.option_label("wave at the camera", opts) is None
    assert M.option_label("", opts) is None
    # a re-grounded oracle subgoal keeps the oracle's option even when no action text prefixes it
    oracle = "drop the cube onto target at <100, 120>"
    assert M.option_label("drop the cube onto target at <90, 60>", opts + [{"label": "d", "action": "drop onto"}],
                          oracle, "d") == "d"
    assert M.strip_points("pick up the container at <116, 156> that hides the green cube") == \
        "pick up the container that hides the green cube"


@pytest.mark.parametrize("path", EPISODES, ids=lambda p: p.stem)
def test_official_episode_spec_reads_the_metadata_record(path, tmp_path):
    fx, _ = load(path)
    rec = fx["metadata_record"]
    d = tmp_path / fx["split"]
    d.mkdir()
    (d / f"record_dataset_{fx['task']}_metadata.json").write_text(json.dumps({"env_id": fx["task"], "records": [rec]}))
    spec = official_episode_spec(fx["task"], fx["episode"], fx["split"], root=tmp_path)
    assert spec.to_dict() == fx["spec"]
    with pytest.raises(ValueError, match="no episode 49"):
        official_episode_spec(fx["task"], 49, fx["split"], root=tmp_path)
    with pytest.raises(ValueError, match="no split 'ood'"):
        official_episode_spec(fx["task"], 0, "ood", root=tmp_path)
