"""Objects that stand out from their own scene, whatever their hue: blobs without a colour word.

The named-colour predicates (:mod:`memory.perception.blobs`) find cubes whose rendered colour is
vivid and falls in one of six hue windows. A cube of an arbitrary hue (the ``ood`` split draws
them) may be named by none of them, or lit down to a saturation of 0.45, and would be invisible.
This module finds such objects by appearance *relative to the scene* instead:

1. **Against the surroundings.** A median filter of ``kernel`` px estimates, at every pixel, what
   the scene around it looks like; an object smaller than half the window is not in that estimate.
   Pixels whose colour differs from it by more than ``min_contrast`` (RGB distance) stand out.
2. **Not neutral.** Bright neutral pixels (white discs, the robot, grey buttons) and dark ones are
   not object colour (saturation below ``min_saturation`` or value below ``min_value``).
3. **Not the surface itself.** The frame's dominant appearance (circular mean hue and median
   saturation of all pixels: the table) is estimated per frame; a pixel, or a component whose mean,
   within ``surface_hue`` / ``surface_saturation`` of it is the surface (grain, shading, or table
   seen next to a grey arm), not an object (an object coloured like the table is therefore not
   found: the tools reading these blobs abstain rather than guess).
4. **Its own appearance as identity.** Each kept component is a :class:`~memory.perception.blobs.Blob`
   whose ``colour`` is an appearance label, ``hue<deg>`` (its circular mean hue), and whose ``hue``
   field carries the exact value; :func:`same_look` compares two blobs by that value, so a cube is
   tracked frame to frame by how it looks, not by a name.

Components that touch a pixel of a named-colour blob are left to the named reader, so a scene of
named colours reads exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from scipy import ndimage

from memory.perception.blobs import Blob, hsv, pixels_of

__all__ = ["SceneObjectThresholds", "circular_mean_hue", "find_scene_objects", "hue_distance", "look_label",
           "looks_like_surface", "same_look", "surface_look"]

_EIGHT = np.ones((3, 3), dtype=bool)


@dataclass(frozen=True)
class SceneObjectThresholds:
    """The numbers :func:`find_scene_objects` works with (pixels of the 256x256 frame; module docstring)."""

    kernel: int = 31
    """Median window (px, odd) estimating the surroundings; objects up to about half of it stand out."""
    min_contrast: float = 55.0
    """RGB distance from the surroundings above which a pixel stands out."""
    min_saturation: float = 0.3
    """Below this a pixel is neutral (white disc, robot, grey button), not object colour."""
    min_value: int = 60
    """Below this a pixel is shadow, whose hue is noise."""
    surface_hue: float = 12.0
    """A component within this many degrees of the frame's dominant hue..."""
    surface_saturation: float = 0.15
    """...and this close in saturation is the surface (table grain), not an object."""
    touch_px: int = 2
    """A component within this many px of a named blob's own pixels touches it: a face of that cube
    shaded out of its colour word's window, left to the named reader."""
    same_look_hue: float = 20.0
    """Two unnamed blobs within this many degrees of hue look the same (:func:`same_look`)."""


def hue_distance(a: float, b: float) -> float:
    """Degrees between two hues on the colour circle."""
    d = abs(float(a) - float(b)) % 360.0
    return min(d, 360.0 - d)


def circular_mean_hue(deg: np.ndarray) -> float:
    """The mean of hues (degrees) on the colour circle (350 and 10 average to 0, not 180)."""
    rad = np.deg2rad(deg)
    return float(np.rad2deg(np.arctan2(np.sin(rad).mean(), np.cos(rad).mean())) % 360.0)


def look_label(hue: float) -> str:
    """The appearance label of an unnamed blob: ``hue<deg>`` (``hue146``)."""
    return f"hue{int(round(hue)) % 360}"


def label_hue(label: str) -> float | None:
    """The hue an appearance label carries (``None`` for a colour word)."""
    if label.startswith("hue") and label[3:].isdigit():
        return float(label[3:])
    return None


def same_look(a: Blob | str, b: Blob | str, max_hue: float = SceneObjectThresholds.same_look_hue) -> bool:
    """Whether two blobs (or labels) are the same-looking object: the same colour word, or two unnamed
    blobs whose hues are within ``max_hue`` degrees."""
    la, lb = (x if isinstance(x, str) else x.colour for x in (a, b))
    ha = a.hue if isinstance(a, Blob) and a.hue is not None else label_hue(la)
    hb = b.hue if isinstance(b, Blob) and b.hue is not None else label_hue(lb)
    if ha is None or hb is None:
        return la == lb
    return hue_distance(ha, hb) <= max_hue


def surface_look(rgb: np.ndarray, thresholds: SceneObjectThresholds | None = None) -> tuple[float, float]:
    """The frame's dominant appearance (the table): circular mean hue and median saturation."""
    return surface_of(*hsv(np.ascontiguousarray(rgb, dtype=np.uint8)), thresholds)


def surface_of(hue: np.ndarray, sat: np.ndarray, val: np.ndarray,
               thresholds: SceneObjectThresholds | None = None) -> tuple[float, float]:
    """:func:`surface_look` from a frame's hue, saturation and value planes already computed."""
    t = thresholds or SceneObjectThresholds()
    return circular_mean_hue(hue[val >= t.min_value]), float(np.median(sat))


def looks_like_surface(hue: float, sat: float, surface: tuple[float, float],
                       thresholds: SceneObjectThresholds | None = None) -> bool:
    """Whether a colour ``(hue, sat)`` is the surface's own (within the thresholds)."""
    t = thresholds or SceneObjectThresholds()
    return hue_distance(hue, surface[0]) <= t.surface_hue and abs(sat - surface[1]) <= t.surface_saturation


def find_scene_objects(rgb: np.ndarray, *, named: list[Blob] | None = None, min_area: int = 20,
                       max_area: int | None = 900, thresholds: SceneObjectThresholds | None = None,
                       within: tuple[float, float, float] | None = None) -> list[Blob]:
    """Blobs that stand out from the scene and are not one of ``named`` (module docstring), largest first.

    ``within=(y, x, r)``: only objects whose centre lies within ``r`` px of ``(y, x)``, *including*
    objects coloured like the surface: where an object is known to stand, whatever stands out from
    its surroundings there is it (how a cube coloured like the table is found again)."""
    t = thresholds or SceneObjectThresholds()
    img = np.ascontiguousarray(rgb, dtype=np.uint8)
    surround = cv2.medianBlur(img, t.kernel)
    contrast = np.linalg.norm(img.astype(np.int16) - surround.astype(np.int16), axis=-1)
    hue, sat, val = hsv(img)
    mask = (contrast > t.min_contrast) & (sat >= t.min_saturation) & (val >= t.min_value)
    surface_hue, surface_sat = surface_of(hue, sat, val, t)
    if within is not None:
        yy, xx = np.mgrid[: mask.shape[0], : mask.shape[1]]
        mask &= np.hypot(yy - within[0], xx - within[1]) <= within[2] + 8
    else:
        # surface pixels stand out next to a grey arm or a white disc too: they are never object colour
        d_hue = np.abs(hue - surface_hue) % 360.0
        mask &= ~((np.minimum(d_hue, 360.0 - d_hue) <= t.surface_hue) & (np.abs(sat - surface_sat) <= t.surface_saturation))
    taken = None
    if named:
        # the named blobs' own pixels, not their boxes: a box widened by a margin reaches the next
        # cube when cubes stand close (eight on the table), and a cube of a hue no word names that
        # stood there was dropped as if it were part of the named one
        near = 2 * t.touch_px + 1
        taken = cv2.dilate(pixels_of(named, hue, sat, val).view(np.uint8), np.ones((near, near), np.uint8)).astype(bool)
    labels, n = ndimage.label(mask, structure=_EIGHT)
    out: list[Blob] = []
    for i, box in enumerate(ndimage.find_objects(labels), start=1):
        if box is None:
            continue
        comp = labels[box] == i
        area = int(comp.sum())
        if area < min_area or (max_area is not None and area > max_area):
            continue
        if taken is not None and taken[box][comp].any():
            continue
        h = circular_mean_hue(hue[box][comp])
        if within is None and looks_like_surface(h, float(sat[box][comp].mean()), (surface_hue, surface_sat), t):
            continue
        ys, xs = np.nonzero(comp)
        y0, x0 = box[0].start, box[1].start
        if within is not None and np.hypot(ys.mean() + y0 - within[0], xs.mean() + x0 - within[1]) > within[2]:
            continue
        out.append(Blob(colour=look_label(h), y=float(ys.mean() + y0), x=float(xs.mean() + x0), area=area,
                        bbox=(y0, x0, box[0].stop - 1, box[1].stop - 1), hue=h))
    out.sort(key=lambda b: -b.area)
    return out
