"""A task's card: everything the rest of the project needs to know about a task, declared once.

Why: a task's identity used to live in ten tables keyed by its name (the class path, the suite, the
seed code, the ood tiers, the official backend's history options, the campaign's task count...);
adding or renaming a task meant finding them all. Now each task has one card, in its own module
under ``envs/cards/`` where :func:`register` files it, and every list of tasks is read from the
registry (``envs.cards.all_cards``). The cards import nothing heavy (no simulator), so the report
and the campaign can read them without building a scene; the class they name is imported only when
an env is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Union

OptionValue = Union[int, float, str, tuple[int, int]]

SUITE_ORDER: tuple[str, ...] = ("counting", "permanence", "reference", "imitation")
"""The benchmark's four suites, in the order tables list them."""


DECISIONS = ("all", "after_first", "first")


@dataclass(frozen=True)
class OfficialChoice:
    """A history-dependent choice *between* official multi_choice options (repeat or stop, which
    manner, which way): the slot's name, the option actions it chooses among, and which of the
    decisions whose oracle action is one of them only the past can settle.

    actions: option action texts as the benchmark offers them; one ending in ``*`` stands for every
        offered action with that prefix (PatternLock's ``move <direction>`` options).
    decisions: ``"all"`` of them; ``"after_first"`` (the first is settled by the goal alone: the
        first pick of a count); or ``"first"`` only (the manner chosen once, then followed).
    """

    name: str
    actions: tuple[str, ...]
    decisions: Literal["all", "after_first", "first"] = "all"

    def __post_init__(self) -> None:
        if self.decisions not in DECISIONS:
            raise ValueError(f"official choice {self.name!r}: unknown decisions {self.decisions!r} "
                             f"(known: {', '.join(DECISIONS)})")
        if not self.actions:
            raise ValueError(f"official choice {self.name!r} chooses among no actions")

    def covers(self, action: str | None) -> bool:
        """Whether the option action ``action`` is one this choice chooses among."""
        a = action or ""
        return any(a.startswith(x[:-1]) if x.endswith("*") else a == x for x in self.actions)


@dataclass(frozen=True)
class TaskCard:
    """One task, as the harness sees it.

    name: the benchmark's task name (``robomme/<name>-v0``).
    suite: one of :data:`SUITE_ORDER`; ``rank``: its place in the suite's listing (1 = first).
    code: the benchmark's task code in the seed formula (``split base + code * M + 100 * episode``).
    env_class: ``"module:Class"`` of our ManiSkill env.
    ood_tiers: per ood tier (1, 2, ...), the sampler options beyond ``hard``; a ``(lo, hi)`` range
        is drawn uniformly, ends included (``envs/ood.py``).
    official_history_options: on the official backend, ``{multi_choice option text: slot name}`` of
        the options whose argument only the past can settle (``envs/official/slots.py``).
    official_history_choices: on the official backend, the choices between options that only the
        past can settle (:class:`OfficialChoice`; the Counting and Imitation tasks).
    """

    name: str
    suite: str
    rank: int
    code: int
    env_class: str
    ood_tiers: tuple[Mapping[str, OptionValue], ...] = ()
    official_history_options: Mapping[str, str] = field(default_factory=dict)
    official_history_choices: tuple[OfficialChoice, ...] = ()

    def __post_init__(self) -> None:
        if self.suite not in SUITE_ORDER:
            raise ValueError(f"task card {self.name!r}: unknown suite {self.suite!r} (known: {', '.join(SUITE_ORDER)})")
        if ":" not in self.env_class:
            raise ValueError(f"task card {self.name!r}: env_class {self.env_class!r} is not 'module:Class'")


_REGISTRY: dict[str, TaskCard] = {}


def register(card: TaskCard) -> TaskCard:
    """File ``card``; a second card with the same name, code or suite rank is an error naming both."""
    for other in _REGISTRY.values():
        if other.name == card.name and other != card:
            raise ValueError(f"two task cards named {card.name!r}")
        if other.name != card.name and other.code == card.code:
            raise ValueError(f"task cards {other.name!r} and {card.name!r} share the code {card.code}")
        if other.name != card.name and (other.suite, other.rank) == (card.suite, card.rank):
            raise ValueError(f"task cards {other.name!r} and {card.name!r} share rank {card.rank} of suite {card.suite!r}")
    _REGISTRY[card.name] = card
    return card


def registered() -> dict[str, TaskCard]:
    return dict(_REGISTRY)
