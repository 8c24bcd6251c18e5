"""Kinds of state are the unit: each task's goal gives its kinds with their parameters, a new noun of
the word table keeps them, an unknown noun is reported, and no rule names a noun.

No simulator: template goals come from the tasks' layout samplers (``tests/goal_cases.py``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from envs import ALL_TASKS
from memory.language.needs import Need, need_of, needs_of
from memory.language.spec import EvidenceSource, MemorySpec, ReadKind, specify
from memory.language.state_kinds import (
    Binding, Count, CountEvent, DemonstratedGrasp, DemonstratedManner, DemonstratedObject, EventSequence, Mark, Route,
    StateKind, TimedArrival, state_kinds_of, unserved_of,
)
from memory.language.words import CONCEPT_NOUNS, OBJECT_ROLES, SCENE_ITEM_KINDS, SceneItemKind
from memory.layer import MemoryConfig, MemoryLayer
from memory.tools.registry import default_tools
from tests.goal_cases import goal_cases, rewordings_of

ROOT = Path(__file__).resolve().parents[1]
CASES = goal_cases(range(12))

# the kinds of state each task's template goal asks to keep, in state_kinds_of's order (a count by its event)
EXPECTED_KINDS: dict[str, tuple[str, ...]] = {
    "BinFill": ("count:deposit",),
    "PickXtimes": ("count:repetition",),
    "SwingXtimes": ("count:repetition", "count:visit"),
    "StopCube": ("timed_arrival",),
    "VideoUnmask": ("binding",),
    "ButtonUnmask": ("binding",),
    "VideoUnmaskSwap": ("binding",),
    "ButtonUnmaskSwap": ("binding",),
    "PickHighlight": ("mark",),
    "VideoRepick": ("count:repetition", "demonstrated_object"),
    "VideoPlaceButton": ("event_sequence",),
    "VideoPlaceOrder": ("event_sequence",),
    "MoveCube": ("demonstrated_manner",),
    "InsertPeg": ("demonstrated_grasp",),
    "PatternLock": ("route",),
    "RouteStick": ("route",),
}


def _types(states) -> tuple[str, ...]:
    """The kinds of ``states`` once each (a count with its event): what a goal keeps, not how many bindings."""
    return tuple(dict.fromkeys(s.kind.value + (f":{s.event.value}" if isinstance(s, Count) else "") for s in states))


def test_every_task_is_expected():
    assert set(EXPECTED_KINDS) == set(ALL_TASKS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.task}-{c.episode}")
def test_each_template_goal_gives_its_kinds_with_their_parameters(case):
    spec = specify(case.template)
    states = state_kinds_of(spec)
    want = EXPECTED_KINDS[case.task]
    if case.task == "VideoRepick" and not spec.repetitions:
        want = ("demonstrated_object",)  # one pick asked: nothing to count
    assert _types(states) == want, (case.task, case.template, states)
    assert unserved_of(spec) == (), (case.template, unserved_of(spec))
    for s in states:
        assert s.to_dict()["kind"] == s.kind.value
        if isinstance(s, Count) and s.event is CountEvent.DEPOSIT:
            assert s.receptacle == "bin" and s.per_kind == spec.counts and s.roles == ("cube",)
        elif isinstance(s, Count) and s.event is CountEvent.VISIT:
            assert s.sides == ("right", "left") and s.target == spec.repetitions
        elif isinstance(s, Count):
            assert s.event is CountEvent.REPETITION and s.target == spec.repetitions >= 1
        elif isinstance(s, Binding):
            assert s.carrier == "cover" and s.entity.split()[-1] == "cube"
        elif isinstance(s, Mark):
            assert (s.mark, s.role, s.named) == ("highlighted", "cube", True)
        elif isinstance(s, TimedArrival):
            assert s.place == "target" and s.ordinal == spec.ordinal
        elif isinstance(s, EventSequence):
            assert s.event == "place" and s.place == "target" and s.objects
            assert (s.anchor is not None) == (case.task == "VideoPlaceButton")
            assert (s.ordinal is not None) == (case.task == "VideoPlaceOrder")
        elif isinstance(s, DemonstratedObject):
            assert s.role == "cube"
        elif isinstance(s, DemonstratedManner):
            assert s.role == "cube" and s.tools == ("peg",)
        elif isinstance(s, DemonstratedGrasp):
            assert s.role == "peg" and set(s.parts) <= {"end", "side"} and s.parts
        elif isinstance(s, Route):
            assert s.source == EvidenceSource.VIDEO.value


def test_swing_counts_both_repetitions_and_visits():
    case = next(c for c in CASES if c.task == "SwingXtimes")
    events = [s.event for s in state_kinds_of(specify(case.template)) if isinstance(s, Count)]
    assert events == [CountEvent.REPETITION, CountEvent.VISIT]


@pytest.mark.parametrize("case", goal_cases(range(0, 12, 4)), ids=lambda c: f"{c.task}-{c.episode}")
def test_rewordings_keep_the_templates_kinds(case):
    want = _types(state_kinds_of(specify(case.template)))
    for text in rewordings_of(case, "dev") + rewordings_of(case, "held_out"):
        assert _types(state_kinds_of(specify(text))) == want, (case.task, text)


def _as_ball(text: str) -> str:
    """The goal about balls instead of cubes (a noun the rules were never written for)."""
    return re.sub(r"\b(cube|block)(s?)\b", lambda m: "ball" + m.group(2), text)


@pytest.mark.parametrize("case", goal_cases(range(0, 12, 3)), ids=lambda c: f"{c.task}-{c.episode}")
def test_a_new_noun_of_the_table_keeps_the_kinds(case):
    """Swapping the object noun for another noun of the word table changes the roles the states name,
    not which states there are, nor which tools serve them."""
    cube, ball = specify(case.template), specify(_as_ball(case.template))
    before, after = state_kinds_of(cube), state_kinds_of(ball)
    assert _types(after) == _types(before), (case.template, before, after)
    assert needs_of(ball) == needs_of(cube)
    assert unserved_of(ball) == ()
    if "cube" in case.template or "block" in case.template:
        roles = {getattr(s, "role", None) for s in after} | {r for s in after if isinstance(s, Count) for r in s.roles}
        assert "cube" not in roles, after


def test_an_object_with_parts_is_kept_as_a_grasp_and_one_without_as_an_object():
    goal = "watch the video, then pick up the same {} you picked before by the same end"
    assert _types(state_kinds_of(specify(goal.format("peg")))) == ("demonstrated_grasp",)
    assert _types(state_kinds_of(specify(goal.format("ball")))) == ("demonstrated_object",)


def test_an_unknown_noun_is_reported_not_dropped():
    marked = specify("pick up the highlighted widgets one by one, then press the button")
    (mark,) = state_kinds_of(marked)
    assert isinstance(mark, Mark) and not mark.named  # a generic mark reader, with the missing noun reported
    assert any("'object' is no noun" in u for u in unserved_of(marked))
    assert any("no object noun named" in u for u in unserved_of(marked))

    counted = specify("put two red widgets and one blue widget into the bin, then press the button")
    assert state_kinds_of(counted) == ()  # nothing to count: the counts were not read
    assert any("'widgets'" in u and "no noun of the word table" in u for u in unserved_of(counted))

    # a chat-model specifier may return any phrase: an unknown head noun is named
    spec = MemorySpec(goal="-", source=EvidenceSource.VIDEO, watch=("red widget",), counts=(("red widget", 2),),
                      layout=("bin",), reads=frozenset({ReadKind.COUNT_GATE}))
    assert [type(s) for s in state_kinds_of(spec)] == [Count]
    reasons = unserved_of(spec)
    assert "watch 'red widget': 'widget' is no noun of the word table" in reasons
    assert "counts 'red widget': 'widget' is no noun of the word table" in reasons


def test_a_field_no_kind_keeps_is_reported():
    spec = specify("pick up two red cubes and one blue cube")  # counts, but nothing to deposit them into
    assert state_kinds_of(spec) == ()
    assert unserved_of(spec) == ("counts: no scene item the goal names takes deposits, so no kind counts them",)


def test_the_layer_reports_kinds_and_unserved():
    layer = MemoryLayer(MemoryConfig(), default_tools())
    layer.reset("put two red widgets into the bin, then press the button", [])
    d = layer.diagnostics()
    assert d["state_kinds"] == [] and d["unserved"] and "widgets" in d["unserved"][0]
    layer.reset("pick up the red cube and place it on the target three times, then press the button to stop", [])
    d = layer.diagnostics()
    assert d["state_kinds"] == [{"kind": "count", "event": "repetition", "target": 3, "per_kind": (), "sides": (),
                                 "receptacle": None}]
    assert d["unserved"] == [] and d["needs"] == ["repetition_count", "scene"]


def test_every_kind_has_a_need_and_the_needs_are_the_kinds():
    kinds = {Count: [Count(e) for e in CountEvent], Binding: [Binding("red cube", "cover")], Mark: [Mark("highlighted", "cube")],
             TimedArrival: [TimedArrival("target", 2)], EventSequence: [EventSequence("place", "target", ("red cube",), 1)],
             DemonstratedObject: [DemonstratedObject("cube")], DemonstratedGrasp: [DemonstratedGrasp("peg", ("end",))],
             DemonstratedManner: [DemonstratedManner("cube", ("peg",))], Route: [Route("video")]}
    assert {c.kind for c in kinds} == set(StateKind)
    needs = {need_of(s) for states in kinds.values() for s in states}
    assert needs == set(Need) - {Need.SCENE}  # one need per kind (per count event); the scene is every episode's


def test_the_scene_item_kinds_give_the_layout_roles():
    assert set(SCENE_ITEM_KINDS.values()) <= set(SceneItemKind)
    assert not set(SCENE_ITEM_KINDS) & set(OBJECT_ROLES)


# --------------------------------------------------------------------------- no literal noun in the rules


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of ``path`` that are code, not docstrings (a bare string statement)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def _noun_pattern(nouns) -> re.Pattern:
    return re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, nouns), key=len, reverse=True)) + r")(?:e?s)?\b", re.I)


RULE_FILES = ("memory/language/state_kinds.py", "memory/language/needs.py")
# the tools that used to name their object ("cube", "peg") and now take it from their state's parameters
ROLE_TOOLS = ("demo_handled", "deposit_counter", "highlight_marks", "manner_reader", "peg_reader")


@pytest.mark.parametrize("rel", RULE_FILES)
def test_no_rule_names_a_noun(rel):
    """The state-kind and need rules name no noun of the word table (objects, covers, scene items)."""
    nouns = _noun_pattern(s for surfaces in CONCEPT_NOUNS.values() for s in surfaces)
    found = [(ln, s) for ln, s in _code_strings(ROOT / rel) if nouns.search(s)]
    assert not found, f"{rel} names nouns in code: {found}; ask the word table (memory/language/words.py)"


@pytest.mark.parametrize("tool", ROLE_TOOLS)
def test_no_role_tool_names_its_object(tool):
    """These tools take which object from their state's role; no code string names an object role."""
    roles = _noun_pattern(OBJECT_ROLES)
    found = [(ln, s) for ln, s in _code_strings(ROOT / "memory" / "tools" / f"{tool}.py") if roles.search(s)]
    assert not found, f"{tool} names object roles in code: {found}; take the role from its state kind"


def test_the_scan_catches_a_literal(tmp_path):
    path = tmp_path / "rule.py"
    path.write_text('x = 1\ndef f(spec):\n    """the cube"""\n    return "bin" in spec.layout\n')
    assert [s for _, s in _code_strings(path)] == ["bin"]  # the rule's literal, not the docstring
