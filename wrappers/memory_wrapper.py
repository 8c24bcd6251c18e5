"""Inserts a memory between the composer and the subgoal-level env.

On ``step(proposed_subgoal)`` the memory may revise the proposal (read, re-ground, rewrite one
slot, or abstain), the revised subgoal is executed, and every low-level frame seen on the way is
fed to ``memory.observe``. With ``memory=None`` the wrapper is a pure pass-through: the same
subgoal reaches the env, so actions and outcomes are identical step for step (tested).

The memory (:mod:`memory.contract.interface`) only ever receives frames, the goal text, executed
actions/joint states and the proposed subgoal; never the simulator. The recent-frame baseline is
its own wrapper, :class:`wrappers.recent_frames.RecentFrames`.

The wrapper keeps the subgoal-level env's Gym spaces (``envs/spaces.py``: ``Text`` subgoals in,
the camera images with their ``*_rendered`` flags out), inherited from the env it wraps; the
frames of ``info["frames"]`` are already :class:`subgoals.frames.Frame` objects, the memory's
input type, and reach ``memory.observe`` as they are.
"""

from __future__ import annotations

from contextlib import contextmanager

import gymnasium as gym

from envs.spaces import rendered
from memory.contract.frames import Frame


def demo_frames(info: dict) -> list[Frame]:
    """The conditioning video of a reset's ``info`` as memory frames (empty without a video)."""
    video = info.get("video")
    if video is None:
        return []
    fingers = list(getattr(video, "gripper", []) or [])
    if len(fingers) != len(video.clock):  # not logged (or not for every frame): no finger readings at all
        fingers = [None] * len(video.clock)
    return [Frame(step=c, rgb=rgb, joint_state=q, action=None, source="video", gripper=g)
            for c, rgb, q, g in zip(video.clock, video.front, video.joint_state, fingers)]


class MemoryFault(RuntimeError):
    """An exception raised inside the memory, re-raised naming the memory, the call and the step.

    Why: the episode's row is an ``error`` with this text; without it a crash deep inside a tool
    reads like any other crash of the loop, and a bring-your-own memory's author cannot tell which
    of their calls failed or when.
    """

    def __init__(self, memory, call: str, step, exc: BaseException):
        self.call, self.step = call, step
        super().__init__(f"memory {type(memory).__name__}.{call} raised at step {step}: {type(exc).__name__}: {exc}")


@contextmanager
def memory_call(memory, call: str, step):
    try:
        yield
    except MemoryFault:
        raise
    except Exception as exc:
        raise MemoryFault(memory, call, step, exc) from exc


class MemoryWrapper(gym.Wrapper):
    """The subgoal-level env with a memory revising every proposal (``memory=None``: pass-through)."""

    def __init__(self, env, memory=None):
        super().__init__(env)
        self.memory = memory
        self._goal = ""
        self._obs = None
        self.revisions: list[dict] = []

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._obs, self._goal, self.revisions = obs, info["goal"], []
        if self.memory is not None:
            self._start(demo_frames(info), self._first_frame(obs))
        return obs, info

    @staticmethod
    def _first_frame(obs) -> Frame:
        return Frame(step=obs["clock"], rgb=rendered(obs, "front"), joint_state=obs["joint_state"], action=None,
                     gripper=obs.get("gripper_state"))

    # the two hooks the recent-frame baseline overrides
    def _start(self, demo: list[Frame], first: Frame) -> None:
        with memory_call(self.memory, "reset", first.step):
            self.memory.reset(self._goal, demo)
        with memory_call(self.memory, "observe", first.step):
            self.memory.observe(first)

    def _feed(self, frame: Frame) -> None:
        with memory_call(self.memory, "observe", frame.step):
            self.memory.observe(frame)

    def _before_revise(self) -> None:
        pass

    def step(self, proposed: str):
        if self.memory is None:
            return self.env.step(proposed)
        self._before_revise()
        current = self._first_frame(self._obs)
        with memory_call(self.memory, "revise", current.step):
            rev = self.memory.revise(proposed, current)
        obs, reward, terminated, truncated, info = self.env.step(rev.text)
        for f in info.get("frames", []):
            self._feed(f)
        self._obs = obs
        record = {"step": current.step, "proposed": proposed, "revised": rev.text, "rewritten": rev.rewritten,
                  "memory_read": rev.read, "memory_abstained": rev.abstained}
        self.revisions.append(record)
        return obs, reward, terminated, truncated, dict(info, **{k: v for k, v in record.items() if k != "step"})
