"""The episode manifest: seed formula, difficulty, and errors that name the bad value."""

import pytest

from envs.episodes import ALL_TASKS, base_seed, check_task, difficulty_for, episode_spec


def test_seed_formula_matches_the_benchmark_examples():
    assert base_seed("PickXtimes", "test", 0) == 510000
    assert base_seed("BinFill", "train", 0) == 4000
    assert base_seed("RouteStick", "val", 3) == 1_000_000 + 16 * 10_000 + 300


def test_difficulty_by_index_mod_4():
    assert [difficulty_for(i) for i in range(8)] == ["easy", "easy", "medium", "hard"] * 2
    test = [difficulty_for(i) for i in range(50)]
    assert (test.count("easy"), test.count("medium"), test.count("hard")) == (26, 12, 12)


def test_sixteen_tasks():
    assert len(ALL_TASKS) == 16 and len(set(ALL_TASKS)) == 16


def test_unknown_task_is_named_with_a_suggestion():
    with pytest.raises(ValueError, match=r"'PickXtime'.*did you mean 'PickXtimes'"):
        check_task("PickXtime")


@pytest.mark.parametrize("idx", [-1, 50, 1000])
def test_bad_episode_index_is_named(idx):
    with pytest.raises(ValueError, match=rf"episode index {idx}"):
        episode_spec("PickXtimes", idx, "test")


def test_unknown_split_is_named():
    with pytest.raises(ValueError, match="'tst'"):
        episode_spec("PickXtimes", 0, "tst")


def test_spec_is_explicit_and_stable():
    a, b = episode_spec("PickXtimes", 7), episode_spec("PickXtimes", 7)
    assert a == b and a.difficulty == "hard" and a.env_seed >= 510700
