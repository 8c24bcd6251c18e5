"""Task-state helpers the Imitation task classes compose (MoveCube, InsertPeg, PatternLock, RouteStick).

* :class:`Phases`: hidden phases, entries of the video that are executed but not recorded
  (resets, teleports, static holds), complete when their scripted motion has run to its end;
* :class:`Counted`: a motion that waits until every action it handed out has run;
* :class:`SegGroundMixin`: history-slot alternatives grounded the way the oracle grounds subgoals.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from envs.core.motion.trace import Actions
from envs.core.solvers import Executor


class Phases:
    """Completion flags of scripted phases (hidden resets, static holds) by name."""

    def __init__(self):
        self.done: set[str] = set()

    def mark(self, name: str) -> None:
        self.done.add(name)

    def is_done(self, name: str) -> Callable[[], bool]:
        return lambda: name in self.done

    def run(self, name: str, motion: Actions) -> Actions:
        """Run ``motion`` to its end, then mark ``name`` done."""
        yield from motion
        self.mark(name)


class Counted:
    """Counts the actions a motion has handed out, so it can wait until they have all run.

    A scripted motion measures the scene when its next action is *drawn*. The demonstration draws
    one action per step, but the scripted policy draws a whole chunk before executing it, so a
    measurement taken in the middle of a motion can be up to a chunk old. ``barrier`` holds the
    arm until the task's step clock has caught up with every action handed out; after it, the
    scene is measured as it really is.
    """

    def __init__(self, task, ex: Executor):
        self.task, self.ex = task, ex
        self.start = task.clock
        self.n = 0

    def run(self, motion: Actions) -> Actions:
        for a in motion:
            self.n += 1
            yield a

    def barrier(self, min_hold: int = 0) -> Actions:
        for _ in range(min_hold):
            self.n += 1
            yield self.ex.action()
        while self.task.clock - self.start < self.n:
            self.n += 1
            yield self.ex.action()


class SegGroundMixin:
    """Ground history-slot alternatives the way the oracle grounds subgoals.

    The oracle writes ``<y, x>`` as segmentation centroids latched at subgoal onset; grounding the
    alternatives by projected centres would differ from it by a pixel or so. Here the correct
    alternative *is* the oracle's latched text, and the others use centroids from one
    segmentation render per subgoal.
    """

    def ground_seg(self, template: str, *objs) -> str:
        e = self.current_entry
        if e is not None and template == e.template and len(objs) == len(e.ground) and all(a is b for a, b in zip(objs, e.ground)):
            return self.grounded_subgoal()
        # one render per subgoal of *this* episode: the key holds the episode's checker itself (a
        # new one every reset, equal only to itself), since the env outlives the episode and an
        # index alone would hand the next episode this one's segmentation (its first proposal then
        # depended on whatever the worker had played before)
        key = (self.checker, self.checker.index if self.checker is not None else -1)
        cache = getattr(self, "_seg_cache", None)
        if cache is None or cache[0] != key:
            cache = (key, self.render_front(segmentation=True)["segmentation"])
            self._seg_cache = cache
        seg = cache[1]
        for o in objs:
            ys, xs = np.nonzero(seg == self.seg_id(o))
            point = f"<{int(ys.mean())}, {int(xs.mean())}>" if len(ys) else self.point_of(o)
            template = template.replace("<>", point, 1)
        return template
