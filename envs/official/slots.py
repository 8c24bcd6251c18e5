"""The history-dependent slot of an official subgoal, and what the current view offers instead.

Our envs declare their slots in code (``task.history_slot()``); the official envs declare none, so
each task's card (``official_history_options``) names the multi_choice options whose argument only the past can settle, in
the same spirit as ours (README slot table). The alternatives are the oracle's grounded subgoal
re-pointed at every candidate object of that option (the option's ``available`` list in the
official env), each projected into the front image with the official env's own camera
(``robomme.robomme_env.utils.choice_action_mapping.project_world_to_pixel``), so the benchmark's
executor, which picks the candidate nearest the point, acts on exactly that object.

Tasks absent from the table have no slot on this backend yet: there the history-blind composer
proposes the oracle's subgoal (the Counting and Imitation tasks; documented in the README).
"""

from __future__ import annotations

from collections.abc import Sequence

from envs.cards import all_cards
from envs.core.base_task import HistorySlot
from envs.official.mapping import subgoal_point, with_point

HISTORY_OPTIONS: dict[str, dict[str, str]] = {c.name: dict(c.official_history_options) for c in all_cards()
                                              if c.official_history_options}
"""task -> {official option action text: slot name}."""


def slot_name(task: str, action_text: str | None) -> str | None:
    """The slot the option ``action_text`` fills in ``task``, or None when it is not history-dependent."""
    return HISTORY_OPTIONS.get(task, {}).get(action_text or "")


def history_slot(task: str, action_text: str | None, oracle_text: str,
                 candidate_points: Sequence[tuple[int, int] | None]) -> HistorySlot | None:
    """The slot of the oracle's current subgoal, its alternatives re-pointed at every visible candidate.

    ``candidate_points``: the ``(y, x)`` of each candidate of the option in the front image (None:
    out of view, skipped). The oracle's own text is kept as the alternative of its own object.
    """
    name = slot_name(task, action_text)
    if name is None or subgoal_point(oracle_text) is None:
        return None
    alts = tuple(dict.fromkeys(with_point(oracle_text, p) for p in candidate_points if p is not None))
    return HistorySlot(name, alts or (oracle_text,))


def nearest(point: tuple[int, int], candidate_points: Sequence[tuple[int, int] | None]) -> int | None:
    """Index of the candidate whose projection is nearest ``point`` (the benchmark executor's rule)."""
    best, best_d = None, None
    for i, p in enumerate(candidate_points):
        if p is None:
            continue
        d = (p[0] - point[0]) ** 2 + (p[1] - point[1]) ** 2
        if best_d is None or d < best_d:
            best, best_d = i, d
    return best
