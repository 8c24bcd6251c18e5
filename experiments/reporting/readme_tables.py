"""README result sections generated from committed results, and the check that they still are.

A result section of the README is a block between two markers::

    <!-- results name=quick_test section=tasks -->
    ... generated: never edit by hand ...
    <!-- /results -->

``name`` is a directory under ``benchmarks/results/`` (written by ``python -m experiments.publish``:
the run's ``config.json`` and its rows, all from one clean commit), ``section`` one of
:data:`SECTIONS`. Optional ``conditions=a,b,c`` keeps only those conditions, ``split=val`` only that
split's rows, ``stage=a,b`` only the rows of those Results v1 campaign stages
(``experiments/campaign.py``), and refuses a stage that is not complete, so a table never mixes a
finished arm with a half-run one (``section=campaign`` shows how far each stage writing to ``name``
has got); ``episodes=LO:HI`` keeps episodes LO..HI-1, so arms run on different ranges compare on
the common one. ``reference=COND`` is the condition ``section=paired`` pairs the
others against (default ``no-memory``). ``section=rewording baseline=OTHER`` compares ``name``'s rows with the same episodes of
``OTHER`` (the same arm with the template goals; both must come from one commit). ``section=backends
beside=OURS`` puts ``name`` (a ``--backend robomme`` run) beside ``OURS`` (a run on our envs, at its own
commit; ``beside_stage=`` selects its campaign stages), arm by arm on the episodes both ran
(``experiments/reporting/backends_section.py``); rows of two backends never share a cell;
``section=disagreements beside=OURS`` lists the pairs one backend solved and the other did not, with
the failing row's kind of reason (``experiments/reporting/disagreement_section.py``). ``section=versus
beside=THEN`` puts ``name`` beside an earlier run ``THEN`` of the same backend, arm by arm on the
episodes both ran, with the memory arm's change in points (``experiments/reporting/versus_section.py``). ``section=ceiling``
sets the oracle arm per task beside π0.5's published oracle-subgoal success (what an executor
profile is fitted to) with memory ÷ oracle; ``section=attribution`` attributes every failure of the
memory arm (executor fault, wrong read, missed read, wrong state). ``section=field`` sets one backend's
arms per task and suite beside the field's published columns (π0.5 without memory, FrameSamp,
SimpleARM, π0.5 with oracle subgoals, Astra where reported; ``experiments/reporting/field_section.py``).
``python -m experiments.report --readme README.md`` rewrites every block from the
results; ``python -m experiments.report --check README.md`` exits 1 naming each block that differs
(the default test suite runs it, so a hand-edited or stale number fails CI).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from experiments.reporting.code_tables import GENERATED, regenerate_code_tables
from experiments.reporting.backends_section import backends_section
from experiments.reporting.disagreement_section import disagreement_section
from experiments.reporting.cost_section import cost_section
from experiments.reporting.failure_reasons import failures_section
from experiments.reporting.versus_section import versus_section
from experiments.reporting.figures import FIGURE, regenerate_figures
from experiments.reporting.markers import episode_range, marker_args, select_rows
from experiments.reporting.field_section import field_section
from experiments.reporting.paper_comparison import anchors_section, specificity_section
from experiments.reporting.publish import PUBLISHED, check_publishable
from experiments.reporting.report_sections import (
    ablation_matrix,
    history_audit_section,
    md_table,
    memory_section,
    paired_section,
    pct,
    suite_table,
    task_order,
    task_table,
)
from envs.core.rewording import pool_of
from experiments.loop.results import read_rows

REPO = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"(<!-- results (?P<args>[^>]*?) -->\n)(?P<body>.*?)(<!-- /results -->)", re.DOTALL)


@dataclass(frozen=True)
class Block:
    name: str
    section: str
    conditions: tuple[str, ...] | None = None
    split: str | None = None
    baseline: str | None = None
    stages: tuple[str, ...] | None = None
    reference: str | None = None
    episodes: tuple[int, int] | None = None
    beside: str | None = None
    beside_stages: tuple[str, ...] | None = None

    @classmethod
    def parse(cls, args: str) -> "Block":
        kv = marker_args(args)
        unknown = set(kv) - {"name", "section", "conditions", "split", "baseline", "stage", "reference", "episodes",
                             "beside", "beside_stage"}
        if unknown or "name" not in kv or "section" not in kv:
            raise ValueError(f"bad results marker arguments {args!r} (need name= and section=; "
                             f"optional conditions=, split=, baseline=, stage=, reference=, episodes=, beside=, beside_stage=)")
        if (kv["section"] == "rewording") != ("baseline" in kv):
            raise ValueError(f"bad results marker arguments {args!r}: section=rewording and baseline= go together")
        if (kv["section"] in BESIDE_SECTIONS) != ("beside" in kv) or ("beside_stage" in kv and "beside" not in kv):
            raise ValueError(f"bad results marker arguments {args!r}: section={'|'.join(BESIDE_SECTIONS)} and beside= "
                             "go together (beside_stage= only with beside=)")
        if kv["section"] not in SECTIONS:
            raise ValueError(f"unknown results section {kv['section']!r} (known: {', '.join(SECTIONS)})")
        if "reference" in kv and kv["section"] != "paired":
            raise ValueError(f"bad results marker arguments {args!r}: reference= goes with section=paired")
        conds = tuple(kv["conditions"].split(",")) if "conditions" in kv else None
        stages = tuple(kv["stage"].split(",")) if "stage" in kv else None
        episodes = episode_range(kv["episodes"], f"bad results marker arguments {args!r}") if "episodes" in kv else None
        beside_stages = tuple(kv["beside_stage"].split(",")) if "beside_stage" in kv else None
        return cls(kv["name"], kv["section"], conds, kv.get("split"), kv.get("baseline"), stages, kv.get("reference"), episodes,
                   kv.get("beside"), beside_stages)


def _table_only(md: str) -> str:
    """The markdown of a report section without its heading and prose: the table lines."""
    return "\n".join(line for line in md.splitlines() if line.startswith("|"))


def _tasks(rows):
    return task_table(rows)[0]


def _suites(rows):
    return suite_table(rows)[0]


def _paired(rows, reference="no-memory"):
    return _table_only(paired_section(rows, baseline=reference)[0].split("## Ablations")[0])


def _ablations(rows):
    return _table_only(ablation_matrix(rows)[0])


def _audit(rows):
    return _table_only(history_audit_section(rows)[0])


def _memory(rows):
    return _table_only(memory_section(rows)[0])


def _tiers(rows):
    """The ood split per task and tier (``experiments/reporting/tier_report.py``), the table alone."""
    from experiments.reporting.tier_report import tier_section

    return _table_only(tier_section(rows)[0].split("\n### ")[0])


def _splits(rows):
    """Per split and task: episodes, success, errors, and how many reset moved to a retry offset."""
    body = []
    for split in sorted({r["split"] for r in rows}):
        for cond in sorted({r["condition"] for r in rows}):
            part = [r for r in rows if r["split"] == split and r["condition"] == cond]
            for t in task_order(part):
                tr = [r for r in part if r["task"] == t]
                ok = [r for r in tr if r.get("status") != "error"]
                rate = sum(bool(r["success"]) for r in ok) / len(ok) if ok else float("nan")
                moved = sum(1 for r in tr if r.get("retry_offset"))
                body.append([split, cond, t, len(tr), pct(rate), len(tr) - len(ok), moved])
            ok = [r for r in part if r.get("status") != "error"]
            rate = sum(bool(r["success"]) for r in ok) / len(ok) if ok else float("nan")
            body.append([split, cond, "**all**", len(part), pct(rate), len(part) - len(ok),
                         sum(1 for r in part if r.get("retry_offset"))])
    return md_table(["split", "condition", "task", "episodes", "success %", "errors", "retry offset > 0"], body)


def _rewording(rows, baseline):
    """Per condition and task: success with reworded goals against the same episodes with template
    goals, and each condition's total (the paper's rewording cost is that total's Δ). ``held-out
    wordings`` counts the episodes whose reworded goal came from the held-out pool (the others drew
    a development wording, :func:`envs.core.rewording.pool_of`)."""
    key = lambda r: (r["task"], r["condition"], r["episode"], r["seed"])  # noqa: E731
    base = {key(r): r for r in baseline}
    body = []
    for cond in sorted({r["condition"] for r in rows}):
        tot = [0, 0, 0, 0, 0]
        for t in task_order(rows):
            pairs = [(base[key(r)], r) for r in rows if r["task"] == t and r["condition"] == cond and key(r) in base]
            pairs = [(b, r) for b, r in pairs if "error" not in (b.get("status"), r.get("status"))]
            a, w = sum(bool(b["success"]) for b, _ in pairs), sum(bool(r["success"]) for _, r in pairs)
            flips = sum(bool(b["success"]) != bool(r["success"]) for b, r in pairs)
            held = sum(pool_of(t, r.get("goal") or "") == "held_out" for _, r in pairs)
            body.append([cond, t, len(pairs), held, a, w, f"{w / a:.2f}" if a else "–", _points(w - a, len(pairs)), flips])
            tot = [tot[0] + len(pairs), tot[1] + a, tot[2] + w, tot[3] + flips, tot[4] + held]
        body.append([cond, "**all**", tot[0], tot[4], tot[1], tot[2], f"{tot[2] / tot[1]:.2f}" if tot[1] else "–",
                     _points(tot[2] - tot[1], tot[0]), tot[3]])
    return md_table(["condition", "task", "episodes", "held-out wordings", "template successes", "reworded successes",
                     "reworded ÷ template", "Δ pts", "episodes whose outcome differs"], body)


def _ceiling(rows):
    """Per task: the oracle arm's success beside π0.5's published oracle-subgoal success (the column
    the ``pi05-like`` executor profile is fitted to on train), their difference, and memory ÷ oracle
    where the memory arm ran; the all-task mean last.

    Why the ``z`` column: a rate over 50 episodes has a binomial standard error of ~5 points near
    85 % and ~7 near 50 %, so "within 5 points" on every task is out of reach of any fit (even one
    that hit the population rates exactly would miss some tasks by chance). ``z`` is the difference
    in standard errors of an ``n``-episode rate at the published value; the last row's chi-square
    (the sum of z², one degree of freedom per task) says whether the differences, taken together,
    are larger than sampling alone would make them."""
    from scipy.stats import chi2

    from experiments.reporting.paper_reference import ORACLE_SUBGOAL

    def rate(task, cond):
        ok = [r for r in rows if r["task"] == task and r["condition"] == cond and r.get("status") != "error"]
        return (100.0 * sum(bool(r["success"]) for r in ok) / len(ok), len(ok)) if ok else (float("nan"), 0)

    def z_of(o, pub, n):
        se = 100.0 * math.sqrt(pub / 100 * (1 - pub / 100) / n) if n else 0.0
        return (0.0 if abs(o - pub) < 1e-9 else math.inf) if se == 0 else (o - pub) / se

    body, ours, theirs, mem, zs = [], [], [], [], []
    for t in task_order(rows):
        o, n = rate(t, "oracle")
        m, nm = rate(t, "memory")
        pub = ORACLE_SUBGOAL[t]
        z = z_of(o, pub, n)
        ours.append(o)
        theirs.append(pub)
        mem.append(m)
        zs.append(z)
        body.append([t, n, f"{o:.1f}", f"{pub:.1f}", f"{o - pub:+.1f}", "yes" if abs(o - pub) <= 5 else "no",
                     f"{z:+.1f}" if math.isfinite(z) else "∞", "yes" if abs(z) <= 2 else "no",
                     f"{m:.1f}" if nm else "–", f"{m / o:.2f}" if nm and o else "–"])
    mo, mp = sum(ours) / len(ours), sum(theirs) / len(theirs)
    mm = sum(mem) / len(mem) if mem and all(m == m for m in mem) else float("nan")
    finite = [z for z in zs if math.isfinite(z)]
    stat = sum(z * z for z in finite)
    fit = (f"χ² {stat:.1f}, {len(finite)} df, p {chi2.sf(stat, len(finite)):.2f}" if len(finite) == len(zs)
           else f"{len(zs) - len(finite)} task(s) off a published 100 %")
    body.append(["**all**", "", f"{mo:.1f}", f"{mp:.2f}", f"{mo - mp:+.1f}",
                 f"{sum(abs(a - b) <= 5 for a, b in zip(ours, theirs))}/{len(ours)} within 5", fit,
                 f"{sum(abs(z) <= 2 for z in zs)}/{len(zs)} within 2 SE",
                 f"{mm:.1f}" if mm == mm else "–", f"{mm / mo:.2f}" if mm == mm and mo else "–"])
    return md_table(["task", "episodes", "oracle %", "π0.5 oracle-subgoal %", "Δ pts", "within 5", "z (Δ ÷ SE)",
                     "within 2 SE", "memory %", "memory ÷ oracle"], body)


def _attribution(rows):
    """Every failed episode of the memory arm, attributed from its row (executor fault, wrong read,
    missed read, state wrong), whatever the oracle arm did: under an executor profile the oracle fails too."""
    return failures_section(rows, every=True)[0]


def _points(diff: int, n: int) -> str:
    """A success difference over ``n`` paired episodes in points (the paper's rewording cost is -17.8)."""
    return f"{100 * diff / n:+.1f}" if n else "–"


def _table_of(section: Callable) -> Callable:
    """A README section from a report section that returns ``(markdown table, records)``."""
    return lambda rows: section(rows)[0]


SECTIONS: dict[str, Callable] = {
    "tasks": _tasks,
    "suites": _suites,
    "paired": _paired,
    "ablations": _ablations,
    "audit": _audit,
    "memory": _memory,
    "splits": _splits,
    "rewording": _rewording,
    "tiers": _tiers,
    "anchors": _table_of(anchors_section),
    "specificity": _table_of(specificity_section),
    "failures": _table_of(failures_section),
    "cost": _table_of(cost_section),
    "ceiling": _ceiling,
    "attribution": _attribution,
    "campaign": None,  # needs the block's name: rendered by campaign_table
    # these two take the beside= run's rows too (render_block)
    "backends": lambda official, ours: backends_section(official, ours)[0],
    "backend_suites": lambda official, ours: backends_section(official, ours, suites_only=True)[0],
    "versus": versus_section,
    "disagreements": lambda official, ours: disagreement_section(official, ours)[0],
    "field": _table_of(field_section),
}
BESIDE_SECTIONS = ("backends", "backend_suites", "versus", "disagreements")
"""Sections that put a ``--backend robomme`` run beside one of ours (``beside=``)."""


def campaign_table(rows: list, name: str) -> str:
    """The campaign stages that write to ``name``: rows published so far against the plan, the
    stage's CPU-hours so far (episode wall time summed), and whether its tables may be built."""
    from experiments.reporting.campaign import known_stages

    body = []
    for stage in (s for s in known_stages() if s.run_dir == name):
        mine = [r for r in rows if stage.selects(r)]
        hours = sum(float(r.get("wall_s") or 0.0) for r in mine) / 3600
        state = "complete" if len(mine) >= stage.planned else "in progress" if mine else "not started"
        body.append([stage.name, " ".join(stage.conditions), _episode_range(stage),
                     " ".join(map(str, stage.seeds)), len(mine), stage.planned, f"{hours:.1f}", state])
    if not body:
        raise ValueError(f"results {name!r}: no campaign stage writes here")
    return md_table(["stage", "conditions", "episodes", "seeds", "rows", "planned", "CPU-hours", "state"], body)


def _episode_range(stage) -> str:
    lo, hi = stage.episode_range
    return f"{stage.split} {lo}–{hi - 1}"


def _published(root: Path, name: str) -> tuple[list, str]:
    """The rows of the published run ``name`` and the one commit they ran at (errors name the run)."""
    rows = read_rows(root / name, warn=False)
    if not rows:
        raise ValueError(f"results {name!r}: no rows under {root / name}")
    return rows, check_publishable(rows)


def render_block(block: Block, root: Path = PUBLISHED, doc: str = "README.md") -> str:
    """The generated text of one block (provenance line, blank line, the table); ``doc`` is the file
    the block lives in, named in the provenance line's command."""
    path = root / block.name
    rows = read_rows(path, warn=False)
    if not rows and block.section == "campaign":
        # a stage that has not started yet still shows its plan (the campaign names the directory)
        table = campaign_table(rows, block.name)
        return (f"_Nothing published under `benchmarks/results/{block.name}` yet: the plan (generated by "
                f"`python -m experiments.report --readme {doc}`)._\n\n{table}\n")
    if not rows:
        raise ValueError(f"results {block.name!r}: no rows under {path}")
    commit = check_publishable(rows)
    rows = select_rows(rows, block.name, block.stages, block.split, block.episodes)
    if block.conditions:
        rows = [r for r in rows if r["condition"] in block.conditions]
    if not rows:
        raise ValueError(f"results {block.name!r}: no rows for split={block.split} conditions={block.conditions}")
    source = f"`benchmarks/results/{block.name}`" + (f" (stage {', '.join(block.stages)})" if block.stages else "")
    if block.baseline:
        baseline, other = _published(root, block.baseline)
        if other != commit:
            raise ValueError(f"results {block.name!r} ran at {commit[:10]} but its baseline {block.baseline!r} at "
                             f"{other[:10]}: a comparison must come from one commit")
        table = SECTIONS[block.section](rows, baseline)
        source += f" against `benchmarks/results/{block.baseline}`"
    elif block.beside:
        # the other backend's run, at its own commit (a comparison across backends cannot share one)
        beside, other = _published(root, block.beside)
        beside = select_rows(beside, block.beside, block.beside_stages, block.split, block.episodes)
        if block.conditions:
            beside = [r for r in beside if r["condition"] in block.conditions]
        table = SECTIONS[block.section](rows, beside)
        source += (f" beside `benchmarks/results/{block.beside}`"
                   + (f" (stage {', '.join(block.beside_stages)})" if block.beside_stages else "") + f" at `{other[:10]}`")
    elif block.section == "campaign":
        table = campaign_table(rows, block.name)
    elif block.reference:
        table = SECTIONS[block.section](rows, block.reference)
        source += f" paired against `{block.reference}`"
    else:
        table = SECTIONS[block.section](rows)
    seeds = sorted({int(r["seed"]) for r in rows})
    note = (f"_Generated from {source} ({len(rows)} episodes, seeds "
            f"{' '.join(map(str, seeds))}) at commit `{commit[:10]}` by `python -m experiments.report --readme {doc}`._")
    return f"{note}\n\n{table}\n"


def doc_name(path: Path) -> str:
    """How a doc is named in its provenance lines: relative to the repository when inside it."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return path.name


def regenerate(text: str, root: Path = PUBLISHED, doc: str = "README.md") -> tuple[str, list[str]]:
    """``text`` with every results block, generated code table and quoted figure regenerated, and
    the names of those that changed."""
    changed: list[str] = []

    def one(m: re.Match) -> str:
        block = Block.parse(m.group("args"))
        body = render_block(block, root, doc)
        if body != m.group("body"):
            changed.append(f"{block.name}/{block.section}")
        return m.group(1) + body + m.group(4)

    text = _BLOCK.sub(one, text)
    text, tables = regenerate_code_tables(text)
    text, figures = regenerate_figures(text, root)
    return text, changed + tables + figures


def count_blocks(text: str) -> int:
    """Results blocks, generated tables and figures in ``text``."""
    return len(_BLOCK.findall(text)) + len(GENERATED.findall(text)) + len(FIGURE.findall(text))


def write_readme(path: Path, root: Path = PUBLISHED) -> list[str]:
    text = path.read_text()
    new, changed = regenerate(text, root, doc_name(path))
    if new != text:
        path.write_text(new)
    return changed


def check_readme(path: Path, root: Path = PUBLISHED) -> tuple[int, str]:
    """``(number of blocks, report)``; the report is empty when every block is what the results give."""
    text = path.read_text()
    n = count_blocks(text)
    new, changed = regenerate(text, root, doc_name(path))
    if not changed:
        return n, ""
    diff = "".join(difflib.unified_diff(text.splitlines(True), new.splitlines(True), str(path), "generated", n=1))
    return n, f"{len(changed)} of {n} generated blocks differ from the committed results and the code: {', '.join(changed)}\n{diff}"
