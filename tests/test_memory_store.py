"""MemoryStore: the edit lifecycle, history, time-restricted snapshots, reset and serialisation."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from memory.store.records import (
    EntityRecord,
    EntityStatus,
    LayoutRecord,
    ProgressRecord,
    RelationRecord,
    Source,
    TrajectoryRecord,
    record_from_dict,
)
from memory.store.memory_store import EditOp, MemoryStore, Snapshot, StoreKind

# Keep Hypothesis' caches out of the repository (it writes .hypothesis/ in the working directory).
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "robomem-hypothesis")

COVER = EntityRecord(
    identity="container",
    role="cover",
    position=(80, 90),
    binding="cover hiding the green cube",
    status=EntityStatus.CANDIDATE,
    source=Source.DEMONSTRATION,
)


def _scripted_store() -> tuple[MemoryStore, dict[int, dict]]:
    """A short episode; returns the store and the live state captured after each step."""
    store = MemoryStore()
    seen: dict[int, dict] = {}

    def capture(step: int) -> None:
        seen[step] = dict(store.snapshot().records)

    capture(0)
    store.add("cover:green", COVER, step=1, reason="cube vanished under a container")
    store.add("layout:button", LayoutRecord(role="button", label="button", position=(200, 128)), step=1, reason="grey cap")
    capture(1)
    store.update("cover:green", COVER.evolve(status=EntityStatus.VERIFIED), step=3, reason="association held 2 frames")
    store.add("progress:reps", ProgressRecord(name="repetitions", count=0, target=3), step=3, reason="goal says three")
    capture(3)
    store.update("cover:green", COVER.evolve(status=EntityStatus.VERIFIED, position=(60, 120)), step=5, reason="swap")
    store.noop("layout:button", step=5, reason="button unchanged")
    store.update("progress:reps", ProgressRecord(name="repetitions", count=1, target=3), step=5, reason="place seen")
    capture(5)
    store.delete("layout:button", step=8, reason="retracted")
    store.add("route", TrajectoryRecord(name="demonstrated route", segments=("left", "forward")), step=8, reason="demo")
    capture(8)
    store.update("cover:green", COVER.evolve(status=EntityStatus.UNCERTAIN, position=(60, 120)), step=9, reason="lost")
    store.add("layout:button", LayoutRecord(role="button", label="button", position=(201, 127)), step=9, reason="seen again")
    capture(9)
    return store, seen


def test_snapshot_reproduces_every_earlier_state():
    store, seen = _scripted_store()
    for step, state in seen.items():
        assert dict(store.snapshot(step).records) == state, step
    # steps between edits see the last state before them
    assert dict(store.snapshot(2).records) == seen[1]
    assert dict(store.snapshot(4).records) == seen[3]
    assert dict(store.snapshot(1000).records) == seen[9]
    assert dict(store.snapshot(-5).records) == {}
    assert store.snapshot(3).get("cover:green").status is EntityStatus.VERIFIED
    assert store.snapshot(3).get("cover:green").position == (80, 90)


def test_history_keeps_every_edit_with_before_and_after():
    store, _ = _scripted_store()
    ops = [(e.op, e.step) for e in store.history("cover:green")]
    assert ops == [(EditOp.ADD, 1), (EditOp.UPDATE, 3), (EditOp.UPDATE, 5), (EditOp.UPDATE, 9)]
    first, second = store.history("cover:green")[:2]
    assert first.before is None and first.after == COVER
    assert second.before == COVER and second.after.status is EntityStatus.VERIFIED
    assert second.reason == "association held 2 frames"
    button = [e.op for e in store.history("layout:button")]
    assert button == [EditOp.ADD, EditOp.NOOP, EditOp.DELETE, EditOp.ADD]
    assert store.history("missing") == ()
    # each edit's "before" is what the log had made of the key up to then
    state: dict = {}
    for edit in store.edits():
        assert state.get(edit.key) == edit.before
        if edit.op is EditOp.DELETE:
            state.pop(edit.key)
        elif edit.op is not EditOp.NOOP:
            state[edit.key] = edit.after


def test_typed_stores():
    store, _ = _scripted_store()
    assert set(store.entities()) == {"cover:green"}
    assert set(store.progress()) == {"progress:reps"}
    assert set(store.trajectories()) == {"route"}
    assert set(store.layout()) == {"layout:button"}
    assert store.relations() == {}
    store.add("rel", RelationRecord("blue cube", "on", "highlight"), step=10, reason="white ring")
    assert set(store.relations()) == {"rel"}
    assert store.history("rel")[0].kind is StoreKind.RELATION
    assert set(store.snapshot(10).of_kind("entity")) == {"cover:green"}


def test_reset_clears_everything():
    store, _ = _scripted_store()
    store.reset()
    assert len(store) == 0 and store.edits() == () and store.history("cover:green") == ()
    assert dict(store.snapshot(100).records) == {}
    assert store.last_step is None
    store.add("cover:green", COVER, step=0, reason="new episode starts at step 0 again")
    assert len(store.history("cover:green")) == 1


def test_lifecycle_errors():
    store = MemoryStore()
    store.add("a", COVER, step=2, reason="x")
    with pytest.raises(KeyError):
        store.add("a", COVER, step=2, reason="dup")
    with pytest.raises(KeyError):
        store.update("b", COVER, step=2, reason="missing")
    with pytest.raises(KeyError):
        store.delete("b", step=2, reason="missing")
    with pytest.raises(KeyError):
        store.noop("b", step=2, reason="missing")
    with pytest.raises(TypeError):
        store.update("a", ProgressRecord(name="n"), step=2, reason="kind change")
    with pytest.raises(ValueError, match="step 1"):
        store.update("a", COVER.evolve(status=EntityStatus.VERIFIED), step=1, reason="back in time")
    with pytest.raises(TypeError):
        store.add("c", {"identity": "x"}, step=3, reason="not a record")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.add("c", COVER, step=3.5, reason="float step")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        store.add("", COVER, step=3, reason="empty key")
    # failed edits left no trace
    assert [e.op for e in store.edits()] == [EditOp.ADD]


def test_put_chooses_the_operation():
    store = MemoryStore()
    assert store.put("k", COVER, step=0, reason="first").op is EditOp.ADD
    assert store.put("k", COVER, step=1, reason="same") is None
    assert store.put("k", COVER, step=1, reason="same, logged", log_noop=True).op is EditOp.NOOP
    assert store.put("k", COVER.evolve(position=(1, 1)), step=2, reason="moved").op is EditOp.UPDATE
    assert [e.op for e in store.history("k")] == [EditOp.ADD, EditOp.NOOP, EditOp.UPDATE]


def test_json_round_trip():
    store, _ = _scripted_store()
    dumped = json.loads(json.dumps(store.to_dict()))
    assert len(dumped["edits"]) == len(store.edits())
    snap = store.snapshot(5)
    again = Snapshot.from_dict(json.loads(json.dumps(snap.to_dict())))
    assert again == snap
    for _, record in store.items():
        assert record_from_dict(json.loads(json.dumps(record.to_dict()))) == record
    with pytest.raises(ValueError, match="unknown record type"):
        record_from_dict({"type": "nope"})


def test_trajectory_index_is_checked():
    route = TrajectoryRecord(name="r", segments=("left", "right"), index=1)
    assert route.next_segment == "right"
    assert route.evolve(index=2).next_segment is None
    with pytest.raises(ValueError):
        TrajectoryRecord(name="r", segments=("left",), index=2)


_records = st.sampled_from(
    [
        COVER,
        COVER.evolve(status=EntityStatus.VERIFIED),
        COVER.evolve(position=(3, 4), status=EntityStatus.UNCERTAIN),
        EntityRecord(identity="red cube", role="cube", position=(5, 6), status=EntityStatus.VERIFIED),
        EntityRecord(identity="blue cube", role="cube", binding="highlighted cube"),
    ]
)
_ops = st.lists(
    st.tuples(st.sampled_from(["put", "delete", "noop"]), st.sampled_from(["a", "b", "c"]), _records, st.integers(0, 2)),
    max_size=30,
)



@settings(max_examples=60, deadline=None, database=None)
@given(_ops)
def test_snapshot_matches_live_state_for_random_edit_sequences(ops):
    store = MemoryStore()
    step = 0
    seen = {step: {}}
    for op, key, record, gap in ops:
        step += gap
        if op == "put":
            store.put(key, record, step=step, reason="r", log_noop=True)
        elif key in store:
            (store.delete if op == "delete" else store.noop)(key, step=step, reason="r")
        seen[step] = dict(store.snapshot().records)
    for t, state in seen.items():
        assert dict(store.snapshot(t).records) == state
