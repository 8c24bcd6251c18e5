"""Colour predicates and connected-component blobs for saturated objects of the six cube colours.

The cheapest identity evidence in a tabletop scene is colour: the cubes are red, green
or blue (yellow, cyan and magenta on the ood split), while the table, containers, buttons,
robot and target rings are mostly
unsaturated or of other hues. Rendered colours are never pure (shading, ambient light,
specular highlights), so the predicates work on hue, saturation and value rather than
on RGB distances, with thresholds gathered in :class:`ColourThresholds`:

* saturation >= 0.7 keeps lit and shaded faces of a pure-coloured cube but rejects
  muted colours of a similar hue (a salmon peg at about 0.63);
* hue windows leave a gap between blue (<= 262 degrees) and purple (about 277), the
  colour of target discs, and between purple and magenta (>= 288); yellow starts at 40 degrees,
  above the wood table (hue 0-45, but saturation mostly below 0.7, so only stray pixels pass);
  the six windows share their edges otherwise (yellow | green at 80, green | cyan at 165,
  cyan | blue at 200), so any vivid hue outside the two gaps has exactly one name;
* value >= 50 drops near-black pixels whose hue is noise.

The memory tools and the perception back ends both read pixels through these functions;
they import nothing of the memory beyond the point type, so nothing imports back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from memory.language.words import COLOUR_WORDS
from subgoals.grammar import COORD_MAX, Point

__all__ = ["Blob", "ColourThresholds", "bare_table", "colour_mask", "find_blobs", "hsv"]


@dataclass(frozen=True)
class ColourThresholds:
    """Pixel predicate parameters. Hue windows are in degrees, half-open ``[lo, hi)``."""

    min_saturation: float = 0.7
    min_value: int = 50
    hue_windows: dict[str, tuple[tuple[float, float], ...]] = field(
        default_factory=lambda: {
            "red": ((0.0, 22.0), (338.0, 360.0)),
            "yellow": ((40.0, 80.0),),
            "green": ((80.0, 165.0),),
            "cyan": ((165.0, 200.0),),
            "blue": ((200.0, 262.0),),
            "magenta": ((288.0, 338.0),),
        }
    )


@dataclass(frozen=True)
class Blob:
    """One connected region of a colour: centroid ``(y, x)`` in pixels, area, bounding box ``(y0, x0, y1, x1)``."""

    colour: str
    y: float
    x: float
    area: int
    bbox: tuple[int, int, int, int]
    hue: float | None = None
    """The blob's mean hue (degrees) when it is named by its appearance, not a colour word
    (:mod:`memory.perception.scene_objects`); ``None`` for a named-colour blob."""

    @property
    def point(self) -> Point:
        """The centroid as an integer image point (clipped to the 256x256 grid)."""
        return Point(int(np.clip(round(self.y), 0, COORD_MAX)), int(np.clip(round(self.x), 0, COORD_MAX)))

    def distance(self, yx: Sequence[float]) -> float:
        return float(np.hypot(self.y - yx[0], self.x - yx[1]))


def hsv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hue (degrees, 0..360), saturation (0..1) and value (0..255) of an ``(H, W, 3)`` uint8 image.

    OpenCV's float conversion: about 15x faster than the same arithmetic in numpy, which matters
    because every pixel tool calls this on every frame it reads.
    """
    # float input keeps the 0..255 scale: V is the max channel, S and H are scale-free
    h, s, v = cv2.split(cv2.cvtColor(np.ascontiguousarray(rgb, dtype=np.float32), cv2.COLOR_RGB2HSV))
    return h, s, v


def bare_table(rgb: np.ndarray, yx, radius: int = 6, share: float = 0.5) -> bool:
    """Whether the spot around ``yx`` shows bare table (a warm, saturated wood colour, not a saturated
    red cube): what the tools use to tell "something stands in front of the remembered place" (the
    record stands) from "nothing is there" (the view contradicts it)."""
    y, x = int(yx[0]), int(yx[1])
    crop = rgb[max(0, y - radius): y + radius + 1, max(0, x - radius): x + radius + 1]
    if crop.size == 0:
        return True
    hue, sat, _ = hsv(crop)
    wood = (hue >= 8) & (hue < 45) & (sat > 0.3) & (sat < 0.8)
    return float(wood.mean()) >= share


def colour_mask(rgb: np.ndarray, colour: str, thresholds: ColourThresholds | None = None) -> np.ndarray:
    """Boolean mask of pixels that read as ``colour``.

    Raises:
        ValueError: for a colour without a hue window.
    """
    t = thresholds or ColourThresholds()
    hue, sat, val = hsv(rgb)
    return _mask_of(hue, _vivid(sat, val, t), colour, t)


def pixels_of(blobs: Iterable[Blob], hue: np.ndarray, sat: np.ndarray, val: np.ndarray,
              thresholds: ColourThresholds | None = None) -> np.ndarray:
    """The pixels of named-colour ``blobs`` themselves: each blob's colour inside its bounding box,
    from a frame's HSV planes (:func:`hsv`). A box also holds table and neighbours; these do not."""
    t = thresholds or ColourThresholds()
    vivid = _vivid(sat, val, t)
    out = np.zeros(hue.shape, dtype=bool)
    masks: dict[str, np.ndarray] = {}
    for b in blobs:
        if b.colour not in t.hue_windows:
            continue
        if b.colour not in masks:
            masks[b.colour] = _mask_of(hue, vivid, b.colour, t)
        y0, x0, y1, x1 = b.bbox
        out[y0 : y1 + 1, x0 : x1 + 1] |= masks[b.colour][y0 : y1 + 1, x0 : x1 + 1]
    return out


def _vivid(sat: np.ndarray, val: np.ndarray, t: ColourThresholds) -> np.ndarray:
    """Pixels saturated and bright enough for their hue to name a colour."""
    return (sat >= t.min_saturation) & (val >= t.min_value)


def _mask_of(hue: np.ndarray, vivid: np.ndarray, colour: str, t: ColourThresholds) -> np.ndarray:
    if colour not in t.hue_windows:
        raise ValueError(f"no colour predicate for {colour!r}; known: {sorted(t.hue_windows)}")
    in_hue = np.zeros(hue.shape, dtype=bool)
    for lo, hi in t.hue_windows[colour]:
        in_hue |= (hue >= lo) & (hue < hi)
    return in_hue & vivid


def find_blobs(
    rgb: np.ndarray,
    colours: Iterable[str] = COLOUR_WORDS,
    *,
    min_area: int = 12,
    max_area: int | None = None,
    thresholds: ColourThresholds | None = None,
) -> list[Blob]:
    """Connected components (8-neighbour) of each colour's mask, largest first within the list.

    Every pixel tool calls this on every frame it reads, so the frame's HSV is computed once for all
    colours and the components come from one OpenCV pass (area, box and centroid together). The
    result is the plain definition's, blob for blob: components in the order their first pixel
    appears in a raster scan within a colour (what ``scipy.ndimage.label`` numbers them by), then a
    stable sort by area; centroids are exact integer sums over the area, as ``center_of_mass``'s
    (``tests/test_blobs_fast_path.py`` holds the definition and checks it on rendered frames)."""
    t = thresholds or ColourThresholds()
    hue, sat, val = hsv(rgb)
    vivid = _vivid(sat, val, t)
    blobs: list[Blob] = []
    for colour in colours:
        mask = _mask_of(hue, vivid, colour, t)
        if not mask.any():
            continue
        n, labels, stats, centroids = cv2.connectedComponentsWithStats(mask.view(np.uint8), connectivity=8, ltype=cv2.CV_32S)
        found = []
        for k in range(1, n):
            x0, y0, w, h, area = (int(v) for v in stats[k])
            if area < min_area or (max_area is not None and area > max_area):
                continue
            first_x = x0 + int(np.argmax(labels[y0, x0:x0 + w] == k))
            found.append(((y0, first_x), Blob(colour=colour, y=float(centroids[k][1]), x=float(centroids[k][0]), area=area,
                                              bbox=(y0, x0, y0 + h - 1, x0 + w - 1))))
        blobs.extend(b for _, b in sorted(found, key=lambda fb: fb[0]))
    blobs.sort(key=lambda b: -b.area)
    return blobs
