"""Pixel predicates of the scene layout: button caps (compact neutral-gray blobs) and target discs
(saturated purple), with touching discs taken apart.

They read pixels only, so both the layout tool (:mod:`memory.tools.scene_layout`) and the event
detectors below the tools (:mod:`memory.events.passes`, :mod:`memory.events.press`) use them
without the detectors importing a tool.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from memory.perception.blobs import hsv
from memory.perception.morphology import close

__all__ = ["disc_pieces", "gray_blobs", "is_purple", "purple_blobs", "purple_mask"]

_EIGHT = np.ones((3, 3), dtype=bool)


def _components(mask: np.ndarray, min_area: int, max_area: int, top_margin: int) -> list[tuple[float, float, int]]:
    labels, n = ndimage.label(mask, structure=_EIGHT)
    out = []
    for i, box in enumerate(ndimage.find_objects(labels), start=1):
        if box is None or box[0].start < top_margin:
            continue
        area = int((labels[box] == i).sum())
        h, w = box[0].stop - box[0].start, box[1].stop - box[1].start
        if min_area <= area <= max_area and max(h, w) <= 3 * min(h, w):
            cy, cx = ndimage.center_of_mass(labels == i)
            out.append((float(cy), float(cx), area))
    return out


def gray_blobs(rgb: np.ndarray, top_margin: int = 40) -> list[tuple[float, float, int]]:
    """Compact neutral-gray components (button caps) below the arm's rest area."""
    img = rgb.astype(np.int16)
    spread = img.max(axis=-1) - img.min(axis=-1)
    value = img.max(axis=-1)
    mask = (spread <= 6) & (value >= 90) & (value <= 200)
    return _components(mask, 25, 600, top_margin)


def is_purple(hue: np.ndarray, sat: np.ndarray, val: np.ndarray) -> np.ndarray:
    """The target discs' colour: a saturated purple (per pixel, from :func:`hsv`)."""
    return (hue >= 265) & (hue < 300) & (sat >= 0.45) & (val >= 80)


def purple_mask(rgb: np.ndarray) -> np.ndarray:
    """Target-disc material: purple pixels, small gaps closed."""
    return close(is_purple(*hsv(rgb)), iterations=2)


def purple_blobs(rgb: np.ndarray) -> list[tuple[float, float, int]]:
    return _components(purple_mask(rgb), 8, 800, 0)


def disc_pieces(mask: np.ndarray, min_area: int, solid_px: float = 5.0, reach: float = 1.35,
                min_share: float = 0.15) -> list[tuple[float, float, int]]:
    """Components of ``mask`` with touching discs taken apart, as (row, col, area).

    Two targets placed close together touch in the image and label as one component whose centroid
    lies between them, on neither. The solid part of a component is found from its distance
    transform: the deepest pixel is a disc's centre and its depth r the disc's radius; the pixels
    within ``reach`` * r of it are that disc, and what is left over (at least ``min_share`` of the
    disc) is taken apart the same way. A ring (a disc with an object on it) or a sliver (a disc
    mostly hidden) is never deeper than ``solid_px`` and stays whole."""
    labels, n = ndimage.label(mask, structure=_EIGHT)
    out = []
    for i, box in enumerate(ndimage.find_objects(labels), start=1):
        # each component in its own box, one background pixel round it: the distance transform is
        # exact there (clamping any outside background pixel into the border only brings it closer)
        y0, x0 = box[0].start - 1, box[1].start - 1
        comp = np.pad(labels[box] == i, 1)
        for y, x, a in _pieces(comp, min_area, solid_px, reach, min_share):
            out.append((y + y0, x + x0, a))
    return out


def _pieces(comp: np.ndarray, min_area: int, solid_px: float, reach: float, min_share: float) -> list[tuple[float, float, int]]:
    """:func:`disc_pieces` of one component (and, recursively, of what is left of it)."""
    out = []
    while comp.sum() >= min_area:
        depth = ndimage.distance_transform_edt(np.pad(comp, 1))[1:-1, 1:-1]
        r = float(depth.max())
        cy, cx = np.unravel_index(int(np.argmax(depth)), depth.shape)
        ys, xs = np.nonzero(comp)
        own = np.hypot(ys - cy, xs - cx) <= reach * r
        rest = comp.copy()
        rest[ys[own], xs[own]] = False
        if r < solid_px or rest.sum() < min_share * own.sum():
            out.append((float(ys.mean()), float(xs.mean()), int(ys.size)))
            break
        out.append((float(ys[own].mean()), float(xs[own].mean()), int(own.sum())))
        # the leftover may be several pieces (a disc between two others): each goes round again
        rl, rn = ndimage.label(rest, structure=_EIGHT)
        if rn > 1:
            for j in range(2, rn + 1):
                out += _pieces(rl == j, min_area, solid_px, reach, min_share)
        comp = rl == 1
    return out
