"""Counts the passes of a moving object over a target, times them, and gates a timed press.

The goal asks to stop a sliding object "just as it reaches the target for the k-th time". Every
arrival looks the same, so which one is the k-th depends on counting the earlier ones; and the
press has to start early enough to land on it, so the memory also needs to know *when* the next
one comes.

Evidence (pixels only):

* the target: a saturated purple disc read from the first live frames (the scene layout), kept as
  a layout record;
* the moving object: whatever differs from a background model in which every pixel takes the
  current value once it has stayed still for two rendered frames (a moving object never settles,
  so the background keeps what was there before it came; the arm that comes to rest over the
  button, or the place an object has just left, settle within two frames). Among the differing
  components of a plausible size, the one nearest to the previous sighting is the object (the one
  nearest to the target when there is none);
* a *pass* (and its arrival time): two consecutive sightings (at most ``max_gap`` steps apart)
  whose segment passes within ``cross_px`` of the target, the target's projection falling on the
  segment; the arrival time is interpolated along it. The pass is verified once the object is seen
  at least ``past_px`` beyond the target (a sighting right on the target, or an object stopped
  there, has reached it but not passed it yet). Passes closer than ``min_separation`` steps are one.

Timing state (``progress/passes``: the verified count of passes over the target, the goal's k as target): the arrival
steps, the period (the median gap between arrivals; before the second arrival, twice the time from
the first arrival to the turn-around, which lies halfway between a sighting on the way back and the
moment the object was as far out on its way out), and the predicted next arrival.

The gate (read kind ``event_ordinal``) acts on "press the button ..." and "remain static". A press
started at step t lands about ``press_latency`` steps later (a constant of the executor, like a
reaction time: the scripted descent takes 6-8 steps; 10 leaves a margin). The first arrival a press
started now can meet is the next one predicted to come at least ``press_latency`` steps from now.
The gate lets the press through (or rewrites "remain static" into the press, at the button's layout
point) when the arrival before the k-th has been verified, the first meetable one is the k-th, and
it is due within ``release_within`` steps (or its due time is not known yet and the executor waits
for the arrival itself: ``release_unknown``), or when the previous
decision waited and the clock has not moved since (an executor whose waiting has run out: the
benchmark's own "remain static" holds only until a fixed step); a press at any other time
becomes "remain static". Once
released, the same press text is kept so that the executor does not restart it. (The executor then
waits over the button for the arrival it can meet, so a release anywhere between the (k-1)-th
arrival and the k-th minus the latency lands on the k-th.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.events import PassConfig, PassDetector, events_for
from memory.contract.frames import Frame
from memory.language.needs import Need
from memory.store.records import ProgressRecord
from memory.language.spec import MemorySpec, ReadKind
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.tools.scene_layout import layout_points
from subgoals import phrases
from subgoals.edits import Replace, SubgoalEdit
from subgoals.actions import Action, action_of
from subgoals.grammar import try_parse
from subgoals.record_names import RecordName
from memory.tools.groups import ToolGroup

KEY = "progress/passes"
WAIT = phrases.REMAIN_STATIC


@dataclass(frozen=True)
class PassTimerThresholds:
    """The timing numbers :class:`PassTimer` gates a press with (steps); the pixel numbers are the pass detector's (:class:`~memory.events.PassConfig`)."""

    press_latency: int = 10
    """Steps from a proposed press to the button going down: a press is timed for the first arrival at least this far ahead."""
    release_within: int = 40
    """A press whose arrival is at most this many steps away is released; a later one waits."""
    release_unknown: bool = True
    """Release a press whose arrival time is not known yet (no period measured): right for an executor
    that waits over the button for the next arrival it can meet (our scripted one); an executor that
    presses at once needs False (experiments.loop.memory_factory.executor_tool_settings)."""


@register_tool(order=60)
class PassTimer(Tool):
    name = "pass_timer"
    serves = frozenset({Need.EVENT_ORDINAL})
    group = ToolGroup.TIMED_PROGRESS
    gate_kind = ReadKind.EVENT_ORDINAL
    render = RenderNeed(stride=4, video=False)

    def __init__(self, press_latency: int = 10, release_within: int = 40, release_unknown: bool = True, still_threshold: int = 12,
                 diff_threshold: int = 30, min_area: int = 30, max_area: int = 900, max_jump: float = 40.0,
                 cross_px: float = 10.0, past_px: float = 3.0, max_gap: int = 12, min_separation: int = 20):
        self.config = PassTimerThresholds(press_latency=press_latency, release_within=release_within,
                                          release_unknown=release_unknown)
        self.pass_config = PassConfig(still_threshold=still_threshold, diff_threshold=diff_threshold, min_area=min_area,
                                      max_area=max_area, max_jump=max_jump, cross_px=cross_px, past_px=past_px,
                                      max_gap=max_gap, min_separation=min_separation)
        self.k: int | None = None

    def thresholds(self) -> tuple:
        return (self.config, self.pass_config)

    # ------------------------------------------------------------------ episode
    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self.active = self.enabled_by(spec)
        self.k = spec.ordinal if self.active else None
        self._passes: PassDetector | None = events_for(store).attach(self.pass_config) if self.active else None
        self._out: list[tuple[int, float]] = []  # (step, distance) sightings moving away since the last arrival
        self.turns: list[float] = []
        self._last_step = 0
        self._released: str | None = None
        self._queries: list[int] = []
        self._gate_calls = 0
        self._rewrites = 0
        self._decisions: list[dict] = []
        if self.active:
            store.add(KEY, ProgressRecord(name=RecordName.PASSES, count=0, ordinal=self.k, target=self.k),
                      step=store.last_step or 0, reason=f"goal asks for the arrival number {self.k}")

    # ------------------------------------------------------------------ evidence
    @property
    def target(self) -> tuple[float, float] | None:
        """The target disc's centre (the pass detector's reading)."""
        return None if self._passes is None else self._passes.target

    @property
    def arrivals(self) -> list[float]:
        """The verified arrival steps (interpolated), in order."""
        return [] if self._passes is None else self._passes.arrivals

    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if not self.active or frame.source != "live" or frame.rgb is None:
            return
        step = frame.step
        self._last_step = step
        for e in events_for(store).events(frame, self.pass_config):
            self._out = [(e.time, 0.0)]
            self.commit(store, KEY, ProgressRecord(name=RecordName.PASSES, count=len(self.arrivals), ordinal=self.k, target=self.k),
                        step=e.step, reason=f"object seen crossing the target and beyond it; arrival at step {e.time:.1f}",
                        accepted=True)
        obj = self._passes.sighting
        if obj is None:
            return
        y, x, area = obj
        d = float(np.hypot(y - self.target[0], x - self.target[1]))
        if not self.arrivals or len(self.turns) >= len(self.arrivals):
            return
        if not self._out or d > self._out[-1][1]:
            self._out.append((step, d))  # on the way out since the last arrival
        elif d < self._out[-1][1] - 2 * self.pass_config.cross_px:
            # on the way back: the motion is symmetric about the turn-around, so the turn is halfway
            # between now and the moment the object was as far out as it is now
            ts, ds = zip(*self._out)
            t_out = float(np.interp(d, ds, ts))
            self.turns.append(0.5 * (t_out + step))

    # ------------------------------------------------------------------ timing
    def period(self) -> float | None:
        if len(self.arrivals) >= 2:
            return float(np.median(np.diff(self.arrivals)))
        if self.arrivals and self.turns:
            return 2.0 * (self.turns[0] - self.arrivals[0])
        return None

    def next_arrivals(self, n: int) -> list[float] | None:
        """The next ``n`` arrival steps predicted from the verified ones and the period."""
        p = self.period()
        if not self.arrivals or p is None:
            return None
        return [self.arrivals[-1] + p * (i + 1) for i in range(n)]

    def first_meetable(self, now: int) -> tuple[int, float | None] | None:
        """(which arrival, when) a press started at ``now`` would land on first; ``None`` if unknown."""
        c = len(self.arrivals)
        nxt = self.next_arrivals(3)
        if nxt is None:
            if c == 0:
                return None
            # no period yet: the object is still on its way out (no turn-around seen), so the next
            # arrival is at least as far away as the last one is behind
            since = now - self.arrivals[-1]
            if 2 * since >= self.config.press_latency:
                return c + 1, None
            return None
        for j, t in enumerate(nxt, start=c + 1):
            if t + 1 - now >= self.config.press_latency:
                return j, t
        return None

    # ------------------------------------------------------------------ gate
    def _press_text(self, store: MemoryStore) -> str | None:
        buttons = layout_points(store, "button")
        if buttons:
            return phrases.press_to_stop_on(buttons[0])
        return None

    def gate(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        if not self.active:
            return None
        self._gate_calls += 1
        out = self._decide(proposed, store)  # the subgoal to run instead (a subgoal-language sentence)
        if out is None:
            return None
        if out != proposed:
            self._rewrites += 1
        return Replace(out)

    def _decide(self, proposed: str, store: MemoryStore) -> str | None:
        sg = try_parse(proposed)
        action = None if sg is None else action_of(sg)
        is_press, is_wait = action is Action.PRESS, action is Action.WAIT
        if not (is_press or is_wait):
            return None
        now = self._last_step
        if self._released is not None:  # keep the press going: a new text would restart it
            return None if proposed == self._released else self._released
        meet = self.first_meetable(now)
        release = False
        # the last decision waited and time did not move since (an executor whose wait has run out):
        # waiting again changes nothing, so the press the count calls for goes now
        stalled = bool(self._decisions) and self._decisions[-1]["step"] == now and not self._decisions[-1]["release"]
        if meet is not None and meet[0] == self.k and len(self.arrivals) >= (self.k or 0) - 1:
            due = self.config.release_unknown if meet[1] is None else meet[1] - now <= self.config.release_within
            release = stalled or due
        self._decisions.append({"step": now, "count": len(self.arrivals), "meet": None if meet is None else
                                [meet[0], None if meet[1] is None else round(meet[1], 1)], "release": release})
        if release:
            press = proposed if is_press else self._press_text(store)
            if press is None:
                return None
            self._released = press
            return None if is_press else press
        return WAIT if is_press else None

    def diagnostics(self) -> dict:
        p = self.period()
        return {"active": self.active, "k": self.k, "arrivals": [round(a, 1) for a in self.arrivals],
                "turns": self.turns, "period": None if p is None else round(p, 1),
                "target": None if self.target is None else [round(v) for v in self.target],
                "released": self._released, "gate_calls": self._gate_calls, "rewrites": self._rewrites,
                "decisions": self._decisions[-12:]}
