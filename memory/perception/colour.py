"""The CPU default behind the perception protocols: colour predicates and colour histograms.

:class:`ColourDetector` is exactly the blob finder the tools always used (a phrase's colour word
-> connected components of that colour), so choosing it changes nothing. :class:`ColourHistogram`
describes a region by its hue-saturation histogram: enough to tell a red cube from a green one,
not one red cube from another (that is what DINOv2 features are for)."""

from __future__ import annotations

import numpy as np

from memory.perception.base import Detection
from memory.perception.blobs import ColourThresholds, find_blobs, hsv
from memory.language.words import colour_of

__all__ = ["ColourDetector", "ColourHistogram"]


class ColourDetector:
    """Objects of the phrase's colour word, largest first; none for a phrase without one.

    The protocol face of the CPU default. The colour tool itself, when this is its detector, reads
    :func:`find_blobs` directly: it needs the blobs' pixel centroids and areas, which a detection's
    box only approximates."""

    name = "colour"

    def __init__(self, *, min_area: int = 12, max_area: int | None = None, thresholds: ColourThresholds | None = None):
        self.min_area = min_area
        self.max_area = max_area
        self.thresholds = thresholds or ColourThresholds()

    def detect(self, rgb: np.ndarray, phrase: str) -> list[Detection]:
        colour = colour_of(phrase.split())
        if colour is None or colour not in self.thresholds.hue_windows:
            return []
        blobs = find_blobs(rgb, [colour], min_area=self.min_area, max_area=self.max_area, thresholds=self.thresholds)
        total = float(sum(b.area for b in blobs)) or 1.0
        return [Detection(phrase, b.bbox, b.area / total) for b in blobs]


class ColourHistogram:
    """Hue (``hue_bins``) x saturation (``sat_bins``) histogram of the region's coloured pixels,
    weighted by saturation so the grey table and shadows count little; unit length."""

    name = "colour-histogram"

    def __init__(self, hue_bins: int = 18, sat_bins: int = 3, min_saturation: float = 0.25):
        self.hue_bins = hue_bins
        self.sat_bins = sat_bins
        self.min_saturation = min_saturation

    def embed(self, rgb: np.ndarray, box: tuple[int, int, int, int], mask: np.ndarray | None = None) -> np.ndarray:
        y0, x0, y1, x1 = (int(v) for v in box)
        crop = rgb[max(0, y0): y1 + 1, max(0, x0): x1 + 1]
        hist = np.zeros(self.hue_bins * self.sat_bins)
        if crop.size == 0:
            return hist
        hue, sat, _ = hsv(crop)
        keep = sat >= self.min_saturation
        if mask is not None:
            keep &= mask[max(0, y0): y1 + 1, max(0, x0): x1 + 1]
        if not keep.any():
            return hist
        hb = np.minimum((hue[keep] / 360.0 * self.hue_bins).astype(int), self.hue_bins - 1)
        sb = np.minimum((sat[keep] * self.sat_bins).astype(int), self.sat_bins - 1)
        np.add.at(hist, hb * self.sat_bins + sb, sat[keep])
        return hist / np.linalg.norm(hist)
