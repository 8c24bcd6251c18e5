"""From a condition's switches to a memory layer: which tools run and which reads may fire.

Each ablation removes exactly one part: a tool group, a read kind, or a behaviour of access.
The table is here, in one place, so a reader can check what ``memory-no-count`` really does.
"""

from __future__ import annotations

from experiments.loop.conditions import specifier_refusal
from memory.layer import MemoryConfig, MemoryLayer
from memory.perception import PerceptionConfig, build_perception
from memory.language.spec import ReadKind
from memory.tools.groups import ToolGroup, check_tool_groups
from memory.tools.registry import default_tools

# ablation flag -> (tool groups removed, read kinds removed)
ABLATION_EFFECTS: dict[str, tuple[frozenset[str], frozenset[ReadKind]]] = {
    "no_count": (frozenset({ToolGroup.PROGRESS}), frozenset({ReadKind.COUNT_GATE})),
    "no_timed_count": (frozenset({ToolGroup.TIMED_PROGRESS}), frozenset({ReadKind.EVENT_ORDINAL})),
    "no_route": (frozenset({ToolGroup.ROUTE}), frozenset({ReadKind.ROUTE_FILL})),
    "no_manner": (frozenset({ToolGroup.MANNER}), frozenset()),
    "no_peg_end_side": (frozenset({ToolGroup.PEG_END_SIDE}), frozenset()),
    "no_demo_ref": (frozenset({ToolGroup.DEMONSTRATION}), frozenset({ReadKind.DEMO_REFERENCE})),
    "no_live_binding": (frozenset({ToolGroup.LIVE_BINDING}), frozenset()),
    "no_demo_binding": (frozenset({ToolGroup.DEMO_BINDING}), frozenset()),
    "no_demo_relation_update": (frozenset({ToolGroup.DEMO_RELATION_UPDATE}), frozenset()),
    "no_identity": (frozenset({ToolGroup.IDENTITY}), frozenset()),
    "no_mark_reader": (frozenset({ToolGroup.MARK}), frozenset({ReadKind.HIGHLIGHT_RELATION})),
}

for _flag, (_groups, _reads) in ABLATION_EFFECTS.items():  # a misspelt group would remove nothing
    check_tool_groups(_groups, where=f"ABLATION_EFFECTS[{_flag!r}]")


class ConditionRefused(ValueError):
    """A condition that cannot mean anything under this run's settings (the message says why)."""


def specifier_for(cond, specifier: str = "instruction", endpoint: str | None = None, model: str = "default"):
    """``(specifier, votes)`` for a condition: ``(None, 0)`` is the deterministic instruction parser.

    A condition that cannot mean anything under this specifier is refused
    (:func:`experiments.loop.conditions.specifier_refusal`, the same rule the CLI applies).
    """
    why = specifier_refusal(cond, specifier, endpoint)
    if why:
        raise ConditionRefused(why)
    if specifier == "instruction":
        return None, 0
    from memory.language.spec import LLMSpecifier
    from policies.vlm import OpenAIChatBackend

    backend = OpenAIChatBackend(endpoint, model, max_tokens=256)

    def ask(prompt: str) -> str:
        return backend.complete([{"role": "user", "content": [{"type": "text", "text": prompt}]}])

    if cond.flags.single_vote:
        return LLMSpecifier(ask, widths=(None,), min_agree=1), 1
    return LLMSpecifier(ask), 3


def memory_config(cond, specifier: str = "instruction", endpoint: str | None = None, model: str = "default") -> MemoryConfig:
    """The memory layer's switches for condition ``cond``; raises :class:`ConditionRefused` for a
    condition that would not differ from ``memory`` under these settings."""
    flags = cond.flags
    spec_fn, votes = specifier_for(cond, specifier, endpoint, model)
    # the oracle-ladder flags are not the memory's business: experiments/audit/oracle_ladder.py wraps this
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
                        agent_decided_access=flags.agent_access, refine_every_verb=flags.refine_every_verb,
                        specifier=spec_fn, specifier_votes=votes)


def executor_tool_settings(backend: str, policy: str) -> dict[str, dict]:
    """What the memory's tools must know about the executor they write subgoals for (tool name ->
    constructor arguments, :func:`memory.tools.registry.default_tools`).

    One fact so far: how a press is carried out. Our scripted executor waits over the button for the
    next arrival a press can meet, so a press may be released before the next arrival's time is
    known; the benchmark's planner (``--backend robomme``, directly or behind the planner server)
    and a learned policy press at once, so there the press waits until the arrival is due."""
    return {"pass_timer": {"release_unknown": backend == "robomem" and policy == "scripted"}}


def build_memory(cond, perception: PerceptionConfig | None = None, specifier=None,
                 tool_settings: dict[str, dict] | None = None) -> MemoryLayer:
    """A fresh memory layer for one episode of condition ``cond``, its tools on the perception
    back-ends ``perception`` names (``None``: the colour default; loaded models are cached), its
    specifier as the run config's ``specifier`` group says (:class:`experiments.loop.config.SpecifierConfig`;
    ``None``: the instruction parser), and its tools told what ``tool_settings`` says of the executor
    (:func:`executor_tool_settings`; ``None``: the registered defaults)."""
    if cond.custom is not None:  # a researcher's memory (memory/contract/interface.py), built with no arguments
        from memory.contract.interface import check_memory, load_memory_class

        return check_memory(load_memory_class(cond.custom)(), where=cond.custom)
    cfg = memory_config(cond, *_specifier_args(specifier))
    return MemoryLayer(cfg, default_tools(perception=None if perception is None else build_perception(perception),
                                          settings=tool_settings))


def _specifier_args(specifier) -> tuple[str, str | None, str]:
    if specifier is None:
        return "instruction", None, "default"
    return specifier.kind, specifier.specifier_endpoint, specifier.specifier_model


def condition_signature(cond, specifier=None) -> dict:
    """Everything a condition changes about an episode, as plain data: the composer, the recent
    window, the memory layer's config and the oracle-ladder rung that wraps it from outside.
    Two conditions with the same signature would run the same thing under two names."""
    sig = {"composer": cond.composer, "memory": cond.memory, "recent_window": cond.recent_window}
    if cond.custom is not None:
        sig["custom_memory"] = cond.custom
    elif cond.memory:
        sig["memory_config"] = memory_config(cond, *_specifier_args(specifier)).to_dict()
        if cond.flags.uses_true_state:
            from experiments.audit.oracle_ladder import ladder_rung

            sig["oracle_ladder"] = str(ladder_rung(cond.flags))
    return sig
