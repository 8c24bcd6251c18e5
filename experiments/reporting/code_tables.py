"""Tables of the docs that come from the code, not from results: regenerated and checked like them.

A block between ``<!-- generated table=NAME -->`` and ``<!-- /generated -->`` holds the table
:data:`CODE_TABLES` names. Why: the ood tier table was typed into the README once and then fell out
of the order and values of ``envs/ood.py``; a table the code prints cannot.
"""

from __future__ import annotations

import re
from collections.abc import Callable

GENERATED = re.compile(r"(<!-- generated table=(?P<name>\S+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.DOTALL)


def _ood_tiers() -> str:
    from envs.ood import markdown_table

    return markdown_table()


def _task_cards() -> str:
    from envs.cards import all_cards

    lines = ["| suite | task | code | ood tiers | official history options |", "|---|---|---|---|---|"]
    for c in all_cards():
        lines.append(f"| {c.suite} | {c.name} | {c.code} | {len(c.ood_tiers)} | {len(c.official_history_options)} |")
    return "\n".join(lines)


CODE_TABLES: dict[str, Callable[[], str]] = {
    "ood_tiers": _ood_tiers,
    "task_cards": _task_cards,
}


def code_table(name: str) -> str:
    if name not in CODE_TABLES:
        raise ValueError(f"unknown generated table {name!r} (known: {', '.join(CODE_TABLES)})")
    return CODE_TABLES[name]()


def regenerate_code_tables(text: str) -> tuple[str, list[str]]:
    """``text`` with every generated block rewritten, and the names of those that changed."""
    changed: list[str] = []

    def one(m: re.Match) -> str:
        body = f"_Generated from the code by `python -m experiments.report --readme`._\n\n{code_table(m.group('name'))}\n"
        if body != m.group("body"):
            changed.append(f"generated/{m.group('name')}")
        return m.group(1) + body + m.group(4)

    return GENERATED.sub(one, text), changed
