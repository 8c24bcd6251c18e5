"""The history-dependent slot of an official subgoal, and what the current view offers instead.

Our envs declare their slots in code (``task.history_slot()``); the official envs declare none, so
each task's card (``official_history_options``) names the multi_choice options whose argument only the past can settle, in
the same spirit as ours (README slot table). The alternatives are the oracle's grounded subgoal
re-pointed at every candidate object of that option (the option's ``available`` list in the
official env), each projected into the front image with the official env's own camera
(``robomme.robomme_env.utils.choice_action_mapping.project_world_to_pixel``), so the benchmark's
executor, which picks the candidate nearest the point, acts on exactly that object.

The Counting and Imitation tasks choose *between* options (pick again or press, which manner,
which way): their cards declare ``official_history_choices`` (:class:`~envs.cards.card.OfficialChoice`),
and at such a decision the alternatives are every offered option of the choice, each written as
the benchmark's own plan writes it (``task_list``'s ``subgoal_segment`` of the nearest step with that
option, live steps first) and grounded at each of its candidates, or at its plan step's object.
Why the plan's text: the executor maps the text back to the option (``map_action_text_to_option_label``
in spirit: ``envs.official.mapping.option_label``), so an alternative must read like a subgoal the
benchmark itself would give.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from envs.cards import all_cards
from envs.cards.card import OfficialChoice
from envs.core.base_task import HistorySlot
from envs.core.primitives import COLOURS
from envs.official.mapping import subgoal_point, with_point

Pixel = tuple[int, int]

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


HISTORY_CHOICES: dict[str, tuple[OfficialChoice, ...]] = {c.name: c.official_history_choices for c in all_cards()
                                                          if c.official_history_choices}
"""task -> the choices between its official options that only the past can settle."""


@dataclass(frozen=True)
class PlanStep:
    """One step of the official task plan (``unwrapped.task_list``), as a slot needs it.

    action: its option action text (``choice_label``); template: its subgoal with ``<>`` where a
    point goes (``subgoal_segment``); points: the projections of its objects (``segment``), in
    order, None where out of view; demonstration: played in the conditioning video, not live.
    """

    action: str
    template: str
    points: tuple[Pixel | None, ...] = ()
    demonstration: bool = False


@dataclass(frozen=True)
class OfferedOption:
    """An option of the current decision: its action text and, when it takes an object, the
    projected points of its candidates (None: it takes none) and their actor names (the official
    env's, ``cube_green_0``; empty where unknown)."""

    action: str
    candidates: tuple[Pixel | None, ...] | None = None
    names: tuple[str, ...] = ()


def _colours(words) -> set[str]:
    return {w for w in words if w in COLOURS}


def names_another_kind(text: str, name: str) -> bool:
    """``text`` names a colour and the actor ``name`` is of another one (``"pick up the green cube"``
    and ``cube_red_1``): an alternative re-pointed there would say one object and act on another."""
    said = _colours(re.findall(r"[a-z]+", text.lower()))
    own = _colours(re.split(r"[^a-z]+", name.lower()))
    return bool(said) and bool(own) and not (said & own)


def plan_phrases(plan: Sequence[PlanStep]) -> dict[str, str]:
    """The plan's phrase book: each step's subgoal (:func:`~envs.official.mapping.plan_phrase`) -> its
    option action, for the executor to map an alternative back to its option."""
    from envs.official.mapping import plan_phrase

    return {plan_phrase(s.template): s.action for s in plan if s.template and s.action}


def choice_of(task: str, action: str | None) -> OfficialChoice | None:
    """The declared choice of ``task`` that the option action ``action`` belongs to, if any."""
    return next((c for c in HISTORY_CHOICES.get(task, ()) if c.covers(action)), None)


def _fill(template: str, points: Sequence[Pixel | None]) -> str:
    text = template
    for p in points:
        if "<>" not in text:
            break
        if p is None:
            return template
        text = text.replace("<>", f"<{p[0]}, {p[1]}>", 1)
    return text


def _grounded(text: str, point: Pixel | None) -> str:
    """``text`` pointing at ``point``: its ``<>`` filled, its first point moved, or ``at <y, x>`` added."""
    if point is None:
        return text
    if "<>" in text:
        return _fill(text, [point])
    if subgoal_point(text) is not None:
        return with_point(text, point)
    return f"{text} at <{point[0]}, {point[1]}>"


def _plan_text(action: str, index: int, plan: Sequence[PlanStep]) -> PlanStep | None:
    """The plan step of ``action`` nearest the current ``index``: the next live one, else the last
    live one before it, else a demonstrated one."""
    live = [(i, s) for i, s in enumerate(plan) if s.action == action and not s.demonstration]
    ahead = [s for i, s in live if i >= index]
    if ahead:
        return ahead[0]
    if live:
        return live[-1][1]
    return next((s for s in plan if s.action == action), None)


def _own_candidate(oracle_text: str, candidates: Sequence[Pixel | None]) -> int | None:
    """Index of the candidate the oracle's text points at (nearest its point), or None without one."""
    point = subgoal_point(oracle_text)
    return None if point is None else nearest(point, candidates)


def _step_naming(action: str, point: Pixel, index: int, plan: Sequence[PlanStep], tol_px: float = 6.0) -> PlanStep | None:
    """The live plan step of ``action`` whose own object is the candidate at ``point`` (its first
    projected point within ``tol_px``), nearest the current ``index`` (the next one, else the last
    before it); None when the plan never acts on that candidate with this option."""
    live = [(i, s) for i, s in enumerate(plan) if s.action == action and not s.demonstration and s.points
            and s.points[0] is not None and (s.points[0][0] - point[0]) ** 2 + (s.points[0][1] - point[1]) ** 2 <= tol_px ** 2]
    ahead = [s for i, s in live if i >= index]
    return ahead[0] if ahead else (live[-1][1] if live else None)


def choice_slot(choice: OfficialChoice, oracle_action: str, oracle_text: str, index: int,
                plan: Sequence[PlanStep], offered: Sequence[OfferedOption]) -> HistorySlot | None:
    """The slot of a decision between options, or None when this decision is not one the choice
    leaves to the past (see :class:`OfficialChoice`) or fewer than two alternatives are offered.

    ``index``: the oracle's current step in ``plan`` (``current_task_index``). The oracle's own
    option is written as the oracle's text, re-pointed at each of its candidates.
    """
    if not choice.covers(oracle_action):
        return None
    earlier = any(choice.covers(s.action) and not s.demonstration for s in plan[:index])
    if (choice.decisions == "after_first" and not earlier) or (choice.decisions == "first" and earlier):
        return None
    alts: list[str] = []
    for opt in offered:
        if not choice.covers(opt.action):
            continue
        if opt.action == oracle_action:
            base, own = oracle_text, ()
        else:
            step = _plan_text(opt.action, index, plan)
            base, own = (opt.action, ()) if step is None else (step.template, step.points)
        if opt.candidates is not None:
            own = _own_candidate(oracle_text, opt.candidates) if opt.action == oracle_action else None
            for i, p in enumerate(opt.candidates):
                if p is None:
                    continue
                step = None if i == own else _step_naming(opt.action, p, index, plan)
                if step is None and i != own and i < len(opt.names) and names_another_kind(base, opt.names[i]):
                    # "pick up the green cube" pointing at a red one is no memoryless guess: the goal
                    # and the current view settle the colour; only the plan's own words for that
                    # cube ("pick up the first blue cube") offer it
                    continue
                # a candidate the plan names in its own words ("the left-side target") is offered in
                # those words, never in another step's ("the right-side target" pointing at the left one)
                alts.append(_grounded(base, p) if step is None else _fill(step.template, (p, *step.points[1:])))
        else:
            alts.append(_fill(base, own) if "<>" in base else base)
    if not any(opt.action == oracle_action for opt in offered):
        alts.insert(0, oracle_text)  # the oracle's own option always stays among the alternatives
    alts = list(dict.fromkeys(a for a in alts if "<>" not in a))
    return HistorySlot(choice.name, tuple(alts)) if len(alts) >= 2 else None


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
