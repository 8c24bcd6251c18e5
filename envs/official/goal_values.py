"""The values a reworded goal fills in, read back from a goal in the benchmark's template wording.

Why: ``--goal-style reworded`` fills a hand-written rewording (``envs/tasks/goal_rewordings.json``)
with the episode's values (colours, counts, ordinals, before/after). Our tasks give those from
their layout (``goal_values()``); the benchmark's envs give only the goal text. Its templates are
the ones our tasks use, so the values are read from the text by kind of value, never by task:

* colours: the colour words, in order (``colour``, ``colour2``) and how many distinct ones
  (``picks``: the containers a goal asks to pick, one per named cube);
* per-colour amounts: "two blue cubes and one red cube" (``amounts`` ...);
* a count of repetitions: "three times", "twice", "three round trips", none at all meaning once (``n`` ...,
  ``repeats``: one or many);
* an ordinal after "the" or "its": "the third time", "its fourth visit" (``nth`` ...); "first press
  the button" is an adverb, not an ordinal;
* ``when``: before or after.

Keys a task's rewordings do not use are harmless: a rewording fills only its own placeholders and a
variant is picked by its own ``when`` keys. ``tests/test_official_goal_values.py`` checks the reader
against ``goal_values()`` on every task's template goals, drawn from our own layouts.
"""

from __future__ import annotations

import re

from envs.core.rewording import amounts_values, count_values, ordinal_values
from subgoals.numbers import ADVERB_COUNTS, CARDINAL_WORDS, ORDINAL_PATTERN, parse_ordinal

__all__ = ["COLOUR_WORDS", "goal_values_from_text"]

COLOUR_WORDS = ("red", "green", "blue", "yellow", "purple", "orange", "pink", "white", "black", "brown", "grey",
                "gray", "cyan", "magenta")
_NUMBER = r"(\d+|" + "|".join(CARDINAL_WORDS) + r")"
_COLOUR = r"(" + "|".join(COLOUR_WORDS) + r")"
_AMOUNT = re.compile(rf"\b{_NUMBER} {_COLOUR} (?:cube|block)s?\b")
_COUNT = re.compile(rf"\b{_NUMBER} (?:times?|round trips?)\b|\b(" + "|".join(ADVERB_COUNTS) + r")\b")
_ORDINAL = re.compile(rf"\b(?:the|its) ({ORDINAL_PATTERN})\b")
_WHEN = re.compile(r"\b(before|after)\b")


def goal_values_from_text(goal: str) -> dict[str, object]:
    """Every value the goal states, under the placeholder names of :mod:`envs.core.rewording`."""
    text = goal.lower()
    values: dict[str, object] = {}
    distinct = list(dict.fromkeys(re.findall(rf"\b{_COLOUR}\b", text)))
    if distinct:
        values["colour"] = distinct[0]
        values["picks"] = len(distinct)
    if len(distinct) > 1:
        values["colour2"] = distinct[1]
    amounts = [(c, parse_ordinal(n)) for n, c in _AMOUNT.findall(text)]
    if amounts:
        values.update(amounts_values(amounts))
    count = _COUNT.search(text)
    n = 1 if count is None else parse_ordinal(count.group(1) or count.group(2))  # digits, cardinals, once/twice
    values.update(count_values(n), repeats="one" if n == 1 else "many")
    ordinal = _ORDINAL.search(text)
    if ordinal:
        values.update(ordinal_values(parse_ordinal(ordinal.group(1))))
    when = _WHEN.search(text)
    if when:
        values["when"] = when.group(1)
    return values
