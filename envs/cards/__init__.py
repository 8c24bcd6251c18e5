"""The task registry: one card per task (``envs/cards/<task>.py``), read by everything that lists tasks.

Importing this package imports every card module beside it, so a new task is one new card file
(and its env class); the task list, suites, seed codes, ood tiers and official history options
are all read from here (``envs.episodes``, ``envs.ood``, ``envs.official.slots``, ``envs``, the
campaign). An unknown task name is an error that lists the known ones.
"""

from __future__ import annotations

import importlib
import pkgutil

from envs.cards.card import SUITE_ORDER, TaskCard, register, registered

__all__ = ["SUITE_ORDER", "TaskCard", "all_cards", "card", "register", "suites"]

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name != "card":
        importlib.import_module(f"{__name__}.{_info.name}")


def all_cards() -> tuple[TaskCard, ...]:
    """Every registered card, in table order: by suite (:data:`SUITE_ORDER`), then rank."""
    return tuple(sorted(registered().values(), key=lambda c: (SUITE_ORDER.index(c.suite), c.rank)))


def suites() -> dict[str, tuple[str, ...]]:
    """Suite -> its task names, in table order."""
    return {s: tuple(c.name for c in all_cards() if c.suite == s) for s in SUITE_ORDER}


def card(task: str) -> TaskCard:
    cards = registered()
    if task not in cards:
        raise ValueError(f"unknown task {task!r} (known: {', '.join(c.name for c in all_cards())})")
    return cards[task]
