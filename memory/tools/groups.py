"""Tool groups: the units an ablation switches off, declared once.

A tool belongs to one group (``Tool.group``); a condition removes groups (``memory-no-count``
removes ``progress``). A group named by a bare string that no tool has used to remove nothing,
silently; now every name is a constant here and :func:`check_tool_groups` refuses an unknown one,
listing the known groups.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["TOOL_GROUPS", "ToolGroup", "check_tool_groups"]


class ToolGroup:
    """The tool groups (plain ``str`` constants, so configs and rows keep their text)."""

    GENERIC: Final = "generic"
    IDENTITY: Final = "identity"
    LAYOUT: Final = "layout"
    PROGRESS: Final = "progress"
    TIMED_PROGRESS: Final = "timed_progress"
    ROUTE: Final = "route"
    MANNER: Final = "manner"
    PEG_END_SIDE: Final = "peg_end_side"
    DEMONSTRATION: Final = "demonstration"
    LIVE_BINDING: Final = "live_binding"
    DEMO_BINDING: Final = "demo_binding"
    DEMO_RELATION_UPDATE: Final = "demo_relation_update"
    MARK: Final = "mark"


TOOL_GROUPS: frozenset[str] = frozenset(v for k, v in vars(ToolGroup).items() if k.isupper())


def check_tool_groups(groups: Iterable[str], where: str = "tool groups") -> frozenset[str]:
    """``groups`` as a frozenset, or a ``ValueError`` naming the unknown ones and listing the known."""
    groups = frozenset(groups)
    unknown = sorted(groups - TOOL_GROUPS)
    if unknown:
        raise ValueError(f"{where}: unknown tool group(s) {', '.join(map(repr, unknown))} "
                         f"(known: {', '.join(sorted(TOOL_GROUPS))})")
    return groups
