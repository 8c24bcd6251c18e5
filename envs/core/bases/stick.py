"""The mixin of the stick tasks (PatternLock, RouteStick): :class:`StickTaskMixin`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from envs.core.animation.stick_feedback import NodeFlash, TipTrail, touched_node
from envs.core.bases.imitation import Phases
from envs.core.motion.trace import Actions, commanded_tip, go_joints, stick_over
from envs.core.solvers import Executor


class StickTaskMixin:
    """What PatternLock and RouteStick share: the touch log, the hidden approach to the start
    node and the hidden return to it after the video, and subgoals that repeat their text.

    The task provides ``nodes_xy`` (touchable node centres), ``start_xy`` and, optionally,
    ``flash`` (a :class:`NodeFlash`) and ``trail`` (a :class:`TipTrail`).
    """

    flash: NodeFlash | None = None
    trail: TipTrail | None = None

    def reset_stick_state(self) -> None:
        if self.flash is not None:
            self.flash.reset()
        if self.trail is not None:
            self.trail.reset()
        self.phases = Phases()
        self.touch_log: list[int] = []  # touch events (rising edges), restarted at the live start
        self._touching: int | None = None
        self._live = False
        self.start_q: np.ndarray | None = None

    @property
    def live(self) -> bool:
        return self._live

    def touching(self) -> int | None:
        return touched_node(self.tcp(), self.nodes_xy)

    def stick_animate(self, clock: int) -> None:
        tip = self.tcp()
        now = touched_node(tip, self.nodes_xy)
        entry = self.current_entry
        if not self._live and entry is not None and not entry.demonstration:
            self._live = True  # the first policy step: the log restarts with the node under the stick
            self.touch_log = [] if now is None else [now]
            self.on_live_start()
        elif now is not None and now != self._touching:
            self.touch_log.append(now)
        if self.flash is not None:
            if now is not None and now != self._touching:
                self.flash.flash(now, clock)
            self.flash.tick(clock)
        if self.trail is not None:
            self.trail.tick(clock, tip)
        self._touching = now

    def on_live_start(self) -> None:
        """Hook for tasks that keep more per-move state."""

    def approach_start(self, ex: Executor) -> Actions:
        """Hidden: go over the start node at trace height and remember the joint pose there."""
        yield from stick_over(ex, self.start_xy)
        self.start_q = ex.q_cmd.copy()
        if self.flash is not None:
            self.flash.reset()
        self.phases.mark("approach")

    def return_to_start(self, ex: Executor, hold_total: int = 0) -> Actions:
        """Hidden: home, hold (``hold_total`` steps in all), then back to the remembered pose."""
        from envs.core.base_task import REST_QPOS

        if self.trail is not None:
            self.trail.reset()
        n = 0
        for a in go_joints(ex, REST_QPOS, settle=10):
            n += 1
            yield a
        if hold_total > n:
            yield from ex.hold(hold_total - n)
        if self.flash is not None:
            self.flash.reset()
        yield from stick_over(ex, self.start_xy)
        if self.start_q is not None:
            yield from go_joints(ex, self.start_q, steps=6, settle=4)
        self.phases.mark("return")

    def each_subgoal(self, ex: Executor, one: Callable[[Executor], Actions], wait: int = 40) -> Actions:
        """Run ``one`` move; repeat it at every subgoal boundary reached while it is current.

        Consecutive subgoals can share their text ("move forward" twice) and the scripted policy
        keeps a motion while its text is unchanged, so after one move the motion waits for the
        boundary and, if it is still running then (same text), makes the next move.
        """
        while True:
            index = self.checker.index
            yield from one(ex)
            for _ in range(wait):
                if self.checker.index != index:
                    break
                yield ex.action()
            if self.checker.index == index or self.checker.done:
                return

    def node_near_stick(self, ex: Executor, nodes_xy: np.ndarray) -> tuple[int, np.ndarray]:
        tip = commanded_tip(ex)
        return int(np.argmin(np.linalg.norm(np.asarray(nodes_xy) - tip[:2], axis=1))), tip
