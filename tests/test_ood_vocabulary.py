"""The memory on colours and counts it never met in distribution: the ood split's new cube colours
(yellow, cyan, magenta, arbitrary vivid hues) and its largest counts and ordinals, read from the
goals the ood tasks actually write."""

from __future__ import annotations

import colorsys

import numpy as np
import pytest

from envs import task_class
from envs.episodes import base_seed
from envs.ood import NEW_COLOURS, OOD_TIERS, n_tiers, ood_tier
from memory.language.spec import specify
from memory.perception.blobs import ColourThresholds, find_blobs
from memory.language.words import COLOUR_WORDS, colour_of
from subgoals.record_names import cover_binding

TABLE = (196, 168, 128)
PURPLE_TARGET = (160, 32, 240)
RENDERED = {  # a lit face and a shaded face, as the front camera shows a cube of that colour
    "yellow": [(230, 225, 30), (120, 110, 12)],
    "cyan": [(25, 215, 220), (10, 105, 110)],
    "magenta": [(220, 30, 215), (110, 14, 105)],
}


def scene(colours) -> np.ndarray:
    img = np.empty((256, 256, 3), np.uint8)
    img[:] = TABLE
    img[10:20, 10:20] = PURPLE_TARGET
    for k, c in enumerate(colours):
        y, x = 40 + 60 * (k // 3), 40 + 70 * (k % 3)
        lit, shaded = RENDERED[c] if isinstance(c, str) else (c, tuple(v // 2 for v in c))
        img[y:y + 8, x:x + 10] = lit
        img[y + 8:y + 12, x:x + 10] = shaded
    return img


@pytest.mark.parametrize("colour", NEW_COLOURS)
def test_each_new_colour_is_one_blob_of_its_own_name(colour):
    assert colour in COLOUR_WORDS and colour_of(["the", colour, "cube"]) == colour
    blobs = find_blobs(scene([colour]))
    assert [b.colour for b in blobs] == [colour]  # lit and shaded faces one blob; table and purple disc none


def test_six_cubes_six_names():
    blobs = find_blobs(scene(["yellow", "cyan", "magenta", (220, 20, 20), (20, 200, 30), (20, 30, 210)]))
    assert sorted(b.colour for b in blobs) == sorted(COLOUR_WORDS)


def test_hue_windows_tile_the_circle_but_the_purple_gap():
    """Any vivid hue has exactly one name, except the purple band of the target discs (262-288)."""
    windows = ColourThresholds().hue_windows
    for hue in np.arange(0.0, 360.0, 0.5):
        names = [c for c, ws in windows.items() if any(lo <= hue < hi for lo, hi in ws)]
        if 262 <= hue < 288 or 22 <= hue < 40:
            assert names == [], hue
        else:
            assert len(names) == 1, (hue, names)


def test_arbitrary_vivid_hues_are_seen():
    """PickHighlight's ood cubes: a vivid hue outside the two gaps is found as one blob."""
    rng = np.random.default_rng(0)
    found = 0
    for _ in range(40):
        h = rng.uniform(0, 1)
        rgb = tuple(int(255 * v) for v in colorsys.hsv_to_rgb(h, rng.uniform(0.75, 1), rng.uniform(0.75, 1)))
        blobs = find_blobs(scene([rgb]))
        deg = 360 * h
        if 262 <= deg < 288 or 22 <= deg < 40:
            continue
        assert len(blobs) == 1, (deg, rgb, blobs)
        found += 1
    assert found > 25


def _goals(task: str, tier: int, n: int = 6) -> list[tuple[object, str]]:
    """(layout, goal) of the first ``n`` ood episodes of ``tier``."""
    cls = task_class(task)
    obj = object.__new__(cls)
    obj.ood = ood_tier(task, tier)
    out = []
    for ep in range(tier - 1, 50, n_tiers(task))[:n]:
        obj.layout = obj.sample_layout(np.random.default_rng(base_seed(task, "ood", ep)), "hard")
        out.append((obj.layout, obj.goal_texts()[0]))
    return out


def test_largest_repetition_counts_are_read():
    for task in ("PickXtimes", "SwingXtimes"):
        top = OOD_TIERS[task][-1].tier
        for layout, goal in _goals(task, top):
            assert specify(goal).repetitions == layout.repeats >= 6, goal


def test_latest_stop_ordinal_is_read():
    for layout, goal in _goals("StopCube", n_tiers("StopCube")):
        assert specify(goal).ordinal == layout.stop_time == 10, goal


def test_largest_deposit_counts_are_read():
    for layout, goal in _goals("BinFill", 2):
        counts = specify(goal).count_map
        assert counts == {f"{c} cube": n for c, n in layout.targets} and sum(counts.values()) == 7, goal


def test_placement_ordinals_up_to_six_are_read():
    seen = set()
    for tier in (1, 2):
        for layout, goal in _goals("VideoPlaceOrder", tier, n=12):
            assert specify(goal).ordinal == layout.answer, goal
            seen.add(layout.answer)
    assert max(seen) >= 5


@pytest.mark.parametrize("task", ["VideoUnmask", "ButtonUnmaskSwap"])
def test_cover_bindings_in_new_colours_and_a_third_pick(task):
    for layout, goal in _goals(task, 4):
        spec = specify(goal)
        assert set(spec.bindings) == {cover_binding(f"{c} cube") for c in layout.pick_colours}, goal
        assert len(layout.pick_colours) == 3
