"""What the generated-block markers of the docs share: their ``key=value`` arguments, the
``episodes=LO:HI`` range, and the rows a marker selects from a published run.

Why one module: results blocks (``readme_tables``) and quoted figures (``figures``) take the same
``stage=``, ``split=`` and ``episodes=`` arguments, and must select the same rows for them, or a
figure quoted beside a table would be computed over other episodes than the table shows.
"""

from __future__ import annotations

import re

from experiments.reporting.campaign import stage_rows

_ARG = re.compile(r"(\w+)=(\S+)")


def marker_args(args: str) -> dict[str, str]:
    """The ``key=value`` pairs of a marker's argument text."""
    return dict(_ARG.findall(args))


def episode_range(value: str, where: str) -> tuple[int, int]:
    """``"LO:HI"`` as a half-open range; ``where`` starts the error message (the marker it is in)."""
    m = re.fullmatch(r"(\d+):(\d+)", value)
    if not m or int(m.group(1)) >= int(m.group(2)):
        raise ValueError(f"{where}: episodes= takes LO:HI (half-open, LO < HI)")
    return int(m.group(1)), int(m.group(2))


def select_rows(rows: list, name: str, stages: tuple[str, ...] | None, split: str | None,
                episodes: tuple[int, int] | None) -> list:
    """The rows of the published run ``name`` in the named campaign stages (complete ones only),
    the split and the episode range; each filter applies only when given."""
    if stages:
        rows = stage_rows(rows, stages, name)
    if split:
        rows = [r for r in rows if r["split"] == split]
    if episodes:
        rows = [r for r in rows if episodes[0] <= int(r["episode"]) < episodes[1]]
    return rows
