"""Inserts a memory between the composer and the subgoal-level env.

On ``step(proposed_subgoal)`` the memory may revise the proposal (read, re-ground, rewrite one
slot, or abstain), the revised subgoal is executed, and every low-level frame seen on the way is
fed to ``memory.observe``. With ``memory=None`` the wrapper is a pure pass-through: the same
subgoal reaches the env, so actions and outcomes are identical step for step (tested).

The memory only ever receives frames, the goal text, executed actions/joint states and the
proposed subgoal; never the simulator.

``window`` makes it the recent-frame baseline: before every decision the memory is rebuilt from
scratch out of the last ``window`` frames only (conditioning video included while it is still in
the window), so anything older is forgotten.
"""

from __future__ import annotations

from collections import deque

import gymnasium as gym

from memory.frames import Frame


def to_frame(f, source: str = "live") -> Frame:
    return Frame(step=f.step, rgb=f.rgb, joint_state=f.joint_state, action=f.action, source=source)


class MemoryLayer(gym.Wrapper):
    def __init__(self, env, memory=None, window: int | None = None):
        super().__init__(env)
        if window is not None and window < 1:
            raise ValueError(f"recent-frame window must be >= 1, got {window!r}")
        self.memory = memory
        self.window = window
        self._recent: deque | None = None
        self._goal = ""
        self._obs = None
        self.revisions: list[dict] = []

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._obs, self._goal, self.revisions = obs, info["goal"], []
        if self.memory is not None:
            video = info.get("video")
            demo = []
            if video is not None:
                demo = [Frame(step=c, rgb=rgb, joint_state=q, action=None, source="video")
                        for c, rgb, q in zip(video.clock, video.front, video.joint_state)]
            if self.window is not None:
                self._recent = deque(demo, maxlen=self.window)
                self.memory.reset(self._goal, [])
            else:
                self.memory.reset(self._goal, demo)
            first = Frame(step=obs["clock"], rgb=obs.get("front_rgb"), joint_state=obs["joint_state"], action=None)
            if self.window is not None:
                self._recent.append(first)
            else:
                self.memory.observe(first)
        return obs, info

    def _rebuild_from_window(self) -> None:
        self.memory.reset(self._goal, [])
        for f in self._recent:
            self.memory.observe(f)

    def step(self, proposed: str):
        if self.memory is None:
            return self.env.step(proposed)
        if self.window is not None:
            self._rebuild_from_window()
        current = Frame(step=self._obs["clock"], rgb=self._obs.get("front_rgb"), joint_state=self._obs["joint_state"], action=None)
        rev = self.memory.revise(proposed, current)
        obs, reward, terminated, truncated, info = self.env.step(rev.text)
        for f in info.get("frames", []):
            frame = to_frame(f)
            if self.window is not None:
                self._recent.append(frame)
            else:
                self.memory.observe(frame)
        self._obs = obs
        record = {"step": current.step, "proposed": proposed, "revised": rev.text, "rewritten": rev.rewritten,
                  "memory_read": rev.read, "memory_abstained": rev.abstained}
        self.revisions.append(record)
        return obs, reward, terminated, truncated, dict(info, **{k: v for k, v in record.items() if k != "step"})
