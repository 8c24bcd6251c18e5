"""Structured access: which slots read, reads from verified records, abstentions, re-grounding, traces; and the layer around it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from memory.control.access import StructuredAccess, slot_query
from memory.contract.frames import Frame
from memory.layer import MemoryConfig, MemoryLayer, Revision
from memory.language.needs import Need
from memory.control.query import Query
from memory.store.records import EntityRecord, EntityStatus, ProgressRecord, Source
from memory.language.spec import MemorySpec, ReadKind, specify
from memory.store.memory_store import MemoryStore
from memory.tools.base import Tool
from subgoals.edits import SetOrdinal
from subgoals.grammar import Point, parse_subgoal

COVER_GOAL = "watch the video carefully, then pick up the container hiding the green cube"
FRAME = Frame(step=40, rgb=np.zeros((256, 256, 3), np.uint8))


def cover(status=EntityStatus.VERIFIED, position=(80, 90)) -> EntityRecord:
    return EntityRecord(
        identity="container",
        role="cover",
        position=position,
        binding="cover hiding the green cube",
        status=status,
        source=Source.DEMONSTRATION,
    )


def store_with(**records: EntityRecord) -> MemoryStore:
    store = MemoryStore()
    for key, record in records.items():
        store.add(key, record, step=0, reason="test")
    return store


def near_stored(entity: EntityRecord, frame: Frame) -> Point | None:
    """A re-grounding stand-in: the object is found 2 px below where memory last saw it."""
    return None if entity.position is None else Point(entity.position[0] + 2, entity.position[1])


def never(entity: EntityRecord, frame: Frame) -> Point | None:
    return None


# --------------------------------------------------------------------------- the structural test


@pytest.mark.parametrize(
    "text, kind, binding",
    [
        ("pick up the container at <10, 20> that hides the green cube", ReadKind.COVER_BINDING, "cover hiding the green cube"),
        ("pick up another container hiding the blue block", ReadKind.COVER_BINDING, "cover hiding the blue cube"),
        ("pick up the second highlighted cube, which is blue", ReadKind.HIGHLIGHT_RELATION, "highlighted cube"),
        ("place the cube onto the correct target at <5, 5>", ReadKind.DEMO_REFERENCE, "reference target"),
        ("pick up the same block at <5, 5>", ReadKind.DEMO_REFERENCE, "reference cube"),
        ("pick up the previous cube", ReadKind.DEMO_REFERENCE, "reference cube"),
        ("pick up the cube that was previously picked up", ReadKind.DEMO_REFERENCE, "reference cube"),
    ],
)
def test_history_dependent_slots_read(text, kind, binding):
    sg = parse_subgoal(text)
    queries = [q for q in (slot_query(np_, i) for i, np_ in enumerate(sg.noun_phrases)) if q]
    assert len(queries) == 1
    assert queries[0].kind is kind and queries[0].binding == binding


@pytest.mark.parametrize(
    "text",
    [
        "pick up the red cube at <142, 97> for the first time",
        "place the red cube onto the target at <120, 130>",
        "press the button at <200, 128>",
        "move to the nearest left target by circling around the stick clockwise",
        "pick up the second red cube",
        "put down the container",
        "put it into the bin",
        "pick up the container at <1, 2>",
        "move to the top of the right-side target for the first time",
    ],
)
def test_appearance_and_position_words_do_not_read(text):
    sg = parse_subgoal(text)
    assert all(slot_query(np_, i) is None for i, np_ in enumerate(sg.noun_phrases))


def test_highlight_query_carries_colour_and_ordinal():
    q = slot_query(parse_subgoal("pick up the second highlighted cube, which is blue").noun_phrases[0])
    assert (q.colour, q.ordinal, q.role) == ("blue", 2, "cube")


# --------------------------------------------------------------------------- reads and abstentions


def test_read_rewrites_the_slot_from_a_verified_record():
    access = StructuredAccess(specify(COVER_GOAL))
    store = store_with(**{"cover:green": cover()})
    proposed = "pick up the container at <10, 20> that hides the green cube"
    text, traces = access.revise(proposed, FRAME, store, near_stored)
    assert text == "pick up the container at <82, 90> that hides the green cube"
    (t,) = traces
    assert not t.abstained and t.changed
    assert (t.step, t.query, t.proposed, t.rewritten) == (40, "cover hiding the green cube", proposed, text)
    assert (t.record_key, t.record_status, t.kind) == ("cover:green", "verified", "cover_binding")
    assert t.answer == "container at <82, 90>"
    assert t.reason_code == "read"


def test_cover_colour_does_not_filter_the_hidden_identity():
    access = StructuredAccess(specify(COVER_GOAL))
    store = store_with(c=cover())
    text, (t,) = access.revise("pick up the red container at <1, 2> that hides the green cube", FRAME, store, near_stored)
    assert not t.abstained and "<82, 90>" in text


def test_read_adds_a_point_when_the_proposal_has_none():
    access = StructuredAccess(specify(COVER_GOAL))
    store = store_with(c=cover(status=EntityStatus.REACQUIRED))
    text, _ = access.revise("pick up the container that hides the green cube", FRAME, store, near_stored)
    assert text == "pick up the container at <82, 90> that hides the green cube"


def test_read_that_confirms_the_proposal_keeps_its_text():
    access = StructuredAccess(specify(COVER_GOAL))
    store = store_with(c=cover(position=(80, 90)))
    proposed = "pick up the container at <82,90> that hides the green cube"  # non-canonical spacing
    text, (t,) = access.revise(proposed, FRAME, store, near_stored)
    assert text == proposed and not t.abstained and not t.changed


@pytest.mark.parametrize("status", [EntityStatus.CANDIDATE, EntityStatus.UNCERTAIN])
def test_abstains_without_a_verified_record(status):
    access = StructuredAccess(specify(COVER_GOAL))
    store = store_with(c=cover(status=status))
    proposed = "pick up the container at <10, 20> that hides the green cube"
    text, (t,) = access.revise(proposed, FRAME, store, near_stored)
    assert text == proposed
    assert t.abstained and t.reason_code == "no-record" and t.record_status == status.value
    assert t.rewritten == proposed and t.answer is None


def test_uncertain_records_are_read_only_when_configured():
    access = StructuredAccess(specify(COVER_GOAL), read_uncertain=True)
    store = store_with(c=cover(status=EntityStatus.UNCERTAIN))
    text, (t,) = access.revise("pick up the container at <10, 20> that hides the green cube", FRAME, store, near_stored)
    assert not t.abstained and "<82, 90>" in text


def test_abstains_on_an_empty_store_and_on_a_different_binding():
    access = StructuredAccess(specify(COVER_GOAL))
    proposed = "pick up the container at <10, 20> that hides the green cube"
    _, (t,) = access.revise(proposed, FRAME, MemoryStore(), near_stored)
    assert t.abstained and t.reason_code == "no-record" and t.record_status is None
    other = cover().evolve(binding="cover hiding the red cube")
    _, (t,) = access.revise(proposed, FRAME, store_with(c=other), near_stored)
    assert t.abstained


def test_abstains_when_grounding_fails_unless_fallback():
    store = store_with(c=cover())
    proposed = "pick up the container at <10, 20> that hides the green cube"
    text, (t,) = StructuredAccess(specify(COVER_GOAL)).revise(proposed, FRAME, store, never)
    assert text == proposed and t.abstained and t.reason_code == "no-grounding"
    assert t.record_key == "c"  # the record was found; only the current view failed
    unrendered = Frame(step=41)
    _, (t,) = StructuredAccess(specify(COVER_GOAL)).revise(proposed, unrendered, store, never)
    assert "no image" in t.reason
    fallback = StructuredAccess(specify(COVER_GOAL), record_position_fallback=True)
    text, (t,) = fallback.revise(proposed, FRAME, store, never)
    assert text == "pick up the container at <80, 90> that hides the green cube" and not t.abstained


def test_reads_need_the_goals_permission():
    store = store_with(c=cover())
    proposed = "pick up the container at <10, 20> that hides the green cube"
    spec = specify("pick up the red cube and place it on the target")  # permits no cover reads
    text, (t,) = StructuredAccess(spec).revise(proposed, FRAME, store, near_stored)
    assert text == proposed and t.abstained and t.reason_code == "not-permitted"


def test_plain_subgoal_leaves_no_trace():
    store = store_with(red=EntityRecord("red cube", "cube", (5, 5), status=EntityStatus.VERIFIED))
    spec = specify("pick up the red cube and place it on the target, repeating this action three times")
    proposed = "pick up the red cube at <142, 97> for the first time"
    assert StructuredAccess(spec).revise(proposed, FRAME, store, near_stored) == (proposed, [])


def test_unparseable_proposal_abstains():
    proposed = "pick up the container at <10, 20 that hides"
    text, (t,) = StructuredAccess(specify(COVER_GOAL)).revise(proposed, FRAME, MemoryStore(), near_stored)
    assert text == proposed and t.abstained and t.reason_code == "unparseable"


def highlight_store() -> MemoryStore:
    return store_with(
        h1=EntityRecord("red cube", "cube", (50, 50), binding="highlighted cube", status=EntityStatus.VERIFIED),
        h2=EntityRecord("blue cube", "cube", (60, 160), binding="highlighted cube", status=EntityStatus.VERIFIED),
        h3=EntityRecord("green cube", "cube", (90, 90), binding="highlighted cube", status=EntityStatus.CANDIDATE),
    )


def test_highlight_reads_filter_by_colour_never_by_the_proposals_ordinal():
    spec = specify("first press the button, then pick up all highlighted cubes, finally press the button again to stop")
    access = StructuredAccess(spec)
    store = highlight_store()
    text, (t,) = access.revise("pick up the second highlighted cube, which is blue", FRAME, store, near_stored)
    assert text == "pick up the second highlighted cube at <62, 160>, which is blue"
    assert t.record_key == "h2"
    # two marked cubes left and no colour stated: each is a right answer; the memory's own order
    # chooses, whatever position word the proposer wrote (it is the proposer's count, not evidence)
    answers = set()
    for words in ("", "first ", "second ", "third ", "tenth "):
        _, (t,) = access.revise(f"pick up the {words}highlighted cube at <1, 1>", FRAME, store, near_stored)
        answers.add((t.record_key, t.answer))
    assert answers == {("h1", "red cube at <52, 50>")}
    _, (t,) = access.revise("pick up the highlighted cube, which is green", FRAME, store, near_stored)
    assert t.abstained and t.record_status == "candidate"


def test_demo_reference_reads_the_second_slot():
    spec = specify("watch the video carefully, then place the green cube on the second target it was previously placed on")
    store = store_with(
        t=EntityRecord("target", "target", (120, 130), binding="reference target", status=EntityStatus.VERIFIED, source=Source.DEMONSTRATION)
    )
    text, (t,) = StructuredAccess(spec).revise("place the cube onto the correct target at <5, 5>", FRAME, store, near_stored)
    assert text == "place the cube onto the correct target at <122, 130>"
    assert t.kind == "demo_reference"


def test_agent_decided_access_reads_every_subgoal():
    spec = specify("pick up the red cube and place it on the target")  # permits nothing
    store = store_with(red=EntityRecord("red cube", "cube", (5, 5), status=EntityStatus.VERIFIED))
    access = StructuredAccess(spec, agent_decided=True)
    text, traces = access.revise("pick up the red cube at <142, 97> for the first time", FRAME, store, near_stored)
    assert text == "pick up the red cube at <7, 5> for the first time"
    assert len(traces) == 1 and traces[0].kind is None and not traces[0].abstained
    _, traces = access.revise("place the red cube onto the target at <120, 130>", FRAME, store, near_stored)
    assert [t.abstained for t in traces] == [False, True]  # the target has no record
    _, (t,) = access.revise("move forward-left", FRAME, store, near_stored)
    assert t.abstained and t.reason_code == "no-slot"


# --------------------------------------------------------------------------- the layer


class ScriptedCoverTool(Tool):
    """Writes a cover binding at given steps, standing in for a real cover tracker (no pixels needed)."""

    name = "scripted_cover"
    group = "cover"
    serves = frozenset({Need.COVER_BINDING})  # enabled by a goal with cover bindings

    def __init__(self, script: dict[int, EntityRecord]):
        self.script = script
        self.seen: list[tuple[int, str]] = []
        self.watch: tuple[str, ...] = ()

    def reset(self, spec, store):
        self.seen = []
        self.watch = spec.bindings

    def observe(self, frame, store):
        self.seen.append((frame.step, frame.source))
        if frame.step in self.script and self.script[frame.step].binding in self.watch:
            self.commit(store, "cover:green", self.script[frame.step], step=frame.step, reason="scripted", accepted=True)

    def reground(self, entity, frame):
        return near_stored(entity, frame) if entity.role == "cover" else None


class OrdinalGate(Tool):
    """A progress gate: rewrites "for the first time" into the ordinal its counter says."""

    name = "ordinal_gate"
    group = "progress"
    gate_kind = ReadKind.COUNT_GATE
    serves = frozenset({Need.REPETITION_COUNT})

    def reset(self, spec, store):
        store.add("progress:reps", ProgressRecord(name="repetitions", count=0, target=spec.repetitions), step=0, reason="goal")

    def observe(self, frame, store):
        if frame.step == 30:
            store.update("progress:reps", ProgressRecord(name="repetitions", count=1, target=3), step=30, reason="placed")

    def gate(self, proposed, store):
        count = store.get("progress:reps").count
        if "for the first time" in proposed and count >= 1:
            return SetOrdinal(2)
        return None


def video(n: int) -> list[Frame]:
    return [Frame(step=i, rgb=np.zeros((8, 8, 3), np.uint8), source="video") for i in range(n)]


def test_layer_reads_after_the_video_and_snapshots_the_past():
    tool = ScriptedCoverTool({3: cover(EntityStatus.CANDIDATE), 5: cover(EntityStatus.VERIFIED, (60, 120))})
    layer = MemoryLayer(MemoryConfig(), [tool])
    layer.reset(COVER_GOAL, video(8))
    assert tool.seen[0] == (0, "video") and len(tool.seen) == 8
    for step in (8, 9):
        layer.observe(Frame(step=step, rgb=None))
    rev = layer.revise("pick up the container at <10, 20> that hides the green cube", Frame(step=9, rgb=None))
    assert rev == Revision(text="pick up the container at <62, 120> that hides the green cube", rewritten=True, trace=rev.trace,
                           traces=(rev.trace,))
    assert rev.read and not rev.abstained
    assert rev.trace.record_key == "cover:green" and layer.traces == [rev.trace]
    # time-restricted views
    assert layer.snapshot(2)["records"]["entity"] == {}
    assert layer.snapshot(4)["records"]["entity"]["cover:green"]["status"] == "candidate"
    assert layer.snapshot(9)["records"]["entity"]["cover:green"]["position"] == [60, 120]
    assert len(layer.snapshot(9)["traces"]) == 1 and layer.snapshot(8)["traces"] == []
    diag = json.loads(json.dumps(layer.diagnostics()))
    assert diag["reads"] == 1 and diag["abstentions"] == 0 and diag["rewrites"] == 1
    assert diag["frames"] == {"video": 8, "live": 2}
    assert diag["records"]["entity"] == 1 and diag["edits"]["add"] == 1 and diag["edits"]["update"] == 1
    # a new episode forgets everything
    layer.reset(COVER_GOAL, [])
    assert layer.traces == [] and layer.snapshot(100)["records"]["entity"] == {}
    rev = layer.revise("pick up the container at <10, 20> that hides the green cube", Frame(step=0))
    assert not rev.rewritten and rev.trace.abstained


def test_layer_abstains_before_verification():
    tool = ScriptedCoverTool({3: cover(EntityStatus.CANDIDATE)})
    layer = MemoryLayer(MemoryConfig(), [tool])
    layer.reset(COVER_GOAL, video(5))
    proposed = "pick up the container at <10, 20> that hides the green cube"
    rev = layer.revise(proposed, Frame(step=5))
    assert rev.text == proposed and not rev.rewritten and rev.trace.abstained
    assert layer.diagnostics()["abstain_reasons"] == {"no-record": 1}


def test_layer_without_video_ablation():
    tool = ScriptedCoverTool({3: cover(EntityStatus.VERIFIED)})
    layer = MemoryLayer(MemoryConfig(use_video=False), [tool])
    layer.reset(COVER_GOAL, video(5))
    assert tool.seen == []
    assert not layer.revise("pick up the container at <10, 20> that hides the green cube", Frame(step=5)).rewritten


def test_disabled_layer_is_a_pass_through():
    calls = []

    def specifier(goal):
        calls.append(goal)
        return specify(goal)

    tool = ScriptedCoverTool({3: cover()})
    layer = MemoryLayer(MemoryConfig(enabled=False, specifier=specifier), [tool])
    layer.reset(COVER_GOAL, video(5))
    layer.observe(Frame(step=6))
    proposed = "pick up the container at <10, 20> that hides the green cube"
    assert layer.revise(proposed, Frame(step=6)) == Revision(proposed, False, None)
    assert tool.seen == [] and layer.traces == [] and calls == []
    assert layer.diagnostics()["revisions"] == 0


def test_gates_respect_permissions_and_ablations():
    goal = "pick up the green cube and place it on the target, repeating this action three times"
    proposed = "pick up the green cube at <1, 2> for the first time"
    layer = MemoryLayer(MemoryConfig(), [OrdinalGate()])
    layer.reset(goal, [])
    assert not layer.revise(proposed, Frame(step=1)).rewritten
    layer.observe(Frame(step=30))
    rev = layer.revise(proposed, Frame(step=31))
    assert rev.text == "pick up the green cube at <1, 2> for the second time"
    assert rev.trace.reason_code == "gate" and rev.trace.kind == "count_gate"
    ablated = MemoryLayer(MemoryConfig(disabled_reads=frozenset({ReadKind.COUNT_GATE})), [OrdinalGate()])
    ablated.reset(goal, [])
    ablated.observe(Frame(step=30))
    assert not ablated.revise(proposed, Frame(step=31)).rewritten
    no_group = MemoryLayer(MemoryConfig(tool_groups=frozenset({"identity"})), [OrdinalGate()])
    assert no_group.tools == ()


def test_layer_rejects_bad_input():
    layer = MemoryLayer(MemoryConfig(), [ScriptedCoverTool({})])
    with pytest.raises(RuntimeError):
        layer.observe(Frame(step=0))
    layer.reset(COVER_GOAL, [])
    layer.observe(Frame(step=10))
    with pytest.raises(ValueError, match="step 3"):
        layer.observe(Frame(step=3))
    with pytest.raises(TypeError):
        layer.revise(None, Frame(step=11))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="source 'live'"):
        layer.reset(COVER_GOAL, [Frame(step=0)])
    with pytest.raises(ValueError, match="named"):
        MemoryLayer(MemoryConfig(), [ScriptedCoverTool({}), ScriptedCoverTool({})])
    with pytest.raises(TypeError):
        MemoryLayer(MemoryConfig(), [object()])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        Frame(step=0, rgb=np.zeros((4, 4), np.uint8))
    with pytest.raises(ValueError):
        Frame(step=0, source="sim")  # type: ignore[arg-type]


def test_frames_are_read_only_views():
    rgb = np.zeros((4, 4, 3), np.uint8)
    frame = Frame(step=0, rgb=rgb)
    with pytest.raises(ValueError):
        frame.rgb[0, 0, 0] = 1
    rgb[0, 0, 0] = 7  # the caller's array stays writable
    assert frame.rgb[0, 0, 0] == 7


def test_tool_answer_hook_is_consulted():
    class Answering(Tool):
        name = "answering"

        def observe(self, frame, store):
            pass

        def answer(self, query: Query, store):
            if query.binding == "cover hiding the green cube":
                return cover()
            return None

    store = MemoryStore()
    text, (t,) = StructuredAccess(specify(COVER_GOAL)).revise(
        "pick up the container at <10, 20> that hides the green cube", FRAME, store, near_stored, [Answering()]
    )
    assert t.record_key == "answering:answer" and "<82, 90>" in text


def test_spec_object_is_exposed():
    layer = MemoryLayer(MemoryConfig(), [])
    layer.reset(COVER_GOAL, [])
    assert isinstance(layer.spec, MemorySpec) and layer.spec.allows(ReadKind.COVER_BINDING)
