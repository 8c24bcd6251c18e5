"""Where the backends disagree: pairs one backend solved and the other did not, by kind of reason."""

from __future__ import annotations

from experiments.reporting.disagreement_section import disagreement_section, disagreements


def row(backend, condition, episode, success, status=None, **extra):
    return {"task": "PickXtimes", "split": "test", "episode": episode, "condition": condition, "seed": 7,
            "backend": backend, "success": success, "status": status or ("success" if success else "fail"),
            "steps": 100, **extra}


WRONG_COUNT = {"memory": {"assessment": {"by_kind": {"count": {"asked": 4, "wrong": 4}}, "log": []}}}
BLIND = {"history_audit": {"decisions": 5, "wrong": 0, "silent_wrong": 3}}


def test_a_pair_is_listed_with_the_failing_side_and_the_kind_its_row_gives():
    official = [row("robomme", "memory", 0, True), row("robomme", "memory", 1, False, **WRONG_COUNT),
                row("robomme", "oracle", 0, True), row("robomme", "no-memory", 2, True)]
    ours = [row("robomem", "memory", 0, False, "timeout", history_audit={"decisions": 3}),
            row("robomem", "memory", 1, True), row("robomem", "oracle", 0, True),
            row("robomem", "no-memory", 2, False, **BLIND)]
    found = {(d["condition"], d["episode"]): (d["failed_on"], d["kind"]) for d in disagreements(official, ours)}
    assert found == {("memory", 0): ("ours", "timing"), ("memory", 1): ("official", "reader"),
                     ("no-memory", 2): ("ours", "slot draw")}
    md, records = disagreement_section(official, ours)
    assert "| **all** |  | 1 | 2 |" in md and len(records) == 3


def test_errors_and_agreement_are_never_a_disagreement():
    official = [row("robomme", "memory", 0, False, "error"), row("robomme", "memory", 1, False)]
    ours = [row("robomem", "memory", 0, True), row("robomem", "memory", 1, False)]
    assert disagreements(official, ours) == []
    assert "agree" in disagreement_section(official, ours)[0]
