"""Episode-scoped, typed robot memory between a subgoal proposer and a policy.

The memory sees only what a robot would: the goal text, camera frames with their step,
executed actions and joint states, and the proposed subgoal text. It never imports the
simulator package. Entry point: :class:`memory.layer.MemoryLayer`.
"""

from memory.access import ReadTrace, StructuredAccess
from memory.frames import Frame
from memory.layer import MemoryConfig, MemoryLayer, Revision
from memory.records import (
    EntityRecord,
    EntityStatus,
    LayoutRecord,
    ProgressRecord,
    RelationRecord,
    Source,
    TrajectoryRecord,
)
from memory.spec import InstructionSpecifier, LLMSpecifier, MemorySpec, ReadKind, specify
from memory.store import Edit, EditOp, MemoryStore, StoreKind
from memory.tools.base import Tool

__all__ = [
    "Edit",
    "EditOp",
    "EntityRecord",
    "EntityStatus",
    "Frame",
    "InstructionSpecifier",
    "LLMSpecifier",
    "LayoutRecord",
    "MemoryConfig",
    "MemoryLayer",
    "MemorySpec",
    "MemoryStore",
    "ProgressRecord",
    "ReadKind",
    "ReadTrace",
    "RelationRecord",
    "Revision",
    "Source",
    "StoreKind",
    "StructuredAccess",
    "Tool",
    "TrajectoryRecord",
    "specify",
]
