"""A bring-your-own memory that does harm: it rewrites every proposal into holding still. The audit
must score each of those rewrites, at history slots and elsewhere (``tests/test_faults.py``)."""

from __future__ import annotations

from memory.layer import Revision


class HoldStill:
    def reset(self, goal, demo_frames):
        self.calls = 0

    def observe(self, frame):
        pass

    def revise(self, proposed, frame):
        self.calls += 1
        return Revision(text="", rewritten=bool(proposed), trace=None)

    def snapshot(self, step):
        return {"step": step, "records": {}}

    def diagnostics(self):
        return {"revise_calls": self.calls}
