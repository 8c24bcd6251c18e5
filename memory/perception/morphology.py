"""Binary morphology on masks, as ``scipy.ndimage`` defines it, at OpenCV's speed.

The pixel tools close gaps and group nearby pixels on every frame they read; scipy's iterated
binary operators cost a few milliseconds a frame there, which over a long conditioning video is a
large share of the memory's own CPU. OpenCV computes the same sets when told scipy's border
convention: scipy treats every pixel outside the image as background (``border_value=0``) for both
dilation and erosion, where OpenCV's erosion defaults to treating it as foreground.
``tests/test_morphology.py`` checks each function against scipy's on random masks and rendered
frames, edges included.
"""

from __future__ import annotations

import cv2
import numpy as np

__all__ = ["close", "dilate", "erode", "open_"]

_KERNELS = {8: cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3)), 4: cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))}


def _kernel(neighbours: int) -> np.ndarray:
    if neighbours not in _KERNELS:
        raise ValueError(f"neighbours must be 4 or 8, not {neighbours!r}")
    return _KERNELS[neighbours]


def _u8(mask: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(mask, dtype=bool).view(np.uint8)


def dilate(mask: np.ndarray, iterations: int = 1, neighbours: int = 8) -> np.ndarray:
    """``ndimage.binary_dilation(mask, structure, iterations)`` (8 neighbours: a 3x3 square, 4: a cross)."""
    out = cv2.dilate(_u8(mask), _kernel(neighbours), iterations=iterations, borderType=cv2.BORDER_CONSTANT, borderValue=0)
    return out.astype(bool)


def erode(mask: np.ndarray, iterations: int = 1, neighbours: int = 8) -> np.ndarray:
    """``ndimage.binary_erosion(mask, structure, iterations)``: outside the image is background."""
    out = cv2.erode(_u8(mask), _kernel(neighbours), iterations=iterations, borderType=cv2.BORDER_CONSTANT, borderValue=0)
    return out.astype(bool)


def close(mask: np.ndarray, iterations: int = 1, neighbours: int = 8) -> np.ndarray:
    """``ndimage.binary_closing``: dilate then erode, each ``iterations`` times."""
    return erode(dilate(mask, iterations, neighbours), iterations, neighbours)


def open_(mask: np.ndarray, iterations: int = 1, neighbours: int = 8) -> np.ndarray:
    """``ndimage.binary_opening``: erode then dilate, each ``iterations`` times."""
    return dilate(erode(mask, iterations, neighbours), iterations, neighbours)
