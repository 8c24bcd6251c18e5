"""The CPU default low-level policy: executes a grounded subgoal with the task's scripted solver.

It stands in for π0.5 on machines without a GPU, and keeps the property that matters for memory
research: **the point in the subgoal decides what is acted on.** The subgoal's verb selects an
executor option (the task's ``OPTION_PATTERNS``), and the ``<y, x>`` point selects the candidate
object whose projected centre is nearest to it in the current front view; a wrong memory read
therefore produces a wrong action. A subgoal without a point acts on the candidate its words name
(colour word) or on the only candidate.

The plan is cached while the subgoal stays the same: the same text, or a text that resolves to
the same option on the same object (a re-grounded point a few pixels away). ``noise`` injects the benchmark's kind of
execution failure (a grasp from too high, an offset grasp, then a recovery; ``policies/noise.py``),
drawn from the episode's policy stream, so policy seeds mean something on the CPU default.
When a pick ends with the fingers closed on nothing while its subgoal stands, it is tried again
(:data:`PICK_RETRIES`), as a closed-loop policy with an empty hand would; otherwise a finished
motion holds still until the subgoal changes.
"""

from __future__ import annotations

import re

import numpy as np

from envs.core import solvers as S
from policies.base import Policy
from policies import failure_model as F
from policies.executor_profile import ExecutorProfile, skill_of
from policies.noise import ScriptedNoise
from subgoals.grammar import points_in, ungrounded

__all__ = ["EMPTY_GRIP_M", "PICK_RETRIES", "ScriptedNoise", "ScriptedPolicy", "failed_grasp_attempt"]

PICK_RETRIES = 2
"""How many more times a pick is tried while its subgoal stands, when the grip it ended with closed
on nothing (the cube slid from between the fingers, or a neighbour or the bin's wall took the
fingers' place). A closed-loop policy given the same subgoal with an empty hand reaches again; the
scripted motion alone would hold still until the subgoal changed, which it never does (the env's
checker waits for the lift), so one physical miss used to time the episode out in either arm."""

EMPTY_GRIP_M = 0.002
"""Each finger this close (m) to fully closed: the grip holds nothing (a cube holds each finger about
0.02 m open; the thinnest thing picked, a peg, about 0.01 m)."""




class ScriptedPolicy(Policy):
    def __init__(self, env, horizon: int = 16, noise: ScriptedNoise = ScriptedNoise(),
                 profile: ExecutorProfile | None = None):
        self.env = env  # the RoboMMEEnv (or anything whose .unwrapped is a RoboMMETask)
        self.horizon = horizon
        self.noise = noise
        self.profile = profile if profile is not None else ExecutorProfile()
        self.executor_events: list[dict] = []
        self._text: str | None = None
        self._key: tuple | None = None
        self._motion = None
        self._ex: S.Executor | None = None
        self.rng = np.random.default_rng(0)
        self.resolutions: list[dict] = []
        self.noise_events: list[dict] = []
        self.pick_retries: list[dict] = []
        self._retry = None  # the object of a plain pick under way, picked again when the grip ends empty
        self._retries = 0

    @property
    def task(self):
        return self.env.unwrapped

    def reset(self, seed: int) -> None:
        self._text, self._motion, self._ex, self._key = None, None, None, None
        self.rng = np.random.default_rng(seed)
        self.resolutions = []
        self.noise_events = []
        self.executor_events = []
        self.pick_retries = []
        self._retry, self._retries = None, 0

    # ------------------------------------------------------------------ subgoal -> motion
    def scene(self) -> dict:
        """Each option's candidates and where they project now: ``resolve(text, scene)`` later answers
        as the executor would have at this moment (the audit resolves a decision's texts after the
        chunk they started has run, when a moving object, a container in a swap, is elsewhere)."""
        t = self.task
        out: dict = {}
        for _, option in t.OPTION_PATTERNS:
            if option not in out:
                out[option] = [(label, a, tuple(t.project(t.pos_of(a)))) for label, a in t.candidates(option)]
        return out

    def resolve(self, text: str, scene: dict | None = None):
        """Subgoal text -> (option, target object) in the current scene (or in ``scene``, from
        :meth:`scene`), or None."""
        t = self.task
        low = text.strip().lower()
        option = next((opt for pat, opt in t.OPTION_PATTERNS if re.search(pat, low)), None)
        if option is None:
            return None
        if scene is not None and option in scene:
            cands = [(label, a) for label, a, _ in scene[option]]
            where = [pt for _, _, pt in scene[option]]
        else:
            cands = t.candidates(option)
            where = None
        if not cands:
            return option, None
        pts = [p.as_tuple() for p in points_in(text)]
        if pts:
            y, x = pts[0]
            where = where or [tuple(t.project(t.pos_of(a))) for _, a in cands]
            d = [np.hypot(*(np.array(w) - (y, x))) for w in where]
            return option, cands[int(np.argmin(d))][1]
        named = [a for label, a in cands if label in low]
        if len(named) == 1:
            return option, named[0]
        # no point and no unique name: only an unambiguous scene resolves it
        return option, cands[0][1] if len(cands) == 1 else None

    def _start(self, text: str, resolved):
        t = self.task
        if self._ex is None:
            self._ex = S.Executor(t)
        self._ex.sync()
        self.resolutions.append({"subgoal": text, "option": None if resolved is None else resolved[0]})
        self._retry, self._retries = None, 0
        if resolved is None or resolved[1] is None and resolved[0] not in ("wait",):
            return iter(())
        option, target = resolved
        ex = self._ex
        if option == "pick" and ex.has_gripper:
            self._retry = target
        if option in CARRY_OPTIONS and self.noise.p_drop > 0 and ex.has_gripper and self.rng.random() < self.noise.p_drop:
            after = int(self.rng.integers(2, 12))  # early in the transport, away from where it should go
            self.noise_events.append({"subgoal": text, "drop_after_steps": after})
            return ex.guarded(F.slipping(t.motion(option, target, ex, {}), after, S.OPEN), text)
        if option == "pick" and self.noise.p_fail_grasp > 0 and self.rng.random() < self.noise.p_fail_grasp:
            kind = "high" if self.rng.random() < 0.5 else "offset"
            angle = float(self.rng.uniform(0.0, 2.0 * np.pi))
            self.noise_events.append({"subgoal": text, "failed_grasp": kind})
            failed = failed_grasp_attempt(ex, grasp_point(t, target), kind, angle, self.noise)
            return ex.guarded(F.chained(failed, lambda: t.motion(option, target, ex, {})), text)
        if self.profile.active:
            failure = F.draw_failure(self.rng, self.profile.rates(t.TASK, skill_of(option)), skill_of(option))
            if failure is not None:
                motion = self._failed_motion(failure, text, option, target)
                if motion is not None:
                    self._retry = None  # the profile's failure is the fitted outcome: no retry on top of it
                    return ex.guarded(motion, text)
        return ex.guarded(t.motion(option, target, ex, {}), text)

    def _failed_motion(self, failure: F.Failure, text: str, option: str, target):
        """The motion of ``option`` on ``target`` failed as ``failure`` says (policies/failure_model.py),
        recorded in ``executor_events``; None where the failure cannot apply here (no other object
        near enough to pick by mistake, no sibling move, no gripper to drop with)."""
        t, ex, k, p = self.task, self._ex, failure.kind, failure.params
        run = lambda o=option, tg=target: t.motion(o, tg, ex, {})  # noqa: E731
        if k in ("miss_retry", "miss"):
            attempt = failed_grasp_attempt(ex, grasp_point(t, target), p["attempt"], p["angle"], self.noise)
            motion = F.chained(attempt, run) if k == "miss_retry" else attempt
        elif k == "wrong_object":
            other = _nearest_other(t, option, target, p["near_m"])
            if other is None:
                return None
            p["object"] = other[0]
            motion = run(option, other[1])
        elif k == "drop":
            if not ex.has_gripper:
                return None
            motion = F.slipping(run(), p["after_steps"], S.OPEN)
        elif k in ("short", "stall"):
            motion = F.truncated(run(), p["after_steps"])
        elif k == "extra":
            motion = F.chained(run(), run)
        elif k == "late":
            motion = F.delayed(run(), ex.hold, p["shift_steps"])
        elif k == "early":
            motion = F.hurried(run(), p["shift_steps"])
        elif k == "wrong_turn":
            sib = F.sibling_option(option, [o for _, o in t.OPTION_PATTERNS], p.pop("pick"))
            if sib is None:
                return None
            p["instead"] = sib
            motion = run(sib, target)
        else:
            raise KeyError(f"no motion for failure kind {k!r}")
        self.executor_events.append(failure.record(text, option))
        return motion

    def infer(self, obs: dict) -> np.ndarray:
        text = obs["subgoal"]
        if text != self._text:
            self._text = text
            resolved = self.resolve(text) if text else None
            key = None if resolved is None else (resolved[0], id(resolved[1]), ungrounded(text))
            # the same verb on the same object (a point that moved by a few pixels) continues the
            # current motion, as a learned policy would; anything else starts a new one
            if key is None or key != self._key:
                self._key = key
                self._motion = self._start(text, resolved) if text else iter(())
        chunk = []
        for _ in range(self.horizon):
            a = next(self._motion, None)
            if a is None and self._empty_grip_after_pick():
                a = next(self._motion, None)
            if a is None:  # the motion is over: hold still until the subgoal changes
                if self._ex is None:
                    self._ex = S.Executor(self.task)
                a = self._ex.action()
            chunk.append(a)
        return np.stack(chunk).astype(np.float32)

    def _empty_grip_after_pick(self) -> bool:
        """A plain pick just ended with nothing between the fingers: start it again on the same object
        (where it stands now), at most :data:`PICK_RETRIES` times per subgoal, the first retry with the
        grasp turned a quarter. True when a new motion was started."""
        if self._retry is None or self._retries >= PICK_RETRIES or self._ex is None:
            return False
        fingers = np.asarray(self.task.qpos(), dtype=float)[7:9]
        if fingers.shape[0] < 2 or float(fingers.max()) >= EMPTY_GRIP_M:
            return False
        self._retries += 1
        self.pick_retries.append({"subgoal": self._text, "attempt": self._retries + 1})
        ex = self._ex
        ex.sync()
        # the first retry closes the fingers on the other pair of faces (a neighbour or a wall along
        # the first pair is the usual reason a grip closes empty); the second tries the first pair again
        turns = 1 if self._retries == 1 else 0
        self._motion = ex.guarded(self.task.motion("pick", self._retry, ex, {"quarter_turns": turns}), self._text)
        return True

    @property
    def failures(self) -> list[str]:
        return [] if self._ex is None else list(self._ex.failures)


CARRY_OPTIONS = frozenset({"place", "move_over", "insert_left", "insert_right"})
"""Options that carry a grasped object, where a slip loses it."""


def _nearest_other(task, option: str, target, near_m: float):
    """The (label, object) among ``option``'s candidates nearest to ``target`` other than it, within
    ``near_m`` metres on the table (a learned policy's wrong pick is a near neighbour); or None."""
    here = np.asarray(task.pos_of(target), dtype=float)[:2]
    best, best_d = None, near_m
    for label, actor in task.candidates(option):
        if actor is target:
            continue
        d = float(np.linalg.norm(np.asarray(task.pos_of(actor), dtype=float)[:2] - here))
        if d <= best_d:
            best, best_d = (label, actor), d
    return best


def grasp_point(task, target) -> np.ndarray:
    """Where a grasp of ``target`` closes, for any object: 2 cm below the top of its collision shape
    (a cube's centre, a container's knob), above its centre on the table."""
    p = np.asarray(task.pos_of(target), dtype=float)[:3].copy()
    try:
        lo, hi = target.get_first_collision_mesh(to_world_frame=True).bounds
    except Exception:  # no collision mesh to measure (an articulation): its position
        return p
    p[2] = float(hi[2] - min(0.02, (hi[2] - lo[2]) / 2))
    return p


def failed_grasp_attempt(ex: S.Executor, xyz, kind: str, angle: float, noise: ScriptedNoise):
    """One failed grasp closing at ``xyz`` (see :func:`grasp_point`): ``noise.high_dz`` too high, or
    ``noise.offset_xy`` beside it along ``angle``; then lift and open again, ready for the real attempt."""
    x, y, z = (float(v) for v in np.asarray(xyz)[:3])
    if kind == "offset":
        x, y = x + noise.offset_xy * np.cos(angle), y + noise.offset_xy * np.sin(angle)
    grasp_z = z + (noise.high_dz if kind == "high" else 0.0)
    yaw = ex.tcp_yaw()
    if ex.gripper != S.OPEN:
        yield from ex.set_gripper(S.OPEN, 6)
    yield from ex.move_to(S.down_pose([x, y, z + 0.08], yaw))
    yield from ex.move_to(S.down_pose([x, y, grasp_z], yaw))
    yield from ex.set_gripper(S.CLOSED, 10)
    yield from ex.move_to(S.down_pose([x, y, z + 0.10], yaw))
    yield from ex.set_gripper(S.OPEN, 6)
