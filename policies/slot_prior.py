"""The best memoryless predictor's prior: at a history slot, which alternative to choose without history.

The no-memory arm draws uniformly among a slot's alternatives at every decision, a lower bound on
what a predictor without memory achieves. A sensible memoryless predictor would instead use what
it *can* see at the decision: the task, the kind of decision (the slot's name), how many distinct
alternatives the view offers, and the number the goal states ("three times", "the second
target"). Its prior is fitted on ``train`` episodes (``scripts/fit_slot_prior.py``): for each such
key, how often each alternative's position was the right one. Two ways to use it, chosen per task
by episode success on ``train``:

- ``argmax``: always the most frequent right position (a deterministic predictor);
- ``matched``: a position drawn with the frequencies it was right (a stochastic one: "stop with
  probability 1/n", the best a predictor that cannot count its own repetitions can do).

The key never holds anything the current view and the goal text do not show: no count of past
decisions, no step of the episode.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from subgoals.numbers import parse_ordinal

MODES = ("argmax", "matched")
DEFAULT_PATH = Path(__file__).resolve().parent / "priors" / "slot_prior.json"


def goal_number(goal: str) -> int | None:
    """The first count or ordinal the goal states ("three times", "the second target"), or None."""
    for word in re.findall(r"[a-z0-9]+", goal.lower()):
        n = parse_ordinal(word)
        if n is not None:
            return n
    return None


def slot_key(slot: str, n_options: int, number: int | None) -> str:
    """What a memoryless predictor sees at a decision, as one string (the JSON's key)."""
    return f"{slot}|{n_options}|{'-' if number is None else number}"


@dataclass
class SlotPrior:
    """Counts of the right alternative's position per task and :func:`slot_key`, and each task's mode."""

    counts: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=dict)
    fit: dict = field(default_factory=dict)
    """Where the prior came from (episodes, seed, commit, per-task success of each mode)."""

    def add(self, task: str, key: str, n_options: int, right: int) -> None:
        if not 0 <= right < n_options:
            raise ValueError(f"right position {right} is not among {n_options} alternatives ({task}, {key})")
        row = self.counts.setdefault(task, {}).setdefault(key, [0] * n_options)
        row[right] += 1

    def choose(self, task: str, key: str, n_options: int, rng: np.random.Generator, mode: str | None = None) -> int:
        """The position to choose; uniform where the prior has never seen this key (nothing to go on)."""
        mode = mode or self.modes.get(task, "matched")
        if mode not in MODES:
            raise ValueError(f"unknown prior mode {mode!r} (known: {', '.join(MODES)})")
        row = self.counts.get(task, {}).get(key)
        if row is None or len(row) != n_options or sum(row) == 0:
            return int(rng.integers(n_options))
        freq = np.asarray(row, float)
        if mode == "argmax":
            return int(np.argmax(freq))  # ties: the first position
        return int(rng.choice(n_options, p=freq / freq.sum()))

    def to_dict(self) -> dict:
        return {"counts": self.counts, "modes": self.modes, "fit": self.fit}

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: Path | str) -> "SlotPrior":
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(
                f"slot prior {path} not found: fit one with `python -m scripts.fit_slot_prior` (train episodes), "
                "or pass --slot-prior PATH")
        d = json.loads(path.read_text())
        bad = {t: m for t, m in d.get("modes", {}).items() if m not in MODES}
        if bad:
            raise ValueError(f"slot prior {path}: unknown modes {bad} (known: {', '.join(MODES)})")
        return cls(counts=d.get("counts", {}), modes=d.get("modes", {}), fit=d.get("fit", {}))
