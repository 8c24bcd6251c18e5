"""Random streams come from the episode's identity: every episode draws afresh, every condition that
shares a composer draws the same for the same episode, and each row says which streams it used."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.run import main
from experiments.loop.streams import STREAM_NAMES, episode_streams, stream_seed
from policies.composers import HistoryBlindComposer


def test_streams_differ_by_every_part_of_the_identity():
    base = episode_streams(7, "PickXtimes", "test", 0)
    assert set(base) == set(STREAM_NAMES)
    assert len(set(base.values())) == len(base)  # the named streams of one episode are distinct
    for other in (episode_streams(11, "PickXtimes", "test", 0), episode_streams(7, "BinFill", "test", 0),
                  episode_streams(7, "PickXtimes", "val", 0), episode_streams(7, "PickXtimes", "test", 1)):
        assert all(other[k] != base[k] for k in base)
    assert base == episode_streams(7, "PickXtimes", "test", 0)


def test_unknown_stream_and_bad_seed_are_named():
    with pytest.raises(ValueError, match="'noise'"):
        stream_seed(7, "PickXtimes", "test", 0, "noise")
    with pytest.raises(ValueError, match="-1"):
        stream_seed(-1, "PickXtimes", "test", 0, "policy")


class _Slot:
    name = "repeat or stop"
    alternatives = tuple(f"option {i}" for i in range(6))


class _FakeTask:
    def history_slot(self):
        return _Slot()


class _Env:
    """The two things the composer asks an env for (the oracle's subgoal and the slot)."""

    unwrapped = _FakeTask()

    def get_wrapper_attr(self, name):
        assert name == "oracle_subgoal"
        return lambda: "oracle"


def _draws(seed: int) -> list[str]:
    c = HistoryBlindComposer(_Env())
    c.reset("goal", seed, [])
    return [c.propose({}, {"subgoal_index": i}) for i in range(12)]


def test_two_episodes_of_one_seed_draw_differently_and_one_episode_draws_the_same():
    s0 = episode_streams(7, "PickXtimes", "test", 0)["composer"]
    s1 = episode_streams(7, "PickXtimes", "test", 1)["composer"]
    assert _draws(s0) != _draws(s1)
    assert _draws(s0) == _draws(s0)


def test_rows_record_streams_paired_across_conditions(tmp_path):
    """Through the real harness: the row of each episode names its streams; no-memory and oracle of
    one episode share them, two episodes of one seed do not, and a rerun draws the same."""
    out = tmp_path / "run"
    argv = ["--tasks", "PickXtimes", "--episodes", "0", "1", "--seeds", "7", "--conditions", "oracle", "no-memory",
            "--wandb", "disabled", "--split", "train"]
    assert main([*argv, "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    by = {(r["condition"], r["episode"]): r for r in rows}
    assert by[("oracle", 0)]["streams"] == by[("no-memory", 0)]["streams"] == episode_streams(7, "PickXtimes", "train", 0)
    assert by[("no-memory", 0)]["streams"]["composer"] != by[("no-memory", 1)]["streams"]["composer"]
    assert all(r["status"] in ("success", "fail", "timeout") for r in rows)
    again = tmp_path / "again"
    assert main([*argv, "--out", str(again)]) == 0
    rows2 = {(r["condition"], r["episode"]): r for r in map(json.loads, (again / "episodes.jsonl").read_text().splitlines())}
    for key, r in by.items():
        assert [s["executed"] for s in r["subgoals"]] == [s["executed"] for s in rows2[key]["subgoals"]]
        assert r["success"] == rows2[key]["success"]


def test_policy_noise_draws_come_from_the_policy_stream():
    from policies.noise import ScriptedNoise

    with pytest.raises(ValueError, match="1.5"):
        ScriptedNoise(p_fail_grasp=1.5)
    rng_a = np.random.default_rng(episode_streams(7, "PickXtimes", "test", 0)["policy"])
    rng_b = np.random.default_rng(episode_streams(7, "PickXtimes", "test", 1)["policy"])
    assert rng_a.random(8).tolist() != rng_b.random(8).tolist()
