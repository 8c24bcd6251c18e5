"""The benchmark-facing env: conditioning video inside ``reset``, step budget, status, errors.

``RoboMMEEnv`` wraps one ManiSkill task (``envs.tasks.*``) and gives it the benchmark's episode
semantics:

* ``reset(seed=..., options={"episode": EpisodeSpec})`` builds the scene of that episode and, for
  the video tasks, runs the scripted demonstration. The demonstration frames are returned in
  ``info["video"]`` (a :class:`DemoVideo`: front frames, wrist frames, joint states and the
  absolute clock of each, in the order the scene showed them); the observation is the current
  frame, so ``video.front + [obs["front_rgb"]]`` is the benchmark's list-valued observation.
* The step budget (``max_steps``, default: the split's, 1300 or 1800 on ``ood``) counts only steps after the video; the episode
  is truncated once it is exceeded. Scene animations keep the absolute clock, which includes the
  video steps.
* ``info["status"]`` is ``ongoing``, ``success``, ``fail``, ``timeout`` or ``error``; an
  exception inside the simulator becomes ``error`` with the message, never a failure.
* Frames are rendered only on request: ``render_stride`` renders the front camera every k policy
  steps (0 = never) and ``front_frame()`` renders it now.
"""

from __future__ import annotations

from collections.abc import Callable

import traceback
from dataclasses import dataclass, field, replace

import gymnasium as gym
import numpy as np

from envs.core.base_task import RoboMMETask
from envs.core.rewording import GOAL_STYLES
from envs.core.sampling import SceneSamplingError
from envs.core.solvers import Executor, PlanningFailed, seed_planner_randomness
from envs.episodes import EpisodeSpec, base_seed, check_split, retry_seeds, unsolved_reason

# steps a demonstration entry may still take to succeed after its solver reported a failure (a cube
# still settling) before the demonstration is declared broken
DEMO_FAILURE_GRACE = 50


FEED_KEYS = ("front_rgb_list", "wrist_rgb_list", "joint_state_list", "eef_state_list", "gripper_state_list")
"""The raw observation lists of the challenge interface (the official envs' observation keys)."""


class SceneUnavailable(RuntimeError):
    """This seed's scene cannot be used: the sampler found no valid layout, or the scripted
    demonstration could not complete. The benchmark's generator moves on to the next seed."""


class DemonstrationFailed(SceneUnavailable):
    """The conditioning video's scripted demonstration could not complete its subgoal."""


class EpisodeUnavailable(RuntimeError):
    """No seed within the split's retries gives a usable scene: names task, split, episode, reasons."""


@dataclass
class DemoVideo:
    front: list[np.ndarray] = field(default_factory=list)
    wrist: list[np.ndarray] = field(default_factory=list)
    joint_state: list[np.ndarray] = field(default_factory=list)
    clock: list[int] = field(default_factory=list)
    gripper: list[np.ndarray] = field(default_factory=list)
    """The two finger positions (m) of each frame, as the hand's encoders log them (empty: not logged)."""

    def __len__(self) -> int:
        return len(self.front)


class RoboMMEEnv(gym.Wrapper):
    def __init__(
        self,
        env: RoboMMETask,
        max_steps: int | None = None,
        render_stride: int = 0,
        video_stride: int | Callable[[str], int] = 1,
        wrist: bool = False,
        demo_step_cap: int = 3000,
    ):
        """``video_stride``: record every k-th clock tick of the demonstration into ``info["video"]``
        (its physics is the same at any k); or a function of the episode's goal text giving k, asked
        after the scene is sampled and before the demonstration plays, for consumers whose need
        depends on what the goal asks (the memory renders the video only as finely as the tools
        this goal enables read it)."""
        super().__init__(env)
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"max_steps must be positive, got {max_steps!r}")
        # None: each episode gets its split's budget (1300; 1800 on ood)
        self.budget_from_split = max_steps is None
        self._max_steps = 1300 if max_steps is None else max_steps
        self.render_stride = render_stride
        self.video_stride = video_stride if callable(video_stride) else max(1, video_stride)
        self._video_every = 1
        self.wrist = wrist
        self.challenge_feed = False
        """Record every step's raw observation lists for a challenge client (take_new_observations)."""
        self._feed: dict[str, list] = {k: [] for k in FEED_KEYS}
        self.demo_step_cap = demo_step_cap
        self.steps = 0
        self.status = "ongoing"
        self.error: str | None = None
        self.spec_episode: EpisodeSpec | None = None
        self.goal_style = "template"
        self.goal_seed = 0
        self._goal: str | None = None

    @property
    def max_steps(self) -> int:
        return self._max_steps

    @max_steps.setter
    def max_steps(self, value: int) -> None:
        """An explicit budget: it holds for every later episode, whatever its split."""
        self._max_steps = int(value)
        self.budget_from_split = False

    @property
    def task(self) -> RoboMMETask:
        return self.env.unwrapped

    # ------------------------------------------------------------------ observation
    def front_frame(self) -> np.ndarray:
        return self.task.render_front()["rgb"]

    def _obs(self, render: bool) -> dict:
        t = self.task
        q = t.qpos()
        return {
            "front_rgb": self.front_frame() if render else None,
            "wrist_rgb": t.render_wrist() if (render and self.wrist) else None,
            "joint_state": q[:7].copy(),
            "gripper_state": (q[7:9].copy() if q.shape[0] >= 9 else np.zeros(2, np.float32)),
            "step": self.steps,
            "clock": t.clock,
        }

    # ------------------------------------------------------------------ the challenge feed
    def _feed_frame(self) -> None:
        """Append the current step's raw observation lists (every camera rendered) to the feed."""
        from scipy.spatial.transform import Rotation

        t = self.task
        q = t.qpos()
        pose = t.agent.tcp.pose
        p = pose.p[0].cpu().numpy().astype(np.float32)
        w, x, y, z = (float(v) for v in pose.q[0].cpu().numpy())
        rpy = Rotation.from_quat([x, y, z, w]).as_euler("xyz").astype(np.float32)
        f = self._feed
        f["front_rgb_list"].append(self.front_frame())
        f["wrist_rgb_list"].append(t.render_wrist())
        f["joint_state_list"].append(q[:7].copy())
        f["eef_state_list"].append(np.concatenate([p, rpy]))
        f["gripper_state_list"].append(q[7:9].copy() if q.shape[0] >= 9 else np.zeros(2, np.float32))

    def take_new_observations(self) -> dict[str, list]:
        """The raw observation lists of every step since the previous call, as the official envs give
        them (the first call after a reset: the conditioning video and the current frame), for a
        challenge-interface client (``policies/challenge_client.py``). Needs ``challenge_feed`` set
        before the reset: it renders both cameras at every step; the end effector is the TCP pose in
        the world frame (xyz + roll-pitch-yaw), as the official ``eef_state_list``."""
        if not self.challenge_feed:
            raise RuntimeError("take_new_observations() needs challenge_feed = True before reset()")
        out, self._feed = self._feed, {k: [] for k in FEED_KEYS}
        return out

    def goal_list(self) -> list[str]:
        """The goal as a list of paraphrases (the challenge's ``task_goal``): the benchmark's templates,
        or the one rewording this episode is given under ``--goal-style reworded``."""
        return list(self.task.goal_texts()) if self.goal_style == "template" else [self._info()["goal"]]

    def _info(self) -> dict:
        t = self.task
        if self._goal is None:
            self._goal = t.goal_text(self.goal_style, self.goal_seed)
        return {
            "goal": self._goal,
            "goal_style": self.goal_style,
            "template_goal": t.goal_texts()[0],
            "task_goal": t.goal_texts(),
            "subgoal": t.simple_subgoal(),
            "status": self.status,
            "clock": t.clock,
            "steps": self.steps,
            "subgoal_index": t.checker.index if t.checker else 0,
            "error": self.error,
        }

    def oracle_subgoal(self) -> str:
        """The grounded ground-truth subgoal (renders a segmentation frame at subgoal onset)."""
        return self.task.grounded_subgoal()

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        options = dict(options or {})
        spec = options.get("episode")
        if spec is not None and not isinstance(spec, EpisodeSpec):
            raise TypeError(f"options['episode'] must be an EpisodeSpec, got {type(spec).__name__}")
        if spec is not None and spec.task != self.task.TASK:
            raise ValueError(f"episode for task {spec.task!r} given to a {self.task.TASK} env")
        retry = bool(options.pop("retry", True))
        if spec is not None and self.budget_from_split:
            self._max_steps = check_split(spec.split).max_steps
        if spec is not None and retry and check_split(spec.split).solvable_only:
            why = unsolved_reason(spec.task, spec.split, spec.episode_idx)
            if why is not None:
                raise EpisodeUnavailable(
                    f"{spec.task} {spec.split} episode {spec.episode_idx}: the oracle solves no scene within the "
                    f"split's {check_split(spec.split).max_retry} retries ({why})")
        # the goal every consumer is given: the template, or one rewording drawn from the episode's
        # goal stream (envs/core/rewording.py); kept until the next reset
        self.goal_style = str(options.pop("goal_style", "template"))
        self.goal_seed = int(options.pop("goal_seed", 0))
        if self.goal_style not in GOAL_STYLES:
            raise ValueError(f"unknown goal style {self.goal_style!r} ({', '.join(GOAL_STYLES)})")
        self._goal = None
        attempts = retry_seeds(spec) if (spec is not None and retry) else [None]
        reasons: list[str] = []
        for attempt_seed in attempts:
            current = spec if attempt_seed is None else replace(spec, env_seed=attempt_seed)
            self.spec_episode = current
            try:
                # the planner's IK restarts draw from the C library's rand(): seed it from the episode
                seed_planner_randomness(current.env_seed if current is not None else (seed or 0))
                self.env.reset(seed=seed, options={**options, "episode": current} if current is not None else options)
                self.steps, self.status, self.error = 0, "ongoing", None
                self._feed = {k: [] for k in FEED_KEYS}
                video = self._play_demonstration()
                break
            except (SceneUnavailable, SceneSamplingError, PlanningFailed) as exc:
                if attempt_seed is None:
                    raise
                reasons.append(f"seed {attempt_seed}: {exc}")
        else:
            raise EpisodeUnavailable(
                f"{spec.task} {spec.split} episode {spec.episode_idx}: no scene could be sampled and demonstrated "
                f"at seeds {attempts[0]}..{attempts[-1]} (the split's retries); {'; '.join(reasons)}")
        if self.challenge_feed:
            self._feed_frame()  # the current frame closes the first call's lists, after the video
        info = self._info()
        info["video"] = video
        info["episode"] = self.spec_episode
        info["retry_offset"] = 0 if spec is None else self.spec_episode.env_seed - base_seed(spec.task, spec.split, spec.episode_idx)
        self._update_status()
        return self._obs(render=True), info

    def _play_demonstration(self) -> DemoVideo:
        """Run the demonstration entries with the scripted solvers; record the shown frames."""
        t = self.task
        video = DemoVideo()
        entry = t.current_entry
        if entry is None or not entry.demonstration:
            return video
        # the goal this episode is given (a rewording under --goal-style reworded), as the memory will read it
        self._video_every = self._resolve_video_stride(t.goal_text(self.goal_style, self.goal_seed))
        ex = Executor(t)
        steps = 0
        while entry is not None and entry.demonstration:
            index = t.checker.index
            ex.sync()
            # the same options the scripted policy executes
            motion = ex.guarded(t.motion(entry.option, entry.target, ex, entry.params), entry.name)
            for action in motion:
                self._demo_step(action, entry, video)
                steps += 1
                if t.checker.index != index or steps > self.demo_step_cap:
                    break
            # a solver that finished before its entry succeeded holds still until it does (a
            # settling cube, a button springing back); after a solver failure nothing will change,
            # so wait only DEMO_FAILURE_GRACE steps instead of running on to the cap
            cap = min(self.demo_step_cap, steps + DEMO_FAILURE_GRACE) if ex.failures else self.demo_step_cap
            while t.checker.index == index and steps <= cap and not t.checker.failed:
                self._demo_step(ex.action(), entry, video)
                steps += 1
            if steps > cap or t.checker.failed:
                raise DemonstrationFailed(f"{t.TASK}: the demonstration did not complete '{entry.name}' ({ex.failures})")
            entry = t.current_entry
        return video

    def _resolve_video_stride(self, goal: str) -> int:
        k = self.video_stride(goal) if callable(self.video_stride) else self.video_stride
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"video_stride gave {k!r} for the goal {goal!r}; it must be an int >= 1")
        return k

    def _demo_step(self, action, entry, video: DemoVideo) -> None:
        t = self.task
        self.env.step(action)
        if self.challenge_feed and entry.record:
            self._feed_frame()
        if entry.record and t.clock % self._video_every == 0:
            video.front.append(self.front_frame())
            if self.wrist:
                video.wrist.append(t.render_wrist())
            q = t.qpos()
            video.joint_state.append(q[:7].copy())
            if q.shape[0] >= 9:
                video.gripper.append(q[7:9].copy())
            video.clock.append(t.clock)

    def _update_status(self) -> None:
        c = self.task.checker
        if self.status == "error":
            return
        if c.failed:
            self.status = "fail"
        elif c.success:
            self.status = "success"
        elif self.steps >= self.max_steps:
            self.status = "timeout"
        else:
            self.status = "ongoing"

    def step(self, action):
        if self.status != "ongoing":
            raise RuntimeError(f"step() called on a finished episode (status {self.status!r}); call reset()")
        try:
            self.env.step(np.asarray(action, dtype=np.float32))
            self.steps += 1
            self._update_status()
            render = self.render_stride > 0 and self.steps % self.render_stride == 0
            obs = self._obs(render=render)
            if self.challenge_feed:
                self._feed_frame()
        except Exception as exc:  # the simulator itself broke: an error, not a failure
            self.status = "error"
            self.error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
            obs = {"front_rgb": None, "wrist_rgb": None, "joint_state": np.zeros(7, np.float32), "gripper_state": np.zeros(2, np.float32), "step": self.steps, "clock": self.task.clock}
        info = self._info()
        terminated = self.status in ("success", "fail", "error")
        truncated = self.status == "timeout"
        return obs, 0.0, terminated, truncated, info
