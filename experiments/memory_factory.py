"""From a condition's switches to a memory layer: which tools run and which reads may fire.

Each ablation removes exactly one part: a tool group, a read kind, or a behaviour of access.
The table is here, in one place, so a reader can check what ``memory-no-count`` really does.
"""

from __future__ import annotations

from memory.layer import MemoryConfig, MemoryLayer
from memory.perception import PerceptionConfig, build_perception
from memory.spec import ReadKind
from memory.tools.registry import default_tools

# ablation flag -> (tool groups removed, read kinds removed)
ABLATION_EFFECTS: dict[str, tuple[frozenset[str], frozenset[ReadKind]]] = {
    "no_count": (frozenset({"progress"}), frozenset({ReadKind.COUNT_GATE})),
    "no_timed_count": (frozenset({"timed_progress"}), frozenset({ReadKind.EVENT_ORDINAL})),
    "no_route": (frozenset({"route"}), frozenset({ReadKind.ROUTE_FILL})),
    "no_manner": (frozenset({"manner"}), frozenset()),
    "no_peg_end_side": (frozenset({"peg_end_side"}), frozenset()),
    "no_demo_ref": (frozenset({"demonstration"}), frozenset({ReadKind.DEMO_REFERENCE})),
    "no_live_binding": (frozenset({"live_binding"}), frozenset()),
    "no_demo_binding": (frozenset({"demo_binding"}), frozenset()),
    "no_demo_relation_update": (frozenset({"demo_relation_update"}), frozenset()),
    "no_identity": (frozenset({"identity"}), frozenset()),
    "no_mark_reader": (frozenset({"mark"}), frozenset({ReadKind.HIGHLIGHT_RELATION})),
}


def memory_config(cond) -> MemoryConfig:
    flags = cond.flags
    # the oracle-ladder flags are not the memory's business: experiments/oracle_ladder.py wraps this
    # very layer from outside and overrides its answers with the env's truth
    removed_groups: set[str] = set()
    removed_reads: set[ReadKind] = set()
    for name, (groups, reads) in ABLATION_EFFECTS.items():
        if getattr(flags, name, False):
            removed_groups |= groups
            removed_reads |= reads
    tools = default_tools()
    groups = frozenset(t.group for t in tools) - removed_groups
    return MemoryConfig(tool_groups=groups, disabled_reads=frozenset(removed_reads),
                        agent_decided_access=flags.agent_access)


def build_memory(cond, perception: PerceptionConfig | None = None) -> MemoryLayer:
    """A fresh memory layer for one episode of condition ``cond``, its tools on the perception
    back-ends ``perception`` names (``None``: the colour default; loaded models are cached)."""
    cfg = memory_config(cond)
    return MemoryLayer(cfg, default_tools(perception=None if perception is None else build_perception(perception)))
