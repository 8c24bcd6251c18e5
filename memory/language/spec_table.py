"""The specification table: per task, how often a rewording's specification means what the template's does.

Why a module and not only a test: the same numbers go into the issue's closing note and into the
test's floor, so they are computed once. Every train episode's template goal (no simulator: the
layout sampler alone, see ``tests/goal_cases.py``) is specified, every rewording of its variant is
specified, and the two are compared field by field (:func:`memory.language.spec_agreement.agreement`).

    python -m memory.language.spec_table            # dev and held-out tables, markdown
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from memory.language.spec import MemorySpec, specify
from memory.language.spec_agreement import SPEC_FIELDS, agreement

__all__ = ["TaskAgreement", "agreement_table", "format_table"]


@dataclass
class TaskAgreement:
    """One task's rewordings against its templates: whole-spec agreement and per-field misses."""

    task: str
    total: int = 0
    agreed: int = 0
    field_misses: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    examples: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    @property
    def fraction(self) -> float:
        return self.agreed / self.total if self.total else float("nan")

    def field_fraction(self, name: str) -> float:
        return 1.0 - self.field_misses.get(name, 0) / self.total if self.total else float("nan")


def agreement_table(cases: Iterable, rewordings_of: Callable, pool: str,
                    specifier: Callable[[str], MemorySpec] = specify) -> dict[str, TaskAgreement]:
    """``{task: TaskAgreement}`` over ``cases`` (template goals with values) and their ``pool`` rewordings."""
    out: dict[str, TaskAgreement] = {}
    for case in cases:
        row = out.setdefault(case.task, TaskAgreement(case.task))
        reference = specifier(case.template)
        for text in rewordings_of(case, pool):
            ag = agreement(specifier(text), reference)
            row.total += 1
            row.agreed += all(ag.values())
            missed = tuple(name for name, ok in ag.items() if not ok)
            for name in missed:
                row.field_misses[name] += 1
            if missed and len(row.examples) < 3 and text not in (e[0] for e in row.examples):
                row.examples.append((text, missed))
    return out


def format_table(dev: dict[str, TaskAgreement], held_out: dict[str, TaskAgreement],
                 probe: dict[str, TaskAgreement] | None = None) -> str:
    """Markdown: per task, whole-spec agreement of each pool and the fields that failed."""
    pools = [("dev", dev), ("held-out", held_out)] + ([("probe", probe)] if probe is not None else [])
    lines = ["| task | " + " | ".join(f"{n} agreement" for n, _ in pools) + " | fields that failed ("
             + " / ".join(n for n, _ in pools) + ") |", "|---|" + "---|" * (len(pools) + 1)]

    def miss(r: TaskAgreement | None) -> str:
        if r is None:
            return "-"
        return ", ".join(f"{k} {v}/{r.total}" for k, v in sorted(r.field_misses.items())) or "none"

    for task in dev:
        rows = [table.get(task) for _, table in pools]
        cells = [f"{r.agreed}/{r.total} ({r.fraction:.0%})" if r else "-" for r in rows]
        lines.append(f"| {task} | " + " | ".join(cells) + " | " + " / ".join(miss(r) for r in rows) + " |")
    return "\n".join(lines)


def field_table(rows: dict[str, TaskAgreement]) -> str:
    lines = ["| task | " + " | ".join(SPEC_FIELDS) + " |", "|---|" + "---|" * len(SPEC_FIELDS)]
    for task, r in rows.items():
        lines.append(f"| {task} | " + " | ".join(f"{r.field_fraction(f):.2f}" for f in SPEC_FIELDS) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, ".")
    from tests.goal_cases import goal_cases, rewordings_of

    cases = goal_cases(range(20))
    dev = agreement_table(cases, rewordings_of, "dev")
    held = agreement_table(cases, rewordings_of, "held_out")
    probe = agreement_table(cases, rewordings_of, "probe")
    print(format_table(dev, held, probe))
    print()
    print("Field by field (dev):")
    print(field_table(dev))
    print()
    print("Field by field (held-out):")
    print(field_table(held))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
