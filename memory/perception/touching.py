"""Touching objects of one colour taken apart: one blob per object, not one per colour region.

Two cubes of one colour standing side by side read as one connected blob whose centroid lies
between them, on neither; a reader asking "is there a mark around this object?" then looks around
a point no object stands on, and a reader re-grounding "that object" sends the robot between two.
:func:`blob_pieces` takes such a blob apart with the solid-part rule of
:func:`~memory.perception.layout_pixels.disc_pieces` (the deepest pixel of the distance transform is
an object's centre, the pixels within reach of it are that object, the rest goes round again): a
compact object keeps its blob whole (returned as it is), two touching ones come apart. It knows no
object's size, so it serves any object of a named colour; a blob named by its look
(:mod:`memory.perception.scene_objects`) is returned whole, its mask is not a colour predicate's.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from memory.perception.blobs import Blob, ColourThresholds, colour_mask
from memory.perception.layout_pixels import disc_pieces

__all__ = ["blob_pieces", "pieces_of"]

_EIGHT = np.ones((3, 3), dtype=bool)


def blob_pieces(rgb: np.ndarray, blob: Blob, min_area: int, thresholds: ColourThresholds | None = None) -> list[Blob]:
    """``blob`` as the objects it holds: ``[blob]`` itself when it is one solid object (or named by its
    look), else one blob per piece of at least ``min_area`` px, with the piece's centroid, area and box."""
    t = thresholds or ColourThresholds()
    if blob.hue is not None or blob.colour not in t.hue_windows:
        return [blob]
    y0, x0, y1, x1 = blob.bbox
    crop = colour_mask(rgb[y0:y1 + 1, x0:x1 + 1], blob.colour, t)
    labels, n = ndimage.label(crop, structure=_EIGHT)
    if n == 0:
        return [blob]
    sizes = np.bincount(labels.ravel())[1:]
    own = labels == 1 + int(np.argmax(sizes))  # the blob itself: other blobs only clip its box
    parts = disc_pieces(own, min_area)
    if len(parts) <= 1:
        return [blob]
    out = []
    for py, px, area in parts:
        r = max(1, int(round(np.sqrt(area / np.pi))))
        cy, cx = py + y0, px + x0
        out.append(Blob(colour=blob.colour, y=float(cy), x=float(cx), area=int(area),
                        bbox=(int(cy) - r, int(cx) - r, int(cy) + r, int(cx) + r)))
    return out


def pieces_of(rgb: np.ndarray, blobs: list[Blob], min_area: int, thresholds: ColourThresholds | None = None) -> list[Blob]:
    """Every blob of ``blobs`` taken apart (:func:`blob_pieces`), in their order, largest piece first within one."""
    out: list[Blob] = []
    for b in blobs:
        out += sorted(blob_pieces(rgb, b, min_area, thresholds), key=lambda p: -p.area)
    return out
