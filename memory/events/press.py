"""Press: the hand down at the button, from the arm's own joint readings.

Moved here from demo_places (which dates the demonstration's press from these events). The button
is the largest compact gray blob of the first rendered frame; a visit is a run of frames with the
tool-centre point below ``press_z`` and projecting within ``button_px`` of it; a visit of at least
``press_kin_frames`` frames, or one that dips to ``press_deep_z``, is a ``press`` event when it ends (``step``: the first frame after it,
``time``: its first step). The arm passes the button only high up, so a short visit is rare, and the
reader takes the longest one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.robot.arm_view import panda_tcp, to_pixel
from memory.events.base import Detector, DetectorConfig, Event
from memory.contract.frames import Frame
from memory.perception.layout_pixels import gray_blobs

__all__ = ["PressConfig", "PressDetector"]


@dataclass(frozen=True)
class PressConfig(DetectorConfig):
    """Thresholds of the press detector (video frames with joint readings, video stride 2).

    press_z: the hand below this (m) is down at the button's cap (it stands about 3 cm high; the
        arm travels between places 10 cm up or more).
    button_px: the hand's projection within this (px) of the button's centre is over it (the cap is
        about 10 px across).
    press_kin_frames: frames a visit lasts to be a press (a press holds the hand down for 4+ rendered
        frames; the hand grazing the edge on its way, one or two)...
    press_deep_z: ...or the hand went this low in it (m): it pushed the cap down, however briefly (a
        quick press dips to 3.5-4 cm for two rendered frames; a graze stays above 5 cm).
    """

    press_z: float = 0.06
    button_px: float = 14.0
    press_kin_frames: int = 3
    press_deep_z: float = 0.045


class PressDetector(Detector):
    """``press`` events; ``visits`` keeps every press as ``(frames, first step, end step)``."""

    config: PressConfig

    def reset(self) -> None:
        self.first_rgb: np.ndarray | None = None  # the video's first rendered frame
        self.first_step: int | None = None
        self.button: tuple[float, float] | None = None
        self._start: int | None = None
        self._len = 0
        self._low = float("inf")
        self.visits: list[tuple[int, int, int]] = []

    def update(self, frame: Frame) -> list[Event]:
        c = self.config
        if frame.source != "video" or frame.rgb is None:
            return []
        if self.first_rgb is None:
            self.first_rgb, self.first_step = frame.rgb, frame.step
            buttons = sorted(gray_blobs(frame.rgb), key=lambda b: -b[2])
            self.button = (buttons[0][0], buttons[0][1]) if buttons else None
            return []
        if self.button is None or frame.joint_state is None or len(frame.joint_state) < 7:
            return []
        tcp = panda_tcp(frame.joint_state)
        py, px = to_pixel(tcp)
        down = float(tcp[2]) < c.press_z and np.hypot(py - self.button[0], px - self.button[1]) <= c.button_px
        if down:
            self._start = frame.step if self._start is None else self._start
            self._len += 1
            self._low = min(self._low, float(tcp[2]))
            return []
        out = []
        if self._start is not None and (self._len >= c.press_kin_frames or self._low <= c.press_deep_z):
            self.visits.append((self._len, self._start, frame.step))
            out.append(Event("press", frame.step, frame.source, point=self.button, time=float(self._start)))
        self._start, self._len, self._low = None, 0, float("inf")
        return out


PressConfig.detector = PressDetector
