"""Every split resets: an unusable scene moves to the next retry offset, as the benchmark's generator
does; past the split's last offset the error names task, split, episode and why; every split's
manifest lists checked episodes."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from envs import make_env
from envs.episodes import MANIFEST_DIR, SPLITS, EpisodeSpec, base_seed, difficulty_for, retry_seeds
from envs.robomme_env import EpisodeUnavailable, SceneUnavailable

# val MoveCube episode 0: at offset 0 the demonstrated hook has no IK solution (checked by the
# manifest builder, which moved the episode to r = 1)
TASK, SPLIT, EPISODE = "MoveCube", "val", 0


@pytest.fixture(scope="module")
def env():
    e = make_env(TASK, video_stride=10**6)
    yield e
    e.close()


def _spec_at(offset: int) -> EpisodeSpec:
    return EpisodeSpec(TASK, SPLIT, EPISODE, base_seed(TASK, SPLIT, EPISODE) + offset, difficulty_for(EPISODE))


def test_an_unusable_scene_moves_to_the_next_offset(env):
    with pytest.raises(SceneUnavailable, match="demonstration did not complete"):
        env.reset(options={"episode": _spec_at(0), "retry": False})
    _, info = env.reset(options={"episode": _spec_at(0)})
    assert info["retry_offset"] == 1 and info["episode"] == _spec_at(1)


def test_past_the_last_offset_the_error_names_the_episode(env, monkeypatch):
    monkeypatch.setitem(SPLITS, SPLIT, replace(SPLITS[SPLIT], max_retry=0))
    with pytest.raises(EpisodeUnavailable) as err:
        env.reset(options={"episode": _spec_at(0)})
    msg = str(err.value)
    assert all(part in msg for part in (TASK, SPLIT, f"episode {EPISODE}", "demonstration did not complete"))


def test_retry_seeds_stay_within_the_split():
    spec = _spec_at(2)
    seeds = retry_seeds(spec)
    assert seeds[0] == spec.env_seed and seeds[-1] == base_seed(TASK, SPLIT, EPISODE) + SPLITS[SPLIT].max_retry


@pytest.mark.parametrize("split", ["val", "test"])
def test_manifests_list_every_episode_of_the_split(split):
    m = json.loads((MANIFEST_DIR / f"{split}.json").read_text())
    size = SPLITS[split].size
    for task, offsets in m.items():
        if task == "unsolved":
            continue
        assert sorted(map(int, offsets)) == list(range(size)), task
        assert all(0 <= r <= SPLITS[split].max_retry for r in offsets.values())
