"""memory.perception.morphology computes scipy.ndimage's binary morphology, pixel for pixel."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy import ndimage

from memory.perception.layout_pixels import is_purple
from memory.perception.blobs import hsv
from memory.perception.morphology import close, dilate, erode, open_

STRUCTURES = {8: np.ones((3, 3), dtype=bool), 4: ndimage.generate_binary_structure(2, 1)}
SCIPY = {dilate: ndimage.binary_dilation, erode: ndimage.binary_erosion,
         close: ndimage.binary_closing, open_: ndimage.binary_opening}
FRAMES = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("render_pair_*.png"))


def masks():
    rng = np.random.default_rng(11)
    for density in (0.05, 0.3, 0.6, 0.9):
        yield rng.random((40, 57)) < density  # foreground touching every edge
    for path in FRAMES[:4]:
        rgb = cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)
        yield is_purple(*hsv(rgb))


@pytest.mark.parametrize("ours", list(SCIPY), ids=lambda f: f.__name__)
@pytest.mark.parametrize("neighbours", [8, 4])
@pytest.mark.parametrize("iterations", [1, 2, 3])
def test_the_same_pixels_as_scipy(ours, neighbours, iterations):
    for mask in masks():
        want = SCIPY[ours](mask, structure=STRUCTURES[neighbours], iterations=iterations)
        got = ours(mask, iterations, neighbours)
        assert got.dtype == bool and np.array_equal(got, want)


def test_a_neighbourhood_other_than_4_or_8_is_refused_naming_it():
    with pytest.raises(ValueError, match="6"):
        dilate(np.zeros((4, 4), bool), 1, 6)
