"""``find_blobs`` (one HSV pass, OpenCV components) gives the plain definition's blobs, exactly.

The definition: each colour's mask, labelled by ``scipy.ndimage.label`` (8 neighbours), areas by
``sum_labels``, centroids by ``center_of_mass``, boxes by ``find_objects``, then a stable sort by
area. Checked on the benchmark's rendered frames (``benchmarks/render_pair_*.png``: our render
beside the official one, every task) and on random masks made to tie on area, where the order of
equal-area blobs is all that tells two implementations apart."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy import ndimage

from memory.language.words import COLOUR_WORDS
from memory.perception.blobs import Blob, colour_mask, find_blobs

FRAMES = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("render_pair_*.png"))


def defined_blobs(rgb, colours=COLOUR_WORDS, min_area=12, max_area=None) -> list[Blob]:
    out = []
    for colour in colours:
        mask = colour_mask(rgb, colour)
        labels, n = ndimage.label(mask, structure=np.ones((3, 3), dtype=bool))
        if n == 0:
            continue
        index = np.arange(1, n + 1)
        for area, (cy, cx), box in zip(ndimage.sum_labels(mask, labels, index),
                                       ndimage.center_of_mass(mask, labels, index), ndimage.find_objects(labels)):
            area = int(area)
            if area < min_area or (max_area is not None and area > max_area):
                continue
            out.append(Blob(colour, float(cy), float(cx), area, (box[0].start, box[1].start, box[0].stop - 1, box[1].stop - 1)))
    out.sort(key=lambda b: -b.area)
    return out


@pytest.mark.parametrize("path", FRAMES, ids=lambda p: p.stem)
def test_rendered_frames_give_the_defined_blobs(path):
    rgb = cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)
    for kw in ({}, {"min_area": 1}, {"min_area": 5, "max_area": 400}):
        assert find_blobs(rgb, **kw) == defined_blobs(rgb, **kw)


def test_equal_area_blobs_keep_the_defined_order():
    rng = np.random.default_rng(3)
    for _ in range(40):
        rgb = np.zeros((64, 64, 3), dtype=np.uint8)
        for _ in range(12):  # 2x2 squares and L shapes of one area, in every colour, anywhere
            y, x = rng.integers(0, 62, size=2)
            colour = [(230, 20, 20), (20, 200, 20), (20, 20, 230)][rng.integers(0, 3)]
            rgb[y:y + 2, x:x + 2] = colour
            if rng.random() < 0.5:
                rgb[y, x] = 0
                rgb[min(63, y + 2), x + 1] = colour
        got, want = find_blobs(rgb, min_area=1), defined_blobs(rgb, min_area=1)
        assert got == want


def test_an_unknown_colour_is_refused_naming_it():
    with pytest.raises(ValueError, match="'teal'"):
        find_blobs(np.zeros((8, 8, 3), dtype=np.uint8), colours=["teal"])
