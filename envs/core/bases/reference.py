"""The task base of the four Reference tasks (PickHighlight, VideoRepick, VideoPlaceButton,
VideoPlaceOrder): :class:`ReferenceTask`.

**Demonstration phases**: subgoal entries for "pick", "place", "press", "put down", "move home
and stay still for 20 steps", static holds of a fixed length (during which scripted swaps run),
and the hidden 30-step arm reset that ends every video. Hold lengths are measured with a phase
clock: the absolute step at which each entry became current. Its options grasp with the
face-aligned yaw whose open fingers clear the neighbouring cubes and that the arm can reach;
placements may turn the wrist, carry lower, or let go a little higher, on the FK-checked legs of
``envs/core/motion/reach.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from envs.core import primitives as P
from envs.core import solvers as S
from envs.core.base_task import REST_QPOS, RoboMMETask
from envs.core.bases.button import ButtonMixin
from envs.core.checker import SubgoalEntry
from envs.core.easing import smoothstep
from envs.core.motion.reach import leg_error, move_leg, plan_chain, stream
from envs.core.options import held_object

HOME_HOLD_STEPS = 20
HIDDEN_RESET_STEPS = 30


class ReferenceTask(ButtonMixin, RoboMMETask):
    """Common predicates, demonstration phases and options of the Reference suite.

    Subclasses provide ``self.cubes`` (list of cube actors) and ``self.button``; optional
    ``self.targets``. The phase clock records, in ``animate``, the absolute step at which each
    subgoal entry became current, so an entry can last an exact number of steps.
    """

    OPTION_PATTERNS = (
        (r"^(place|put|drop)\b.*\btable\b", "put_down"),
        (r"^(put|drop)\b.*\bdown\b", "put_down"),
        *RoboMMETask.OPTION_PATTERNS,
    )

    LIFT_Z = 0.05      # "lifted": the cube's centre above 5 cm
    REST_Z = 0.03      # "resting": the cube's centre below 3 cm (it sits at 2 cm)
    RELEASE_TCP_Z = 0.07  # after a put-down the gripper has risen above 7 cm
    PLACE_RADIUS = 0.05

    cubes: list
    button: Any

    # ------------------------------------------------------------------ phase clock
    def reset_phases(self) -> None:
        self._phase_start: dict[int, int] = {}
        self._home_still = 0
        self._entered = 0

    def on_enter(self, index: int) -> None:
        """Called right after the checker moves on to entry ``index`` (before anyone reads it)."""

    def _after_control_step(self):
        super()._after_control_step()
        if self.checker is not None and self.checker.index != self._entered:
            self._entered = self.checker.index
            self.on_enter(self._entered)

    def track_phase(self, clock: int) -> int:
        """Record the start of the current entry; returns which step of it ``clock`` is (1-based)."""
        if self.checker is None:
            return 0
        start = self._phase_start.setdefault(self.checker.index, clock)
        return clock - start + 1

    def phase_steps(self) -> int:
        if self.checker is None or self.checker.index not in self._phase_start:
            return 0
        return self.clock - self._phase_start[self.checker.index] + 1

    def held_for(self, steps: int) -> Callable[[], bool]:
        return lambda: self.phase_steps() >= steps

    @property
    def policy_start_clock(self) -> int | None:
        """Absolute step of the first policy-controlled step (None before it)."""
        if self.checker is None:
            return None
        first_live = next((i for i, e in enumerate(self.checker.entries) if not e.demonstration), None)
        return None if first_live is None else self._phase_start.get(first_live)

    def policy_steps(self) -> int:
        start = self.policy_start_clock
        return 0 if start is None else self.clock - start + 1

    # ------------------------------------------------------------------ scripted swaps
    def swap_pair(self, swap) -> tuple[int, int | None]:
        """(first, partner) of the swap named by an entry's ``swap`` param; None = nearest."""
        raise NotImplementedError

    def animate(self, clock: int) -> None:
        """Run the swap of the current hold entry, if any, over its first SWAP_STEPS steps."""
        k = self.track_phase(clock)
        e = self.current_entry
        if e is not None and "swap" in e.params and 1 <= k <= self.swapper.duration:
            if k == 1:
                self.swapper.begin(*self.swap_pair(e.params["swap"]))
            self.swapper.update(k)

    # ------------------------------------------------------------------ predicates
    def picked(self, cube) -> bool:
        return self.lifted(cube, self.LIFT_Z) and self.is_grasping(cube)

    def resting(self, cube) -> bool:
        """Let go of, sitting on the table, with the gripper away above it."""
        return self.pos(cube)[2] < self.REST_Z and self.tcp()[2] > self.RELEASE_TCP_Z and not self.is_grasping(cube)

    def resting_at(self, cube, xy, radius: float | None = None) -> bool:
        r = self.PLACE_RADIUS if radius is None else radius
        return self.resting(cube) and float(np.linalg.norm(self.pos(cube)[:2] - np.asarray(xy, float)[:2])) < r

    def resting_on(self, cube, target) -> bool:
        return self.resting_at(cube, self.pos(target)[:2])

    def any_lifted(self, cubes) -> bool:
        return any(self.lifted(c, self.LIFT_Z) for c in cubes)

    def at_home(self) -> bool:
        return bool(np.all(np.abs(self.qpos()[:7] - REST_QPOS) < 0.03))

    def home_and_still(self, steps: int) -> Callable[[], bool]:
        def pred() -> bool:
            self._home_still = self._home_still + 1 if self.at_home() else 0
            return self._home_still >= steps
        return pred

    # ------------------------------------------------------------------ demonstration entries
    def demo_pick(self, cube, name: str = "pick up the cube") -> SubgoalEntry:
        return SubgoalEntry(name=name, template=name.replace("cube", "cube at <>", 1), success=lambda: self.picked(cube),
                            option="pick", ground=(cube,), target=cube, demonstration=True)

    def demo_place(self, cube, target, name: str = "place the cube onto the target") -> SubgoalEntry:
        return SubgoalEntry(name=name, template=f"{name} at <>", success=lambda: self.resting_on(cube, target),
                            option="place", ground=(target,), target=target, demonstration=True)

    def demo_put_down(self, cube, xy=None, name: str = "drop the cube on the table") -> SubgoalEntry:
        """Put the held cube down where it is (``xy`` None) or at ``xy`` (the hidden table spot)."""
        if xy is None:
            success = lambda: self.resting(cube)  # noqa: E731
            params = {}
        else:
            success = lambda: self.resting_at(cube, xy)  # noqa: E731
            params = {"xy": (float(xy[0]), float(xy[1]))}
        return SubgoalEntry(name=name, template=name, success=success, option="put_down", demonstration=True, params=params)

    def demo_press(self, name: str = "press the button") -> SubgoalEntry:
        cap = P.button_cap(self.button)
        return SubgoalEntry(name=name, template=f"{name} at <>", success=lambda: self.button_pressed(self.button),
                            option="press", ground=(cap,), target=self.button, demonstration=True)

    def demo_home(self, steps: int = HOME_HOLD_STEPS) -> SubgoalEntry:
        return SubgoalEntry(name="move to the home pose and stay still", template="move to the home pose and stay still",
                            success=self.home_and_still(steps), option="home", demonstration=True, params={"steps": steps})

    def demo_hold(self, steps: int, name: str = "stay still", **params) -> SubgoalEntry:
        return SubgoalEntry(name=name, template=name, success=self.held_for(steps), option="hold",
                            demonstration=True, params={"steps": steps, **params})

    def demo_hidden_reset(self, steps: int = HIDDEN_RESET_STEPS) -> SubgoalEntry:
        return SubgoalEntry(name="NO RECORD", template="NO RECORD", success=self.held_for(steps), option="reset_arm",
                            demonstration=True, record=False, params={"steps": steps})

    # ------------------------------------------------------------------ options
    def candidates(self, option: str):
        if option == "pick":
            return [(f"{c} cube", a) for c, a in zip(self.cube_colours, self.cubes)]
        if option == "place":
            return [("target", t) for t in getattr(self, "targets", [])]
        if option == "press":
            return [("button", self.button)]
        if option == "put_down":
            return [("table", self.table_scene.table)]
        return []

    @property
    def cube_colours(self) -> list[str]:
        return [c.label for c in self.layout.cubes]

    def motion(self, option: str, target, executor: S.Executor, params: dict | None = None):
        params = params or {}
        if option == "pick" and target is not None:
            return self._pick(executor, target)
        if option == "place" and target is not None:
            held = held_object(self)
            return self._place(executor, held, self.pos_of(target)[:2]) if held is not None else iter(())
        if option == "put_down":
            return self._put_down(executor, params)
        if option == "home":
            return self._home(executor, params.get("steps", HOME_HOLD_STEPS))
        if option == "hold":
            return executor.hold(params.get("steps", 1))
        if option == "reset_arm":
            return self._hidden_reset(executor, params.get("steps", HIDDEN_RESET_STEPS))
        return super().motion(option, target, executor, params)

    FINGER_REACH = 0.045  # finger centre from the grasp centre, gripper open
    FINGER_CLEARANCE = 0.05  # wanted distance from a finger centre to a neighbouring cube's centre
    CARRY_HEIGHTS = (0.15, 0.12, 0.10)  # TCP heights to carry / lift at, highest reachable first
    PLACE_SLACK = 0.025  # a release pose this far off still drops the cube on its spot

    def grasp_yaws(self, actor, reference_yaw: float) -> list[float]:
        """The four face-aligned grasp yaws, best first: open fingers clear of the neighbouring
        cubes, then the least wrist turn from ``reference_yaw``."""
        p = self.pos(actor)[:2]
        others = [self.pos(c)[:2] for c in self.cubes if c is not actor]

        def clearance(yaw: float) -> float:
            d = np.array([-np.sin(yaw), np.cos(yaw)]) * self.FINGER_REACH
            return min((float(np.linalg.norm(p + s * d - o)) for s in (1, -1) for o in others), default=np.inf)

        base = S.yaw_of(actor)
        yaws = []
        for k in range(4):
            y = base + k * np.pi / 2
            y = reference_yaw + float(np.angle(np.exp(1j * (y - reference_yaw))))  # nearest turn
            yaws.append(y)
        return sorted(yaws, key=lambda y: (clearance(y) < self.FINGER_CLEARANCE, abs(y - reference_yaw)))

    def _rise(self, ex: S.Executor, xy, yaw: float):
        """Up to the highest carry height reachable above ``xy``."""
        for z in self.CARRY_HEIGHTS:
            pose = S.down_pose([xy[0], xy[1], z], yaw)
            if leg_error(ex, pose) < 0.01 or z == self.CARRY_HEIGHTS[-1]:
                yield from move_leg(ex, pose, max_err=0.03)
                return

    def _pick(self, ex: S.Executor, actor):
        """Top-down grasp and lift. The grasp yaw keeps the open fingers clear of neighbouring
        cubes and is one the arm can reach; at the far edge of the workspace the lift settles
        for a lower height. Every leg is checked by forward kinematics (:func:`plan_leg`)."""
        p = self.pos(actor)
        tcp = self.tcp()
        if tcp[2] < 0.12 and np.linalg.norm(tcp[:2] - p[:2]) > 0.03:
            # coming from low down (a button press, a put-down): rise first, so that the open
            # fingers do not sweep through the cubes on the way
            yield from self._rise(ex, tcp[:2], ex.tcp_yaw())
        legs = lambda y: (S.down_pose([p[0], p[1], p[2] + 0.08], y), S.down_pose([p[0], p[1], p[2]], y))  # noqa: E731
        # yaws in order of preference, those the probe finds reachable first; the first whose
        # actual plan ends close enough wins (a few millimetres off still grasps a 4 cm cube
        # between fingers 8 cm apart)
        yaws = self.grasp_yaws(actor, ex.tcp_yaw())
        probe = {y: leg_error(ex, *legs(y)) for y in yaws}
        ranked = [y for y in yaws if probe[y] < 0.004] + sorted((y for y in yaws if probe[y] >= 0.004), key=probe.get)
        plan = None
        for y in ranked:
            paths, errs = plan_chain(ex, *legs(y))
            if paths is not None and errs[0] <= 0.02 and errs[1] <= 0.012:
                plan, yaw = paths, y
                break
        if plan is None:
            raise S.PlanningFailed(f"cannot grasp the cube at {np.round(p, 3).tolist()}: out of reach")
        if ex.gripper != S.OPEN:
            yield from ex.set_gripper(S.OPEN, 6)
        for path in plan:
            yield from stream(ex, path)
        yield from ex.set_gripper(S.CLOSED, 10)
        yield from self._rise(ex, p[:2], yaw)

    def _place(self, ex: S.Executor, held, xy):
        """Carry the held cube over ``xy``, lower it onto the table, open and rise.

        A cube does not mind which way it is turned, so when the carry or release pose is out
        of reach with the current wrist angle, the wrist turns by 90 or 180 degrees on the way
        (the cube's offset from the TCP turns with it), and the carry height drops if need be.
        """
        obj, tcp, yaw0 = self.pos(held), self.tcp(), ex.tcp_yaw()
        offset = tcp[:2] - obj[:2]
        release = 0.025 + (tcp[2] - obj[2]) + 0.005
        xy = np.asarray(xy, float)[:2]

        def legs(carry, turn, drop):
            c, s_ = np.cos(turn), np.sin(turn)
            at = xy + np.array([c * offset[0] - s_ * offset[1], s_ * offset[0] + c * offset[1]])
            return (S.down_pose([at[0], at[1], max(carry, release + drop)], yaw0 + turn),
                    S.down_pose([at[0], at[1], release + drop], yaw0 + turn))

        # the first option that lands exactly (at the far edge of the workspace: letting go a
        # centimetre or two higher); else the closest, if it still lands on the spot
        options = [(carry, turn, drop) for drop in (0.0, 0.01, 0.02) for carry in self.CARRY_HEIGHTS
                   for turn in (0.0, np.pi / 2, -np.pi / 2, np.pi)]
        # probe cheaply, then plan for real in order: the options that land exactly (in the
        # order above), then the others, closest first; the first real plan on the spot wins
        probe = []
        for o in options:
            probe.append((leg_error(ex, *legs(*o)), o))
            if probe[-1][0] < 0.004:
                break
        exact = [o for e, o in probe if e < 0.004]
        ranked = exact + [o for e, o in sorted(probe, key=lambda r: r[0]) if e >= 0.004 and e <= self.PLACE_SLACK]
        plan = None
        for o in ranked[:8]:
            paths, errs = plan_chain(ex, *legs(*o))
            if paths is not None and max(errs) <= self.PLACE_SLACK:
                plan, down = paths, legs(*o)[1]
                break
        if plan is None:
            raise S.PlanningFailed(f"cannot set the cube down at {np.round(xy, 3).tolist()}: out of reach")
        for path in plan:
            yield from stream(ex, path)
        yield from ex.set_gripper(S.OPEN, 6)
        yield from self._rise(ex, down.p[:2], ex.tcp_yaw())

    def _put_down(self, ex: S.Executor, params: dict):
        """Carry the held cube to ``params["xy"]`` and set it down; without ``xy``, straight down."""
        held = held_object(self)
        if held is None:
            return
        if params.get("xy") is not None:
            yield from self._place(ex, held, params["xy"])
            return
        obj, tcp, yaw = self.pos(held), self.tcp(), ex.tcp_yaw()
        release_z = tcp[2] - obj[2] + 0.025 + 0.005
        yield from move_leg(ex, S.down_pose([tcp[0], tcp[1], release_z], yaw), max_err=self.PLACE_SLACK)
        yield from ex.set_gripper(S.OPEN, 6)
        yield from self._rise(ex, tcp[:2], yaw)

    def _home(self, ex: S.Executor, hold: int):
        """Joint-space glide to the rest configuration (smoothstep timing), then stay still."""
        q0 = ex.q_cmd.copy()
        n = int(np.clip(np.ceil(np.max(np.abs(REST_QPOS - q0)) / 0.04), 10, 80))
        for k in range(1, n + 1):
            ex.q_cmd = q0 + (REST_QPOS - q0) * smoothstep(k / n)
            yield ex.action()
        yield from ex.hold(hold + 10)

    def _hidden_reset(self, ex: S.Executor, steps: int):
        """Teleport the arm to its reset configuration (gripper open) and hold; never recorded."""
        q = self.agent.robot.get_qpos()[0].cpu().numpy().copy()
        q[:7] = REST_QPOS
        if q.shape[0] > 7:
            q[7:] = 0.04
        import torch

        self.agent.reset(torch.as_tensor(q, dtype=torch.float32))
        ex.sync(gripper=S.OPEN)
        yield from ex.hold(steps)
