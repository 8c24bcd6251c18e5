"""What the perception back-ends promise the memory tools, whichever model stands behind them.

Three jobs, each a small protocol so a tool never knows which model answers:

* :class:`Detector` — where the objects a phrase names are in a frame ("green cube" -> boxes);
* :class:`Segmenter` — the object's pixels inside a box (a detector's box is loose);
* :class:`IdentityFeatures` — a vector per object region, so that "is this the cube I noted?" is a
  cosine between two vectors instead of a colour rule.

The CPU default is the colour evidence the tools were built on (:mod:`memory.perception.colour`);
Grounding DINO, SAM 2 and DINOv2 load from a local directory the user gives
(:mod:`memory.perception.config`). Every back-end reads only the rendered frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = ["Detection", "Detector", "IdentityFeatures", "PerceptionSetupError", "Segmenter", "cosine"]


class PerceptionSetupError(RuntimeError):
    """A back-end cannot be built: a missing directory, package or file, named in the message."""


@dataclass(frozen=True)
class Detection:
    """One object found for a phrase: box ``(y0, x0, y1, x1)`` in pixels (inclusive), a score in
    [0, 1], and its pixels when a segmenter gave them (else ``None``: the box stands for them)."""

    phrase: str
    box: tuple[int, int, int, int]
    score: float
    mask: np.ndarray | None = None

    @property
    def centre(self) -> tuple[float, float]:
        if self.mask is not None and self.mask.any():
            ys, xs = np.nonzero(self.mask)
            return float(ys.mean()), float(xs.mean())
        y0, x0, y1, x1 = self.box
        return (y0 + y1) / 2.0, (x0 + x1) / 2.0

    @property
    def area(self) -> int:
        if self.mask is not None:
            return int(self.mask.sum())
        y0, x0, y1, x1 = self.box
        return int((y1 - y0 + 1) * (x1 - x0 + 1))


class Detector(Protocol):
    name: str

    def detect(self, rgb: np.ndarray, phrase: str) -> list[Detection]:
        """Objects ``phrase`` names in ``rgb`` (H, W, 3 uint8), best first."""
        ...


class Segmenter(Protocol):
    name: str

    def segment(self, rgb: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
        """Boolean (H, W) mask of the object inside ``box`` (y0, x0, y1, x1)."""
        ...


class IdentityFeatures(Protocol):
    name: str

    def embed(self, rgb: np.ndarray, box: tuple[int, int, int, int], mask: np.ndarray | None = None) -> np.ndarray:
        """A unit-length feature vector of the object in ``box`` (its ``mask`` pixels when given)."""
        ...


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two feature vectors (0 when either is all zeros)."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))
