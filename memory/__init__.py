"""Episode-scoped, typed robot memory between a subgoal proposer and a policy.

The memory sees only what a robot would: the goal text, camera frames with their step,
executed actions and joint states, and the proposed subgoal text. It never imports the
simulator package. Entry point: :class:`memory.layer.MemoryLayer`.
"""

from memory.control.access import ReadTrace, StructuredAccess
from memory.contract.frames import Frame
from memory.layer import MemoryConfig, MemoryLayer, Revision
from memory.store.records import (
    EntityRecord,
    EntityStatus,
    LayoutRecord,
    ProgressRecord,
    RelationRecord,
    Source,
    TrajectoryRecord,
)
from memory.language.spec import InstructionSpecifier, LLMSpecifier, MemorySpec, ReadKind, specify
from memory.store.memory_store import Edit, EditOp, MemoryStore, StoreKind
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
