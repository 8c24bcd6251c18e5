"""Typed, episode-scoped record stores with an edit history.

Why a history and not just a dict: every change to memory is an :class:`Edit`
(ADD, UPDATE, DELETE or NOOP) carrying the step it happened at and the reason the
tool gave. That makes two things cheap that matter for a research tool:

* *Auditing.* ``history(key)`` tells how a record came to be what it is, so a wrong
  read can be traced to the frame whose evidence caused it.
* *Time-restricted views.* ``snapshot(t)`` replays the log up to step ``t`` and returns
  memory exactly as it was then, so an analysis can ask "what did the memory believe
  when the subgoal was proposed?" after the episode, without the future leaking in.

Records live in five typed stores (entity, relation, progress, trajectory, layout),
chosen by the record's type. A key names one record across all stores, so
``history(key)`` needs no store argument. Steps must not go backwards: the log is the
truth and an out-of-order edit would make ``snapshot`` ambiguous, so it is refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

from memory.store.records import (
    EntityRecord,
    LayoutRecord,
    ProgressRecord,
    Record,
    RelationRecord,
    TrajectoryRecord,
    record_from_dict,
)
from subgoals.numbers import as_integer

__all__ = ["Edit", "EditOp", "MemoryStore", "Snapshot", "StoreKind", "store_kind_of"]


class EditOp(str, Enum):
    """The four edit operations of the lifecycle."""

    ADD = "add"
    UPDATE = "update"
    DELETE = "delete"
    NOOP = "noop"


class StoreKind(str, Enum):
    """The typed stores."""

    ENTITY = "entity"
    RELATION = "relation"
    PROGRESS = "progress"
    TRAJECTORY = "trajectory"
    LAYOUT = "layout"


_KIND_OF_TYPE: dict[type, StoreKind] = {
    EntityRecord: StoreKind.ENTITY,
    RelationRecord: StoreKind.RELATION,
    ProgressRecord: StoreKind.PROGRESS,
    TrajectoryRecord: StoreKind.TRAJECTORY,
    LayoutRecord: StoreKind.LAYOUT,
}


def store_kind_of(record: Record) -> StoreKind:
    """The store a record belongs to.

    Raises:
        TypeError: for anything that is not one of the record types.
    """
    try:
        return _KIND_OF_TYPE[type(record)]
    except KeyError:
        raise TypeError(f"not a memory record: {record!r}") from None


@dataclass(frozen=True)
class Edit:
    """One logged change. ``before``/``after`` are the record on either side (``None`` where absent)."""

    op: EditOp
    key: str
    before: Record | None
    after: Record | None
    step: int
    reason: str
    kind: StoreKind

    def to_dict(self) -> dict:
        return {
            "op": self.op.value,
            "key": self.key,
            "kind": self.kind.value,
            "step": self.step,
            "reason": self.reason,
            "before": None if self.before is None else self.before.to_dict(),
            "after": None if self.after is None else self.after.to_dict(),
        }


@dataclass(frozen=True)
class Snapshot:
    """Memory as it stood at ``step``: an immutable mapping of key -> record, grouped by store on demand."""

    step: int
    records: Mapping[str, Record] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", MappingProxyType(dict(self.records)))

    def get(self, key: str) -> Record | None:
        return self.records.get(key)

    def of_kind(self, kind: StoreKind | str) -> dict[str, Record]:
        kind = StoreKind(kind)
        return {k: r for k, r in self.records.items() if store_kind_of(r) is kind}

    def to_dict(self) -> dict:
        return {
            "step": self.step,
            "records": {kind.value: {k: r.to_dict() for k, r in self.of_kind(kind).items()} for kind in StoreKind},
        }

    @classmethod
    def from_dict(cls, data: dict) -> Snapshot:
        records: dict[str, Record] = {}
        for by_key in data["records"].values():
            for key, rec in by_key.items():
                records[key] = record_from_dict(rec)
        return cls(step=int(data["step"]), records=records)


class MemoryStore:
    """Records by key, in typed stores, changed only through logged edits.

    Typical tool usage is :meth:`put` (add, update or noop as appropriate); the explicit
    :meth:`add`, :meth:`update`, :meth:`delete` and :meth:`noop` are there when a tool
    means one operation and wants an error if the state disagrees.
    """

    def __init__(self) -> None:
        self._records: dict[str, Record] = {}
        self._log: list[Edit] = []
        self._history: dict[str, list[Edit]] = {}
        self._last_step: int | None = None

    # ----------------------------------------------------------------- writing

    def _check_step(self, step: int) -> int:
        step = as_integer(step, TypeError, f"edit step must be an int, got {step!r}")
        if self._last_step is not None and step < self._last_step:
            raise ValueError(
                f"edit at step {step} comes after an edit at step {self._last_step}; "
                "frames must carry the episode's increasing step counter"
            )
        return step

    def _append(self, op: EditOp, key: str, before, after, step: int, reason: str) -> Edit:
        if not isinstance(key, str) or not key:
            raise ValueError(f"record key must be a non-empty string, got {key!r}")
        step = self._check_step(step)
        record = after if after is not None else before
        edit = Edit(op=op, key=key, before=before, after=after, step=step, reason=str(reason), kind=store_kind_of(record))
        self._log.append(edit)
        self._history.setdefault(key, []).append(edit)
        self._last_step = step
        if op in (EditOp.ADD, EditOp.UPDATE):
            self._records[key] = after
        elif op is EditOp.DELETE:
            del self._records[key]
        return edit

    def add(self, key: str, record: Record, *, step: int, reason: str) -> Edit:
        """Create ``key``. Raises ``KeyError`` if it already exists."""
        store_kind_of(record)
        if key in self._records:
            raise KeyError(f"cannot ADD {key!r}: it already exists (use update or put)")
        return self._append(EditOp.ADD, key, None, record, step, reason)

    def update(self, key: str, record: Record, *, step: int, reason: str) -> Edit:
        """Replace ``key``'s record. Raises ``KeyError`` if absent, ``TypeError`` if the store type would change."""
        before = self._records.get(key)
        if before is None:
            raise KeyError(f"cannot UPDATE {key!r}: no such record")
        if store_kind_of(record) is not store_kind_of(before):
            raise TypeError(
                f"cannot UPDATE {key!r} from a {store_kind_of(before).value} record to a {store_kind_of(record).value} one"
            )
        return self._append(EditOp.UPDATE, key, before, record, step, reason)

    def delete(self, key: str, *, step: int, reason: str) -> Edit:
        """Remove ``key`` (its history stays). Raises ``KeyError`` if absent."""
        before = self._records.get(key)
        if before is None:
            raise KeyError(f"cannot DELETE {key!r}: no such record")
        return self._append(EditOp.DELETE, key, before, None, step, reason)

    def noop(self, key: str, *, step: int, reason: str) -> Edit:
        """Log that evidence about ``key`` was checked and confirmed the record unchanged."""
        before = self._records.get(key)
        if before is None:
            raise KeyError(f"cannot NOOP {key!r}: no such record")
        return self._append(EditOp.NOOP, key, before, before, step, reason)

    def put(self, key: str, record: Record, *, step: int, reason: str, log_noop: bool = False) -> Edit | None:
        """Upsert: ADD if absent, UPDATE if different, else NOOP (logged only with ``log_noop``)."""
        before = self._records.get(key)
        if before is None:
            return self.add(key, record, step=step, reason=reason)
        if before != record:
            return self.update(key, record, step=step, reason=reason)
        return self.noop(key, step=step, reason=reason) if log_noop else None

    def reset(self) -> None:
        """Forget everything: records, history and the step clock (called at every episode start)."""
        self._records.clear()
        self._log.clear()
        self._history.clear()
        self._last_step = None

    # ----------------------------------------------------------------- reading

    def get(self, key: str) -> Record | None:
        return self._records.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._records

    def __len__(self) -> int:
        return len(self._records)

    def keys(self) -> list[str]:
        return list(self._records)

    def items(self, kind: StoreKind | str | None = None) -> Iterator[tuple[str, Record]]:
        """(key, record) pairs in first-added order, optionally of one store only."""
        want = None if kind is None else StoreKind(kind)
        for key, record in self._records.items():
            if want is None or store_kind_of(record) is want:
                yield key, record

    def entities(self) -> dict[str, EntityRecord]:
        return dict(self.items(StoreKind.ENTITY))  # type: ignore[arg-type]

    def relations(self) -> dict[str, RelationRecord]:
        return dict(self.items(StoreKind.RELATION))  # type: ignore[arg-type]

    def progress(self) -> dict[str, ProgressRecord]:
        return dict(self.items(StoreKind.PROGRESS))  # type: ignore[arg-type]

    def trajectories(self) -> dict[str, TrajectoryRecord]:
        return dict(self.items(StoreKind.TRAJECTORY))  # type: ignore[arg-type]

    def layout(self) -> dict[str, LayoutRecord]:
        return dict(self.items(StoreKind.LAYOUT))  # type: ignore[arg-type]

    def history(self, key: str) -> tuple[Edit, ...]:
        """Every edit ever made to ``key`` this episode, oldest first (empty if none)."""
        return tuple(self._history.get(key, ()))

    def edits(self) -> tuple[Edit, ...]:
        """The whole log, in the order edits were made."""
        return tuple(self._log)

    @property
    def last_step(self) -> int | None:
        return self._last_step

    def snapshot(self, step: int | None = None) -> Snapshot:
        """Memory exactly as it was after every edit at or before ``step`` (``None``: now).

        Built by replaying the log from empty, so it depends on nothing but the history.
        """
        if step is None:
            return Snapshot(step=self._last_step if self._last_step is not None else -1, records=self._records)
        state: dict[str, Record] = {}
        for edit in self._log:
            if edit.step > step:
                break  # steps never decrease along the log
            if edit.op in (EditOp.ADD, EditOp.UPDATE):
                state[edit.key] = edit.after  # type: ignore[assignment]
            elif edit.op is EditOp.DELETE:
                state.pop(edit.key, None)
        return Snapshot(step=step, records=state)

    def to_dict(self) -> dict:
        """Current state plus the full edit log, JSON-serialisable."""
        return {"state": self.snapshot().to_dict(), "edits": [e.to_dict() for e in self._log]}
