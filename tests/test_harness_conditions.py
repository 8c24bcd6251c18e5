"""Condition names and switches derive each other, both ways."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from experiments.loop.conditions import (
    ABLATIONS,
    ALL_CONDITIONS,
    Condition,
    MemoryFlags,
    condition_from_name,
    condition_sort_key,
    name_of,
)

BRIEF_ABLATIONS = {
    "no-route", "no-count", "no-demo-ref", "no-live-binding", "no-demo-binding", "no-demo-relation-update",
    "agent-access", "no-identity", "single-vote", "refine-every-verb", "no-mark-reader", "no-manner",
    "no-peg-end-side", "no-timed-count", "true-state", "oracle-access", "oracle-grounding",
}


def test_every_ablation_has_a_flag_and_a_name():
    assert set(ABLATIONS) == BRIEF_ABLATIONS
    assert {"oracle", "no-memory", "memory", "recent4", "recent16", "recent32"} <= set(ALL_CONDITIONS)
    assert {f"memory-{a}" for a in BRIEF_ABLATIONS} <= set(ALL_CONDITIONS)


@pytest.mark.parametrize("name", ALL_CONDITIONS)
def test_name_round_trip(name):
    c = condition_from_name(name)
    assert name_of(c) == name == c.name
    assert condition_from_name(name_of(c)) == c


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(MemoryFlags)])
def test_flags_round_trip(field):
    c = Condition(memory=True, flags=MemoryFlags(**{field: True}))
    assert name_of(c) == "memory-" + field.replace("_", "-")
    assert condition_from_name(name_of(c)) == c


def test_combined_ablations_round_trip():
    for a, b in itertools.combinations(ABLATIONS, 2):
        c = Condition(memory=True, flags=MemoryFlags.from_suffixes([a, b]))
        assert name_of(c) == f"memory-{a}+{b}"
        assert condition_from_name(name_of(c)) == c


def test_condition_contents():
    assert condition_from_name("oracle") == Condition(composer="oracle")
    nm = condition_from_name("no-memory")
    assert (nm.composer, nm.memory, nm.recent_window, nm.flags) == ("history-blind", False, None, MemoryFlags())
    assert condition_from_name("memory") == Condition(memory=True)
    assert condition_from_name("recent16").recent_window == 16
    assert not condition_from_name("recent32").memory
    aa = condition_from_name("memory-agent-access")
    assert aa.memory and aa.flags.agent_access and aa.flags.active == ("agent-access",)


def test_oracle_ladder_is_cumulative():
    ts, oa, og = (condition_from_name(f"memory-{s}").flags for s in ("true-state", "oracle-access", "oracle-grounding"))
    assert ts.uses_true_state and not ts.uses_oracle_access
    assert oa.uses_true_state and oa.uses_oracle_access and not oa.uses_oracle_grounding
    assert og.uses_true_state and og.uses_oracle_access and og.uses_oracle_grounding


@pytest.mark.parametrize(
    "bad, needle",
    [
        ("memroy", "'memory'"),
        ("memory-no-rout", "'memory-no-route'"),
        ("recent0", "recent"),
        ("recent04", "recent"),
        ("memory-no-count+no-route", "'memory-no-route+no-count'"),
        ("memory-no-route+no-route", "repeats"),
        ("memory-", "memory"),
    ],
)
def test_bad_names_are_named(bad, needle):
    with pytest.raises(ValueError) as e:
        condition_from_name(bad)
    assert repr(bad) in str(e.value) and needle in str(e.value)


def test_unnameable_combinations_are_rejected():
    with pytest.raises(ValueError):
        Condition(composer="oracle", memory=True)
    with pytest.raises(ValueError):
        Condition(memory=True, recent_window=4)
    with pytest.raises(ValueError):
        Condition(flags=MemoryFlags(no_route=True))  # ablation without memory
    with pytest.raises(ValueError):
        MemoryFlags.from_suffixes(["no-rout"])


def test_display_order():
    names = ["memory-no-count", "memory", "recent32", "recent4", "no-memory", "oracle", "memory-no-route"]
    assert sorted(names, key=condition_sort_key) == [
        "oracle", "no-memory", "recent4", "recent32", "memory", "memory-no-route", "memory-no-count"
    ]
