"""Turns a low-level RoboMME env into a subgoal-level env: the action is a grounded subgoal string.

``step(subgoal)`` asks the low-level policy for an action chunk for that subgoal, executes up to
``horizon`` actions (stopping early when the episode ends) and returns the frames seen on the way
in ``info["frames"]``, so a memory above can observe every step.

Frames are rendered only where a consumer needs them (software rendering costs tens of physics
steps per frame); ``experiments.loop.render_schedule`` decides the arguments from the run's consumers:

* ``frame_stride``: a front frame for observers at every env step whose absolute clock is a
  multiple of it (0 = none);
* ``early_stride`` / ``early_until``: also one every ``early_stride`` live steps during the first
  ``early_until`` live steps (tools that read the scene layout from the first frames);
* ``render_query``: the current view at each composer query (memory re-grounding, a VLM
  composer). That frame is also attached to the last low-level frame of the chunk, so observers
  see it at no extra cost;
* ``policy_needs_images`` / ``policy_needs_wrist``: the front / wrist view for the policy at
  each query (image policies such as openpi's π0.5). The wrist camera is never rendered otherwise.

Rendering never changes the simulation: the same actions give the same states whatever is
rendered (``tests/test_render_schedule.py``).

``timings`` holds the episode's seconds: ``policy_s`` (policy inference), ``env_s`` (physics and
task logic of the live steps: the env renders nothing itself when its own ``render_stride`` is 0,
as in the harness), ``render_s`` (every render this wrapper requested, front and wrist),
``reset_s`` (the env reset: scene build and conditioning video, with the video's frames),
``renders`` (how many frames this wrapper rendered), and one entry per timer given in ``timers``
(e.g. ``memory_s``: seconds inside the memory layer during this episode).

The Gym contract (``envs/spaces.py``): the action space is ``Text`` (a subgoal; ``""`` holds still
for a chunk), the observation space a ``Dict`` of both camera images, each with a ``*_rendered``
flag (an unrendered camera is an all-zero image with flag 0, read it with ``envs.spaces.rendered``),
the joint state, ``step`` and ``clock``. Internally the low-level observations keep ``None`` for an
unrendered camera (what the policy reads); only ``reset`` / ``step`` convert. The env passes
``gymnasium.utils.env_checker.check_env`` (``tests/test_gym_contract.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace

import gymnasium as gym
import numpy as np

from envs.episode_timings import TIMING_KEYS, read_timings, start_timings
from envs.spaces import subgoal_action_space, subgoal_observation, subgoal_observation_space
from policies.base import PolicyError
from subgoals.frames import Frame


class SubgoalExecution(gym.Wrapper):
    """Subgoal-level env over a :class:`envs.robomme_env.RoboMMEEnv`.

    Args:
        env: the low-level env.
        policy: ``infer(obs) -> (T, D)`` action chunk.
        horizon: env steps per subgoal query.
        frame_stride: render the front camera when the absolute clock is a multiple of this (0: never).
        render_query: render the current view at each query (for the memory or a VLM composer).
        policy_needs_images: the policy reads ``front_rgb``.
        early_stride, early_until: render every ``early_stride`` live steps up to live step ``early_until``.
        policy_needs_wrist: the policy reads ``wrist_rgb`` (defaults to ``policy_needs_images``).
        timers: extra per-episode times, ``name -> callable`` returning a monotonically growing
            number of seconds; ``timings[name]`` is its growth since :meth:`reset`.
        policy_seed: when given, every :meth:`reset` also resets the policy with it, so the env
            alone is reproducible (gymnasium's determinism checks). The harness leaves it None:
            it resets the policy itself from the episode's random stream.

    ``info["frames"]`` holds one :class:`subgoals.frames.Frame` per env step the chunk ran.
    """

    def __init__(self, env, policy, horizon: int = 16, frame_stride: int = 0, render_query: bool = True,
                 policy_needs_images: bool = False, *, early_stride: int = 0, early_until: int = 0,
                 policy_needs_wrist: bool | None = None, timers: Mapping[str, Callable[[], float]] | None = None,
                 policy_seed: int | None = None):
        super().__init__(env)
        self.action_space = subgoal_action_space()
        self.observation_space = subgoal_observation_space()
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon!r}")
        for name, value in (("frame_stride", frame_stride), ("early_stride", early_stride), ("early_until", early_until)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name} must be an int >= 0, got {value!r}")
        self.policy = policy
        self.horizon = horizon
        self.frame_stride = int(frame_stride)
        self.early_stride = int(early_stride)
        self.early_until = int(early_until)
        self.render_query = render_query
        self.policy_needs_images = policy_needs_images
        self.policy_needs_wrist = policy_needs_images if policy_needs_wrist is None else policy_needs_wrist
        self.timers = dict(timers or {})
        self.policy_seed = policy_seed
        self._obs: dict | None = None
        self._info: dict | None = None
        self._t: dict[str, float] = dict.fromkeys(TIMING_KEYS, 0.0)
        self._timer0: dict[str, float] = {}

    @property
    def low(self):
        return self.env  # the RoboMMEEnv

    @property
    def timings(self) -> dict[str, float]:
        """This episode's times (see the module docstring); a fresh dict on every read."""
        return read_timings(self._t, self.timers, self._timer0)

    def reset(self, *, seed=None, options=None):
        self._t, self._timer0 = start_timings(self.timers)
        t0 = time.perf_counter()
        obs, info = self.env.reset(seed=seed, options=options)
        self._t["reset_s"] += time.perf_counter() - t0
        self._obs, self._info = obs, info
        if self.policy_seed is not None:
            self.policy.reset(self.policy_seed)
        return subgoal_observation(obs), info

    # ------------------------------------------------------------------ rendering
    def _render(self) -> np.ndarray:
        t0 = time.perf_counter()
        frame = self.env.get_wrapper_attr("front_frame")()
        self._t["render_s"] += time.perf_counter() - t0
        self._t["renders"] += 1
        return frame

    def _render_wrist(self) -> np.ndarray | None:
        t0 = time.perf_counter()
        frame = self.env.unwrapped.render_wrist()
        self._t["render_s"] += time.perf_counter() - t0
        self._t["renders"] += frame is not None
        return frame

    def wants_frame(self, clock: int, live_step: int) -> bool:
        """Whether an observer needs the front frame of the env step at ``clock`` (live step ``live_step``)."""
        if self.frame_stride and clock % self.frame_stride == 0:
            return True
        return bool(self.early_stride) and live_step <= self.early_until and live_step % self.early_stride == 0

    # ------------------------------------------------------------------ stepping
    def step(self, subgoal: str):
        if not isinstance(subgoal, str):
            raise TypeError(f"a subgoal-level action must be a string, got {type(subgoal).__name__}")
        obs = dict(self._obs)
        if self.policy_needs_images and obs.get("front_rgb") is None:
            obs["front_rgb"] = self._render()
        if self.policy_needs_wrist and obs.get("wrist_rgb") is None:
            obs["wrist_rgb"] = self._render_wrist()
        obs.update(subgoal=subgoal, goal=self._info["goal"])
        frames: list[Frame] = []
        t0 = time.perf_counter()
        try:
            chunk = self.policy.infer(obs)
        except PolicyError as exc:  # infrastructure, not the method: the episode is an error
            self._t["policy_s"] += time.perf_counter() - t0
            info = dict(self._info, status="error", error=f"{type(exc).__name__}: {exc}", frames=frames)
            return subgoal_observation(self._obs), 0.0, True, False, info
        self._t["policy_s"] += time.perf_counter() - t0
        terminated = truncated = False
        info = self._info
        for action in chunk[: self.horizon]:
            t0 = time.perf_counter()
            obs, _, terminated, truncated, info = self.env.step(action)
            self._t["env_s"] += time.perf_counter() - t0
            step = info["clock"]  # the absolute clock: it keeps counting through the video
            done = terminated or truncated
            if obs.get("front_rgb") is None and not done and self.wants_frame(step, info["steps"]):
                obs["front_rgb"] = self._render()
            frames.append(Frame(step, obs.get("front_rgb"), obs["joint_state"], np.asarray(action),
                                gripper=obs.get("gripper_state")))
            if done:
                break
        if self.render_query and obs.get("front_rgb") is None and not (terminated or truncated):
            obs["front_rgb"] = self._render()
            if frames and frames[-1].rgb is None:  # the query's view is the chunk's last frame: share it
                frames[-1] = replace(frames[-1], rgb=obs["front_rgb"])
        self._obs, self._info = obs, info
        return subgoal_observation(obs), 0.0, terminated, truncated, dict(info, frames=frames)
