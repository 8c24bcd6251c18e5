"""Easing and blending on [0, 1] that the Reference tasks' motions and swaps share: the smoothstep
of a progress fraction and the spherical blend of two quaternions."""

from __future__ import annotations

import math

import numpy as np


def smoothstep(a: float) -> float:
    a = min(max(a, 0.0), 1.0)
    return a * a * (3.0 - 2.0 * a)


def slerp(q0, q1, t: float) -> np.ndarray:
    """Spherical blend of two (w, x, y, z) quaternions."""
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    dot = float(np.dot(q0, q1))
    if dot < 0.0:
        q1, dot = -q1, -dot
    if dot > 0.9995:
        q = q0 + t * (q1 - q0)
        return q / np.linalg.norm(q)
    theta = math.acos(dot)
    return (math.sin((1 - t) * theta) * q0 + math.sin(t * theta) * q1) / math.sin(theta)
