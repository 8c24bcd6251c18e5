"""The stable scene layout (MEMORA's environment store): buttons and target discs.

Buttons and targets do not move in most scenes, but the arm hides them for long stretches, so a
decision such as "press the button now" needs to know where the button is even when the view
does not show it well. This tool reads them from the first live frames, when the arm is at rest
far above the table, and keeps them as layout records.

Evidence gates: a button is a compact neutral-gray blob (R = G = B, mid value) away from the image
top (where the arm rests) and seen at the same place in two frames; a target disc is a ring of a
saturated purple. Each is verified by a second sighting within 3 px.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.contract.frames import Frame
from memory.language.needs import Need
from memory.store.records import LayoutRecord
from memory.language.spec import MemorySpec
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.layout_pixels import gray_blobs, purple_blobs
from memory.tools.groups import ToolGroup


@dataclass(frozen=True)
class LayoutThresholds:
    """The numbers :class:`SceneLayoutTool` reads the layout with."""

    frames_to_read: int = 3
    """Live frames the layout is read from: the first ones, while the arm rests above the table (a blob seen again at the same place on a later one is verified)."""


@register_tool(order=20)
class SceneLayoutTool(Tool):
    name = "scene_layout"
    # buttons and targets from the first live frames, while the arm rests above the table
    render = RenderNeed(stride=4, until=8, video=False)
    serves = frozenset({Need.SCENE})
    group = ToolGroup.LAYOUT

    def __init__(self, frames_to_read: int = 3):
        self.config = LayoutThresholds(frames_to_read=frames_to_read)

    def thresholds(self) -> tuple:
        return (self.config,)

    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self._seen: list[dict[str, list[tuple[float, float, int]]]] = []
        self._live = 0

    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if frame.rgb is None or frame.source != "live" or self._live >= self.config.frames_to_read:
            return
        self._live += 1
        found = {"button": gray_blobs(frame.rgb), "target": purple_blobs(frame.rgb)}
        for role, blobs in found.items():
            for j, (y, x, _) in enumerate(sorted(blobs, key=lambda b: (b[1], b[0]))):
                verified = any(np.hypot(y - py, x - px) <= 3 for prev in self._seen for py, px, _ in prev.get(role, []))
                key = f"layout/{role}/{j}"
                if store.get(key) is None:
                    self.commit(store, key, LayoutRecord(role=role, label=role, position=(int(round(y)), int(round(x)))),
                                step=frame.step, reason=f"{role} seen twice at the same place", accepted=verified)
        self._seen.append(found)

    def diagnostics(self) -> dict:
        return {"frames_read": self._live}


def layout_points(store: MemoryStore, role: str) -> list[tuple[int, int]]:
    return [r.position for _, r in sorted(store.layout().items()) if r.role == role and r.position is not None]
