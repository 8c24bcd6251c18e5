"""Turns a low-level RoboMME env into a subgoal-level env: the action is a grounded subgoal string.

``step(subgoal)`` asks the low-level policy for an action chunk for that subgoal, executes up to
``horizon`` actions (stopping early when the episode ends) and returns the frames seen on the way
in ``info["frames"]``, so a memory above can observe every step. Frames are rendered only where a
consumer needs them: every ``frame_stride`` steps for observers (0 = none), and the current view
for the composer at each query when ``render_query`` is set.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from policies.base import PolicyError


@dataclass
class LowLevelFrame:
    """What an observer may see of one env step: pixels (or None), joints and the action.

    ``step`` is the env's absolute clock (video steps included), so it never goes backwards.
    """

    step: int
    rgb: np.ndarray | None
    joint_state: np.ndarray
    action: np.ndarray | None
    source: str = "live"


class SubgoalExecution(gym.Wrapper):
    def __init__(self, env, policy, horizon: int = 16, frame_stride: int = 0, render_query: bool = True,
                 policy_needs_images: bool = False):
        super().__init__(env)
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon!r}")
        self.policy = policy
        self.horizon = horizon
        self.frame_stride = frame_stride
        self.render_query = render_query
        self.policy_needs_images = policy_needs_images
        self._obs: dict | None = None
        self._info: dict | None = None
        self.timings = {"policy_s": 0.0, "env_s": 0.0, "render_s": 0.0}

    @property
    def low(self):
        return self.env  # the RoboMMEEnv

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._obs, self._info = obs, info
        self.timings = {"policy_s": 0.0, "env_s": 0.0, "render_s": 0.0}
        return obs, info

    def _render(self) -> np.ndarray:
        t0 = time.perf_counter()
        frame = self.env.get_wrapper_attr("front_frame")()
        self.timings["render_s"] += time.perf_counter() - t0
        return frame

    def step(self, subgoal: str):
        if not isinstance(subgoal, str):
            raise TypeError(f"a subgoal-level action must be a string, got {type(subgoal).__name__}")
        obs = dict(self._obs)
        if self.policy_needs_images and obs.get("front_rgb") is None:
            obs["front_rgb"] = self._render()
        obs.update(subgoal=subgoal, goal=self._info["goal"])
        frames: list[LowLevelFrame] = []
        t0 = time.perf_counter()
        try:
            chunk = self.policy.infer(obs)
        except PolicyError as exc:  # infrastructure, not the method: the episode is an error
            self.timings["policy_s"] += time.perf_counter() - t0
            info = dict(self._info, status="error", error=f"{type(exc).__name__}: {exc}", frames=frames)
            return self._obs, 0.0, True, False, info
        self.timings["policy_s"] += time.perf_counter() - t0
        terminated = truncated = False
        info = self._info
        for action in chunk[: self.horizon]:
            t0 = time.perf_counter()
            obs, _, terminated, truncated, info = self.env.step(action)
            self.timings["env_s"] += time.perf_counter() - t0
            step = info["clock"]  # the absolute clock: it keeps counting through the video
            if obs.get("front_rgb") is None and self.frame_stride and step % self.frame_stride == 0 and not (terminated or truncated):
                obs["front_rgb"] = self._render()
            frames.append(LowLevelFrame(step, obs.get("front_rgb"), obs["joint_state"], np.asarray(action)))
            if terminated or truncated:
                break
        if self.render_query and obs.get("front_rgb") is None and not (terminated or truncated):
            obs["front_rgb"] = self._render()
        self._obs, self._info = obs, info
        return obs, 0.0, terminated, truncated, dict(info, frames=frames)
