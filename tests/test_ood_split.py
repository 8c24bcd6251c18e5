"""The ood split: seeds, tiers, step budget, and that each tier's sampler options take effect.

Layouts are drawn without building a scene (``sample_layout`` on an un-initialised task object),
so every task and tier is checked over many seeds in a second or two.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs import task_class
from envs.episodes import ALL_TASKS, SPLITS, TASK_CODES, base_seed, difficulty_for, episode_spec
from envs.ood import NEW_COLOURS, OOD_TIERS, n_tiers, ood_tier, parse_difficulty, tier_of

# tiers per task in the benchmark's own ood set (robomme_ood.md)
EXPECTED_TIERS = {
    "PickXtimes": 3, "PatternLock": 3, "RouteStick": 3,
    "VideoUnmask": 4, "ButtonUnmask": 4, "VideoUnmaskSwap": 4, "ButtonUnmaskSwap": 4,
    "SwingXtimes": 5, "StopCube": 5, "MoveCube": 1, "InsertPeg": 1,
}


def layouts(task: str, tier: int, n: int = 12):
    """``n`` layouts of ``task`` at ``tier``, from the first ``n`` ood seeds of that tier."""
    cls = task_class(task)
    obj = object.__new__(cls)  # no scene: sample_layout only reads the rng and the tier
    obj.ood = ood_tier(task, tier)
    out = []
    for ep in range(tier - 1, 50, n_tiers(task)):
        if len(out) == n:
            break
        out.append(obj.sample_layout(np.random.default_rng(base_seed(task, "ood", ep)), "hard"))
    return out


def test_split_and_budget():
    sp = SPLITS["ood"]
    assert (sp.size, sp.reporting, sp.max_steps) == (100, 50, 1800)
    assert all(SPLITS[s].max_steps == 1300 for s in ("train", "val", "test"))
    assert base_seed("StopCube", "ood", 3) == 2_000_000 + TASK_CODES["StopCube"] * 10_000 + 300
    # its own seed range: no ood seed is a seed of another split
    ood = {base_seed(t, "ood", e) + r for t in ALL_TASKS for e in range(sp.size) for r in range(sp.max_retry + 1)}
    # the development range is disjoint from the reported one and from every other task's seeds
    assert len(ood) == len(ALL_TASKS) * sp.size * (sp.max_retry + 1)
    for split in ("train", "val", "test"):
        other = {base_seed(t, split, e) + r for t in ALL_TASKS for e in range(SPLITS[split].size)
                 for r in range(SPLITS[split].max_retry + 1)}
        assert not ood & other, split


def test_tiers_by_index_and_in_distribution_untouched():
    for task in ALL_TASKS:
        assert n_tiers(task) == EXPECTED_TIERS.get(task, 2), task
        assert {tier_of(task, e) for e in range(10)} == set(range(1, n_tiers(task) + 1))
        spec = episode_spec(task, 7, "ood")
        assert spec.difficulty == f"ood{tier_of(task, 7)}" and parse_difficulty(spec.difficulty) == ("hard", tier_of(task, 7))
    assert [difficulty_for(i) for i in range(4)] == ["easy", "easy", "medium", "hard"]
    assert episode_spec("PickXtimes", 3, "test").difficulty == "hard"
    assert parse_difficulty("medium") == ("medium", 0)
    with pytest.raises(ValueError):
        ood_tier("PickXtimes", 4)


def _in(value, option):
    lo, hi = option if isinstance(option, tuple) else (option, option)
    return lo <= value <= hi


@pytest.mark.parametrize("task", ["PickXtimes", "SwingXtimes"])
def test_counting_more_repetitions_and_new_colour_distractors(task):
    for tier in OOD_TIERS[task]:
        for L in layouts(task, tier.tier):
            assert _in(L.repeats, tier.options["repeats"])
            labels = [c.label for c in L.cubes]
            extra = labels[3:]
            assert L.target_cube < 3 and labels[L.target_cube] in ("red", "green", "blue")
            assert _in(len(extra), tier.options["distractors"]) and set(extra) <= set(NEW_COLOURS)


def test_stop_cube_late_passes_fastest_speed():
    for tier in OOD_TIERS["StopCube"]:
        for L in layouts("StopCube", tier.tier):
            assert L.stop_time == tier.options["stop_pass"] and L.pass_steps == 60
            assert len(L.arrivals) == L.max_passes >= L.stop_time
            # the cube keeps sliding back and forth up to the last pass
            assert abs(L.offset(L.arrival(L.stop_time))) < 1e-6


def test_bin_fill_more_deposits():
    for tier in OOD_TIERS["BinFill"]:
        for L in layouts("BinFill", tier.tier):
            assert sum(n for _, n in L.targets) == tier.options["deposits"] and len(L.cubes) == 12


def test_pick_highlight_arbitrary_hues_and_no_colour_name():
    hues = []
    for tier in OOD_TIERS["PickHighlight"]:
        for L in layouts("PickHighlight", tier.tier):
            assert len(L.cubes) == tier.options["cubes"] and len(L.highlighted) == tier.options["highlights"]
            assert L.rgbs is not None and len(L.rgbs) == len(L.cubes)
            import colorsys

            hues += [colorsys.rgb_to_hsv(*rgb)[0] for rgb in L.rgbs]
    # arbitrary: spread over the whole hue circle, not three primaries
    assert np.histogram(hues, bins=6, range=(0, 1))[0].min() > 0


@pytest.mark.parametrize("task", ["VideoUnmask", "ButtonUnmask", "VideoUnmaskSwap", "ButtonUnmaskSwap"])
def test_unmask_picks_swaps_and_new_colours(task):
    seen, counts = set(), []
    for tier in OOD_TIERS[task]:
        for L in layouts(task, tier.tier):
            assert len(L.pick_colours) == tier.options["picks"] and set(L.pick_colours) <= set(L.cube_colours)
            seen |= set(L.cube_colours)
            if "swaps" in tier.options:
                assert _in(len(L.swaps), tier.options["swaps"])
                assert all(a != b for a, b in L.swaps)
            else:
                counts.append(len(L.containers))  # "up to" the option: sampling stops when the region is full
    assert set(NEW_COLOURS) <= seen
    assert not counts or np.mean(counts) >= 8


def test_reference_more_swaps_targets_placements():
    for tier in OOD_TIERS["VideoRepick"]:
        for L in layouts("VideoRepick", tier.tier):
            assert len(L.cubes) == tier.options["cubes"] and len({c.label for c in L.cubes}) == 1
            assert _in(len(L.swap_firsts), tier.options["swaps"]) and L.repeats == tier.options["repeats"]
    for tier in OOD_TIERS["VideoPlaceOrder"]:
        for L in layouts("VideoPlaceOrder", tier.tier):
            assert len(L.targets) == len(L.visit_order) == tier.options["targets"]
    for tier in OOD_TIERS["VideoPlaceButton"]:
        for L in layouts("VideoPlaceButton", tier.tier):
            assert len(L.targets) == 4 + tier.options["extra_targets"]


def test_imitation_longer_patterns_routes_wider_workspace_fourth_peg():
    for tier in OOD_TIERS["PatternLock"]:
        for L in layouts("PatternLock", tier.tier):
            assert _in(len(L.path), tier.options["length"])
    for tier in OOD_TIERS["RouteStick"]:
        for L in layouts("RouteStick", tier.tier):
            assert _in(len(L.walk) - 1, tier.options["steps"])
    from envs.tasks.move_cube import ANNULUS

    yaws = []
    for L in layouts("MoveCube", 1, n=30):
        c = L.second
        assert ANNULUS[0] - 1e-9 <= np.hypot(c.goal.x, c.goal.y) <= ANNULUS[1] + 1e-9
        yaws.append(c.peg.yaw)
    assert max(abs(y) for y in yaws) > np.pi / 2
    L = layouts("InsertPeg", 1, n=30)
    assert all(len(x.pegs) == 4 for x in L)
    assert max(abs(p.yaw) for x in L for p in x.pegs) > np.pi / 2


def test_an_unsolvable_ood_episode_is_an_error_naming_why(monkeypatch):
    """On ood (solvable by construction) a manifest-unsolved episode raises at reset, before any scene."""
    import envs.episodes as E
    from envs.robomme_env import EpisodeUnavailable, RoboMMEEnv

    fake = {"StopCube": {"3": 2}, "unsolved": {"StopCube": {"3": "r=0: fail pressed off the target"}}}
    monkeypatch.setattr(E, "_manifest", lambda split: fake if split == "ood" else {})
    assert E.unsolved_reason("StopCube", "ood", 3) == "r=0: fail pressed off the target"
    env = RoboMMEEnv.__new__(RoboMMEEnv)  # the check runs before the inner env is touched
    env.budget_from_split, env._max_steps = True, 1300
    env.env = type("Inner", (), {"unwrapped": type("T", (), {"TASK": "StopCube"})()})()
    with pytest.raises(EpisodeUnavailable, match="pressed off the target"):
        RoboMMEEnv.reset(env, options={"episode": E.episode_spec("StopCube", 3, "ood")})
    assert not E.SPLITS["test"].solvable_only


def test_development_range_is_resettable_and_apart_from_the_reported_set():
    """ood 50-99 are the development range: the same tiers by index, their own seeds, never 0-49."""
    from envs.episodes import development_range

    assert development_range("ood") == range(50, 100)
    assert development_range("test") == range(0) and development_range("train") == range(0, 100)
    for task in ALL_TASKS:
        dev = [episode_spec(task, e, "ood") for e in development_range("ood")]
        assert {tier_of(task, s.episode_idx) for s in dev[:10]} == set(range(1, n_tiers(task) + 1)), task
        reported = {episode_spec(task, e, "ood").env_seed for e in range(50)}
        assert not reported & {s.env_seed for s in dev}, task
    with pytest.raises(ValueError, match="out of range"):
        base_seed("PickXtimes", "ood", 100)
