"""The only observation type the memory ever receives: :class:`subgoals.frames.Frame`.

The class is defined in the bottom layer (``subgoals.frames``) because the envs produce it
and the memory consumes it, and neither may import the other; this module is the memory's
door to it, so memory code keeps importing ``memory.contract.frames`` and the boundary
(``memory/control/boundary.py``) checks ``type(frame) is Frame`` against this very class.
"""

from __future__ import annotations

from subgoals.frames import SOURCES, Frame, FrameSource

__all__ = ["Frame", "FrameSource", "SOURCES"]
