"""Reworded goals: the project's hand-written rewordings of each task's goal, instantiated per episode.

Why: a memory that works only with the benchmark's template wording is a set of per-task scripts.
``--goal-style reworded`` gives every composer, the policy and the memory one rewording of the
episode's goal instead of the template, drawn from the episode's ``goal`` stream
(:mod:`experiments.loop.streams`), so the same config and seed always see the same wording.

The rewordings live as data in ``envs/tasks/goal_rewordings.json``: per task a list of variants
(``when``: which episodes a variant fits, e.g. ``{"picks": 2}``), each with ``dev`` rewordings and
``held_out`` ones that the specifier must not be tuned on. Placeholders (:data:`GOAL_PLACEHOLDERS`)
are filled from the task's :meth:`goal_values` (the episode's colours, counts, ordinals).
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np

from subgoals.numbers import number_word, ordinal_digits, ordinal_word, times_phrase

__all__ = [
    "GOAL_PLACEHOLDERS",
    "GOAL_STYLES",
    "STYLE_POOLS",
    "REWORDINGS_PATH",
    "Variant",
    "amounts_values",
    "count_values",
    "draw_rewording",
    "fill",
    "ordinal_values",
    "pool_of",
    "rewordings",
    "variant_for",
]

GoalStyle = Literal["template", "reworded", "reworded-held-out", "reworded-probe"]
GOAL_STYLES: tuple[str, ...] = ("template", "reworded", "reworded-held-out", "reworded-probe")
STYLE_POOLS: dict[str, str] = {"reworded": "all", "reworded-held-out": "held_out", "reworded-probe": "probe"}
"""The pool of rewordings each reworded goal style draws from: ``reworded`` every development and
held-out wording (what Results v1 ran), ``reworded-held-out`` the held-out ones only (the specifier
was never tuned on them), ``reworded-probe`` the probe set only (written after the held-out set had
been evaluated once, and never drawn before this style)."""
REWORDINGS_PATH = Path(__file__).resolve().parent.parent / "tasks" / "goal_rewordings.json"

GOAL_PLACEHOLDERS: dict[str, str] = {
    "colour": "the colour of the (first) cube the goal names",
    "colour2": "the colour of the second cube the goal names",
    "n": "a count in digits (3)",
    "n_word": "a count as a word (three)",
    "times": "a count as an adverb: once, twice, three times",
    "times_digit": "a count in digits with 'time(s)': 1 time, 3 times",
    "nth": "an ordinal word (second)",
    "nth_digit": "an ordinal in digits (2nd)",
    "when": "before or after",
    "amounts": "per-colour counts: two blue cubes and one red cube",
    "amounts_digits": "per-colour counts in digits: 2 blue cubes and 1 red cube",
    "amounts_blocks": "per-colour counts with another noun: two blue blocks and one red block",
}
"""Every placeholder a rewording may use, with what it stands for."""


@dataclass(frozen=True)
class Variant:
    """One set of rewordings that fits the episodes whose goal values match ``when``."""

    when: tuple[tuple[str, object], ...]
    dev: tuple[str, ...]
    held_out: tuple[str, ...]
    probe: tuple[str, ...] = ()
    """Written after ``held_out`` had been evaluated once: a second unseen set for the report, never drawn."""

    def fits(self, values: dict[str, object]) -> bool:
        return all(values.get(k) == v for k, v in self.when)

    @property
    def all(self) -> tuple[str, ...]:
        return self.dev + self.held_out


@lru_cache(maxsize=1)
def _load(path: str) -> dict[str, tuple[Variant, ...]]:
    data = json.loads(Path(path).read_text())
    out: dict[str, tuple[Variant, ...]] = {}
    for task, variants in data.items():
        if task.startswith("_"):
            continue
        out[task] = tuple(
            Variant(tuple(sorted(v.get("when", {}).items())), tuple(v["dev"]), tuple(v["held_out"]), tuple(v.get("probe", ())))
            for v in variants
        )
    return out


def rewordings(path: Path = REWORDINGS_PATH) -> dict[str, tuple[Variant, ...]]:
    """``{task: variants}`` read from the data file (cached)."""
    return _load(str(path))


def variant_for(task: str, values: dict[str, object], path: Path = REWORDINGS_PATH) -> Variant:
    """The first variant of ``task`` whose ``when`` matches ``values``.

    Raises:
        KeyError: the task has no rewordings, or none fits these values.
    """
    for variant in rewordings(path).get(task, ()):
        if variant.fits(values):
            return variant
    raise KeyError(f"no rewording of {task} fits goal values {values!r}")


def placeholders_of(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def fill(text: str, values: dict[str, object]) -> str:
    """``text`` with its placeholders replaced by ``values``.

    Raises:
        KeyError: a placeholder the values do not give (a rewording that does not fit its task).
    """
    missing = placeholders_of(text) - set(values)
    if missing:
        raise KeyError(f"rewording {text!r} needs {sorted(missing)}, the episode gives {sorted(values)}")
    return text.format(**{k: v for k, v in values.items() if isinstance(k, str)})


def draw_rewording(task: str, values: dict[str, object], seed: int, pool: str = "all") -> str:
    """One rewording of ``task``'s goal for an episode, drawn with ``seed`` (the episode's goal stream).

    ``pool``: ``"all"`` (dev and held-out; what ``--goal-style reworded`` uses), ``"dev"``, ``"held_out"`` or
    ``"probe"`` (:data:`STYLE_POOLS`).
    """
    variant = variant_for(task, values)
    texts = {"all": variant.all, "dev": variant.dev, "held_out": variant.held_out, "probe": variant.probe}[pool]
    if not texts:
        raise KeyError(f"{task} has no {pool} rewordings for goal values {values!r}")
    k = int(np.random.default_rng(seed).integers(len(texts)))
    return fill(texts[k], values)


def _pattern(text: str) -> re.Pattern:
    """A rewording as a regular expression: its words literally, each placeholder any text."""
    parts = []
    for literal, name, _, _ in string.Formatter().parse(text):
        parts.append(re.escape(literal))
        if name:
            parts.append(".+?")
    return re.compile("".join(parts), re.IGNORECASE)


def pool_of(task: str, goal: str, path: Path = REWORDINGS_PATH) -> str | None:
    """Which pool of ``task``'s rewordings ``goal`` was drawn from (``"dev"``, ``"held_out"`` or
    ``"probe"``), or None when it is none of them (a template goal, another task's wording).

    Why: a row records the goal text, not the pool; the report reads the pool back from the text so
    that a sentence such as "every goal was a held-out paraphrase" can be checked against the rows.
    A text that fits rewordings of two pools is ambiguous and raises, naming both.
    """
    found: set[str] = set()
    for variant in rewordings(path).get(task, ()):
        for pool, texts in (("dev", variant.dev), ("held_out", variant.held_out), ("probe", variant.probe)):
            if any(_pattern(t).fullmatch(goal.strip()) for t in texts):
                found.add(pool)
    if len(found) > 1:
        raise ValueError(f"{task} goal {goal!r} fits rewordings of several pools: {sorted(found)}")
    return found.pop() if found else None


# --------------------------------------------------------------------------- value helpers


def count_values(n: int) -> dict[str, object]:
    """Placeholders of a count ``n``: ``n``, ``n_word``, ``times``, ``times_digit``."""
    return {"n": str(n), "n_word": number_word(n), "times": times_phrase(n), "times_digit": f"{n} time{'s' if n != 1 else ''}"}


def ordinal_values(k: int) -> dict[str, object]:
    """Placeholders of an ordinal ``k``: ``nth`` (second) and ``nth_digit`` (2nd)."""
    return {"nth": ordinal_word(k), "nth_digit": ordinal_digits(k)}


def amounts_values(pairs: list[tuple[str, int]]) -> dict[str, object]:
    """Placeholders of per-colour counts ``[(colour, n), ...]`` in goal order."""

    def listed(parts: list[str]) -> str:
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]

    def amount(c: str, n: int, noun: str, digits: bool) -> str:
        return f"{n if digits else number_word(n)} {c} {noun}{'s' if n > 1 else ''}"

    return {
        "amounts": listed([amount(c, n, "cube", False) for c, n in pairs]),
        "amounts_digits": listed([amount(c, n, "cube", True) for c, n in pairs]),
        "amounts_blocks": listed([amount(c, n, "block", False) for c, n in pairs]),
    }
