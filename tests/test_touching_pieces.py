"""memory.perception.touching: touching objects of one colour come apart; a lone one stays whole."""

from __future__ import annotations

import numpy as np

from memory.perception.blobs import Blob, find_blobs
from memory.perception.touching import blob_pieces, pieces_of

RED = (220, 20, 20)


def _scene(*squares) -> np.ndarray:
    rgb = np.full((96, 96, 3), (150, 110, 80), np.uint8)  # wood-ish, unsaturated enough to name nothing
    for y, x, s in squares:
        rgb[y:y + s, x:x + s] = RED
    return rgb


def test_a_lone_cube_is_its_own_blob_unchanged():
    rgb = _scene((30, 30, 12))
    (b,) = find_blobs(rgb, ["red"], min_area=10)
    assert blob_pieces(rgb, b, 10) == [b]


def test_two_touching_cubes_come_apart_each_on_its_own_centre():
    rgb = _scene((30, 30, 12), (38, 42, 12))  # the second touches the first's corner side
    (b,) = find_blobs(rgb, ["red"], min_area=10)
    parts = sorted(pieces_of(rgb, [b], 10), key=lambda p: -p.area)[:2]
    centres = sorted((round(p.y), round(p.x)) for p in parts)
    assert len(pieces_of(rgb, [b], 10)) >= 2
    assert abs(centres[0][0] - 35.5) <= 2 and abs(centres[0][1] - 35.5) <= 2
    assert abs(centres[1][0] - 43.5) <= 2 and abs(centres[1][1] - 47.5) <= 2
    # the merged blob's own centroid lies between them, on neither
    assert min(np.hypot(b.y - cy, b.x - cx) for cy, cx in centres) > 4


def test_a_blob_named_by_its_look_is_returned_whole():
    rgb = _scene((30, 30, 12), (38, 42, 12))
    b = Blob(colour="hue40", y=40.0, x=42.0, area=288, bbox=(30, 30, 49, 53), hue=40.0)
    assert blob_pieces(rgb, b, 10) == [b]
