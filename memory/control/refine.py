"""Refine every verb: the ablation that re-grounds every point the composer proposes.

The full method lets memory touch a proposal only where a slot depends on the past. The paper's
"refine every verb" control instead re-grounds the point of every noun phrase in the current view,
whatever the verb (presses and places too), snapping it to the centre of the nearest coloured blob
of the phrase's stated colour (any colour when it states none) within ``radius_px``. It needs no
history at all: it measures what a memory costs when it edits subgoals that did not need it.
"""

from __future__ import annotations

from memory.control.access import ReadTrace
from memory.contract.frames import Frame
from memory.perception.blobs import find_blobs
from memory.language.words import COLOUR_WORDS, colour_of
from subgoals.grammar import SubgoalParseError, format_subgoal, parse_subgoal

REFINE = "refine"


def refine_every_point(text: str, frame: Frame, radius_px: float = 20.0) -> tuple[str, list[ReadTrace]]:
    """``text`` with each noun phrase's point moved to the nearest matching blob, and a trace per move."""
    if frame.rgb is None:
        return text, []
    try:
        sg = parse_subgoal(text)
    except SubgoalParseError:
        return text, []
    traces: list[ReadTrace] = []
    current = sg
    for i, np_ in enumerate(sg.noun_phrases):
        if np_.point is None:
            continue
        colour = colour_of(np_.modifiers)
        blobs = find_blobs(frame.rgb, (colour,) if colour else COLOUR_WORDS)
        y, x = np_.point.y, np_.point.x
        near = [b for b in blobs if b.distance((y, x)) <= radius_px]
        if not near:
            continue
        best = min(near, key=lambda b: b.distance((y, x)))
        point = best.point
        if point == np_.point:
            continue
        current = current.with_noun_phrase_point(i, point)
        new_text = format_subgoal(current)
        traces.append(ReadTrace(frame.step, f"refine:{np_.text}", text, f"{best.colour} blob at {point}", None, None,
                                new_text, False, f"{REFINE}: nearest {best.colour} blob in the current view", None))
    return (format_subgoal(current) if traces else text), traces
