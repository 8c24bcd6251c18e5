"""The benchmark's own planner as a low-level policy: subgoal text in, joint-space action chunk out.

:class:`EpisodePlanner` owns a private copy of one official episode (built from the episode's
identity, as the benchmark builds it: same seed, same conditioning video) with the ``multi_choice``
planner wrapper. Asked for a chunk for a subgoal it has not planned yet, it maps the text to an
option and a point as the ``multi_choice`` executor does (``envs/official/mapping.py``), lets the
benchmark's motion planner execute that option in its copy, and keeps every 8-D joint action the
planner sent (absolute joint targets + gripper +1 open / -1 closed: the ``joint_angle`` action
space). The copy runs in lockstep with the client: the planner runs in a thread whose every env
step waits until its action is handed out, so the copy never executes an action the client has
not been given, and both walk the same states (the same simulator, seed and actions; the client
executes every action of a chunk). When the subgoal changes before a plan is over, the planner is
stopped at its next step (an exception the benchmark's FailAwareWrapper turns into an error of that
option), and the copy is exactly where the client is: nothing is rolled back, so the task's own
state (counts, presses) stays that of the actions really executed.

It never sees the memory: only the subgoal text and the observation the client sends (whose joint
state is compared with the copy's, ``drift_rad``, so a client that executes fewer actions than it
is given shows up instead of silently diverging). A finished plan, a text no option executes, or a
planner failure in the copy ("Fail to parameterize path") all answer with a chunk that holds the
last target, and say why in :attr:`log`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import gymnasium as gym
import numpy as np

from envs.episodes import EpisodeSpec


@dataclass
class PlanRecord:
    """One plan the planner made: the subgoal, the option command it became, its actions, why it ended."""

    subgoal: str
    command: str | None
    actions: int
    outcome: str
    plan_s: float
    handed: int = 0


class PlanAborted(RuntimeError):
    """Raised inside the planner's env step when the client moved on to another subgoal."""


class _LockstepTap(gym.Wrapper):
    """Under the planner: each action waits until it is handed out, then steps the copy."""

    def __init__(self, env, planner: "EpisodePlanner"):
        super().__init__(env)
        self.planner = planner

    def step(self, action):
        self.planner._offer(np.asarray(action.cpu() if hasattr(action, "cpu") else action, np.float32).reshape(-1))
        return self.env.step(action)


@dataclass
class EpisodePlanner:
    """The planner of one official episode (module docstring)."""

    spec: EpisodeSpec
    chunk: int = 16
    render_lod: str = "simplified"
    log: list[PlanRecord] = field(default_factory=list)

    def __post_init__(self):
        from envs.official.env import OfficialSubgoalEnv

        if self.chunk < 1:
            raise ValueError(f"chunk must be >= 1, got {self.chunk!r}")
        t0 = time.perf_counter()
        self.env = OfficialSubgoalEnv(self.spec.task, split=self.spec.split, max_steps=10 ** 7,
                                      video_stride=10 ** 9, render_lod=self.render_lod)
        obs, _ = self.env.reset(options={"episode": self.spec})
        self.reset_s = time.perf_counter() - t0
        self._install_lockstep()
        from envs.official.joint_env import official_action_dim

        grip = [1.0] if official_action_dim(self.spec.task) == 8 else []  # the stick robot has no gripper
        self._hold = np.concatenate([np.asarray(obs["joint_state"], np.float32)[:7], grip]).astype(np.float32)
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._offered: np.ndarray | None = None
        self._go = self._abort = False
        self._thread_done = True
        self._subgoal: str | None = None

    # ------------------------------------------------------------------ the copy, in lockstep
    def _install_lockstep(self) -> None:
        from envs.official.env import find_wrapper

        e = find_wrapper(self.env.official, "_ActionTap", "cannot run the planner in lockstep")
        e.env = _LockstepTap(e.env, self)

    @property
    def qpos(self) -> np.ndarray:
        """The copy's 7 arm joints now (read only while no plan is stepping)."""
        q = self.env.official.unwrapped.agent.robot.get_qpos()
        q = q.cpu().numpy() if hasattr(q, "cpu") else np.asarray(q)
        return np.asarray(q, np.float32).reshape(-1)[:7]

    def _offer(self, action: np.ndarray) -> None:
        """Planner thread: wait until ``action`` is handed out (then it executes) or the plan is stopped."""
        with self._cv:
            self._offered = action
            self._cv.notify_all()
            self._cv.wait_for(lambda: self._go or self._abort)
            if self._abort:
                self._offered = None
                raise PlanAborted("the client moved on to another subgoal")
            self._go = False

    def _take(self) -> np.ndarray | None:
        """Main thread: the running plan's next action (it then executes in the copy), or None when over."""
        with self._cv:
            self._cv.wait_for(lambda: self._offered is not None or self._thread_done)
            if self._offered is None:
                return None
            action, self._offered = self._offered, None  # taken: the next take waits for a new offer
            self._go = True
            self._cv.notify_all()
            return action

    def _run_plan(self, subgoal: str, record: PlanRecord) -> None:
        t0 = time.perf_counter()
        try:
            _, _, _, _, info = self.env.step(subgoal)
            if info.get("command") is None:
                record.outcome = "no option executes this subgoal"
            elif self.env.status == "error":
                aborted = "PlanAborted" in str(self.env.error) or "moved on" in str(self.env.error)
                record.outcome = "stopped: the client moved on" if aborted else f"planner failed: {self.env.error}"
            else:
                record.outcome = f"planned ({self.env.status})"
            record.command = None if info.get("command") is None else str(info.get("command"))
        except Exception as exc:  # the planner's own crash: the copy holds still from here
            record.outcome = f"planner crashed: {type(exc).__name__}: {exc}"
        finally:
            if self.env.status != "ongoing":
                # the client's env decides the episode; an error of a stopped option is no error of it
                self.env.status, self.env.error = "ongoing", None
            record.plan_s = time.perf_counter() - t0
            with self._cv:
                self._thread_done = True
                self._cv.notify_all()

    def _stop_plan(self) -> None:
        if self._thread is not None:
            with self._cv:
                self._abort = True
                self._cv.notify_all()
            self._thread.join()
        self._thread, self._abort, self._go, self._offered, self._thread_done = None, False, False, None, True

    def _start_plan(self, subgoal: str) -> None:
        record = PlanRecord(subgoal, None, 0, "planning", 0.0)
        self.log.append(record)
        self._thread_done = False
        self._thread = threading.Thread(target=self._run_plan, args=(subgoal, record), name="planner", daemon=True)
        self._thread.start()

    def _same_target(self, a: str, b: str) -> bool:
        """Whether two subgoal texts resolve to the same option and object in the scene the running
        plan was decided in (as the multi_choice executor resolves a point: the nearest candidate).
        A memory that re-grounds its object in every view moves the point by a few pixels; that is
        no new subgoal, and restarting the plan at each query would never let it finish."""
        snap = getattr(self.env, "_decision", None)
        if snap is None:
            return False
        ra, rb = self.env.resolve(a), self.env.resolve(b)
        if ra is None or rb is None:
            return False
        return ra[0] == rb[0] and ra[1] is not None and ra[1] is rb[1]

    # ------------------------------------------------------------------ the policy
    def act(self, subgoal: str, joint_state=None) -> tuple[np.ndarray, dict]:
        """The next ``chunk`` actions for ``subgoal`` (padded with the last target), and what happened."""
        subgoal = (subgoal or "").strip()
        if subgoal != self._subgoal and subgoal and self._subgoal and self._same_target(subgoal, self._subgoal):
            self._subgoal = subgoal  # the same option on the same object (a re-grounded point): keep the plan
            if self.log:
                self.log[-1].subgoal = subgoal
        if subgoal != self._subgoal:
            self._stop_plan()
            self._subgoal = subgoal
            drift = None if joint_state is None else float(
                np.abs(np.asarray(joint_state, np.float32).reshape(-1)[:7] - self.qpos).max())
            if subgoal:
                self._start_plan(subgoal)
        else:
            drift = None
        out = []
        while len(out) < self.chunk and self._thread is not None:
            a = self._take()
            if a is None:
                break
            out.append(a)
        if self.log and self.log[-1].subgoal == subgoal:
            self.log[-1].actions += len(out)
            self.log[-1].handed += len(out)
        if out:
            self._hold = out[-1]
        actions = np.stack(out + [self._hold] * (self.chunk - len(out))).astype(np.float32)
        return actions, {"subgoal": subgoal, "planned": len(out), "drift_rad": drift, "plans": len(self.log),
                         "outcome": self.log[-1].outcome if self.log else None}

    def close(self) -> None:
        self._stop_plan()
        self.env.close()
