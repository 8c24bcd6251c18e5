"""Writes an mp4 of an episode with the subgoal, the memory's rewrite and its point drawn on it.

Wraps the subgoal-level stack (outermost). Each low-level frame that was rendered is written;
overlaid are the proposed subgoal (white), the executed one when memory rewrote it (yellow), and
the ``<y, x>`` point of the executed subgoal (a circle).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import gymnasium as gym
import imageio.v2 as imageio
import numpy as np

from envs.spaces import rendered
from subgoals.grammar import points_in



def annotate(rgb: np.ndarray, proposed: str, executed: str, scale: int = 2) -> np.ndarray:
    img = cv2.resize(rgb, (rgb.shape[1] * scale, rgb.shape[0] * scale), interpolation=cv2.INTER_NEAREST)
    for p in points_in(executed):
        y, x = p.y * scale, p.x * scale
        cv2.circle(img, (x, y), 7 * scale // 2, (255, 255, 0), 2)
    band = np.zeros((44, img.shape[1], 3), np.uint8)
    cv2.putText(band, proposed[:90], (4, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1, cv2.LINE_AA)
    if executed != proposed:
        cv2.putText(band, "-> " + executed[:87], (4, 36), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 230, 0), 1, cv2.LINE_AA)
    return np.concatenate([img, band], axis=0)


class RecordEpisode(gym.Wrapper):
    def __init__(self, env, path: str | Path, fps: int = 20, include_video: bool = True):
        super().__init__(env)
        self.path = Path(path)
        self.fps = fps
        self.include_video = include_video
        self._writer = None

    def reset(self, *, seed=None, options=None):
        self.close_video()
        obs, info = self.env.reset(seed=seed, options=options)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = imageio.get_writer(str(self.path), fps=self.fps, macro_block_size=1)
        video = info.get("video")
        if self.include_video and video is not None:
            for rgb in video.front:
                self._writer.append_data(annotate(rgb, "[conditioning video]", "[conditioning video]"))
        front = rendered(obs, "front")
        if front is not None:
            self._writer.append_data(annotate(front, "", ""))
        return obs, info

    def step(self, subgoal: str):
        obs, r, term, trunc, info = self.env.step(subgoal)
        executed = info.get("revised", subgoal)
        for f in info.get("frames", []):
            if f.rgb is not None and self._writer is not None:
                self._writer.append_data(annotate(f.rgb, subgoal, executed))
        if term or trunc:
            self.close_video()
        return obs, r, term, trunc, info

    def close_video(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def close(self):
        self.close_video()
        return super().close()
