"""The recent-frame baseline: a memory that may only look at the last N frames.

Before every decision the memory is rebuilt from scratch out of the last ``window`` frames only
(conditioning video included while it is still in the window), so anything older is forgotten.
With the same memory as :class:`wrappers.memory_wrapper.MemoryWrapper` it isolates what the
long horizon buys: the paper's Recent4 / Recent16 / Recent32 arms.
"""

from __future__ import annotations

from collections import deque

from memory.contract.frames import Frame
from wrappers.memory_wrapper import MemoryWrapper, memory_call


class RecentFrames(MemoryWrapper):
    """``memory`` rebuilt from the last ``window`` frames before each decision."""

    def __init__(self, env, memory, window: int):
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"recent-frame window must be an int >= 1, got {window!r}")
        if memory is None:
            raise ValueError("the recent-frame baseline needs a memory to rebuild")
        super().__init__(env, memory)
        self.window = window
        self._recent: deque[Frame] = deque(maxlen=window)

    def _start(self, demo: list[Frame], first: Frame) -> None:
        self._recent = deque(demo, maxlen=self.window)
        with memory_call(self.memory, "reset", first.step):
            self.memory.reset(self._goal, [])
        self._recent.append(first)

    def _feed(self, frame: Frame) -> None:
        self._recent.append(frame)

    def _before_revise(self) -> None:
        step = self._recent[-1].step if self._recent else None
        with memory_call(self.memory, "reset", step):
            self.memory.reset(self._goal, [])
        for f in self._recent:
            with memory_call(self.memory, "observe", f.step):
                self.memory.observe(f)
