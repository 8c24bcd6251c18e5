"""Do two specifications mean the same? Field by field, ignoring what carries no meaning.

Why: a reworded goal must give the memory the same typed needs as the template. Comparing whole
:class:`~memory.language.spec.MemorySpec` objects would also compare the goal text and the order in which
the goal happened to mention things; here each field is compared as what it means: sets where
order is only mention order (watched phrases, layout roles, what must match the demonstration,
named sides, permitted reads), a mapping for per-kind counts, the ordered tuple where order is the
task's order (cover bindings: which container first).
"""

from __future__ import annotations

from typing import Any

from memory.language.spec import MemorySpec

__all__ = ["SPEC_FIELDS", "agreement", "meaning"]

SPEC_FIELDS: tuple[str, ...] = (
    "source", "watch", "bindings", "repetitions", "counts", "ordinal", "ordinal_event", "anchor",
    "highlighted", "same", "layout", "sides", "reads",
)
"""The fields of a specification that carry meaning (not ``goal``, not the ``unfilled`` report)."""


def meaning(spec: MemorySpec) -> dict[str, Any]:
    """``spec``'s fields in a form where equal means "same need"."""
    return {
        "source": spec.source,
        "watch": frozenset(spec.watch),
        "bindings": tuple(spec.bindings),
        "repetitions": spec.repetitions,
        "counts": dict(spec.counts),
        "ordinal": spec.ordinal,
        "ordinal_event": spec.ordinal_event,
        "anchor": spec.anchor,
        "highlighted": spec.highlighted,
        "same": frozenset(spec.same),
        "layout": frozenset(spec.layout),
        "sides": frozenset(spec.sides),
        "reads": frozenset(spec.reads),
    }


def agreement(spec: MemorySpec, reference: MemorySpec) -> dict[str, bool]:
    """``{field: spec agrees with reference on it}`` for every field of :data:`SPEC_FIELDS`."""
    a, b = meaning(spec), meaning(reference)
    return {name: a[name] == b[name] for name in SPEC_FIELDS}
