"""Where the backends disagree: the same arm on the same episode index and seed succeeds on one
backend and fails on the other, and what the failing row says about why.

The two backends' scenes for one index differ (ours follow our seed formula, the official envs the
benchmark's metadata), so a disagreement is not by itself a defect of either; what matters is its
kind, read from the failing row alone (:func:`experiments.reporting.failure_reasons.classify`):

* **reader**: the memory's audited state or grounding was wrong, or a wrong proposal passed (the
  pixel readers see the two renderers' frames: a reader failing on one backend only is where its
  picture differs);
* **timing**: the episode ran out of its step budget (the two backends count steps differently);
* **execution**: every history-dependent decision was right and the motion did not finish (our
  scripted solvers against the benchmark's planner, and two physics builds);
* **slot draw**: an arm without memory (no-memory, best-memoryless) filled a history slot wrongly;
  its draw depends on the scene the backend made, so it may land on one side only;
* **executor fault**: a failure the executor profile drew;
* **unaudited**: the row has no audit to tell (an oracle arm's row, which reads no memory).

Errored rows (infrastructure) are never a disagreement: either side's error leaves the pair out.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from experiments.reporting.backends_section import common_rows
from experiments.reporting.failure_reasons import classify
from experiments.reporting.report_sections import md_table, task_order

Row = dict[str, Any]
KINDS = ("reader", "slot draw", "timing", "execution", "executor fault", "unaudited")
_KIND_OF_CAUSE = {"state wrong": "reader", "grounding wrong": "reader", "read missed": "reader",
                  "executor fault": "executor fault", "execution": "execution", "unaudited": "unaudited"}


def _key(r: Row) -> tuple:
    return (r["task"], r["split"], int(r["episode"]), r["condition"], int(r["seed"]))


def kind_of(row: Row) -> tuple[str, str]:
    """(kind, the row's one-line reason) of a failed row (module docstring)."""
    reason = classify(row)
    kind = "timing" if row.get("status") == "timeout" and reason.cause in ("execution", "unaudited") \
        else _KIND_OF_CAUSE[reason.cause]
    if kind == "reader" and not str(row.get("condition", "")).startswith("memory"):
        kind = "slot draw"  # no memory read anything: the arm's own slot filling went wrong
    return kind, reason.line


def disagreements(official: list[Row], ours: list[Row]) -> list[dict[str, Any]]:
    """Every (task, split, episode, arm, seed) both backends ran, neither errored, one succeeded:
    which backend failed, its kind and reason."""
    off, mine = common_rows(official, ours)
    theirs = {_key(r): r for r in off}
    out = []
    for r in sorted(mine, key=_key):
        o = theirs.get(_key(r))
        if o is None or "error" in (r.get("status"), o.get("status")) or bool(r.get("success")) == bool(o.get("success")):
            continue
        failed, side = (o, "official") if r.get("success") else (r, "ours")
        kind, reason = kind_of(failed)
        out.append({"task": r["task"], "split": r["split"], "episode": int(r["episode"]), "condition": r["condition"],
                    "seed": int(r["seed"]), "failed_on": side, "kind": kind, "reason": reason})
    return out


def disagreement_section(official: list[Row], ours: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    """Per task and arm: how many pairs fail on the official envs only and on ours only, by kind; then
    every such pair, one line each (collapsed)."""
    found = disagreements(official, ours)
    if not found:
        return "_The two backends agree on every episode both ran (no pair succeeds on one and fails on the other)._", []
    count = Counter((d["task"], d["condition"], d["failed_on"]) for d in found)
    kinds = Counter((d["task"], d["condition"], d["kind"]) for d in found)
    body = []
    for task in [t for t in task_order(official + ours) if any(d["task"] == t for d in found)]:
        for arm in sorted({d["condition"] for d in found if d["task"] == task}):
            body.append([task, arm, count[(task, arm, "official")] or "", count[(task, arm, "ours")] or ""]
                        + [kinds[(task, arm, k)] or "" for k in KINDS])
    body.append(["**all**", "", sum(d["failed_on"] == "official" for d in found) or "",
                 sum(d["failed_on"] == "ours" for d in found) or ""]
                + [sum(d["kind"] == k for d in found) or "" for k in KINDS])
    summary = md_table(["task", "arm", "fails on official only", "fails on ours only"] + list(KINDS), body)
    detail = md_table(["task", "arm", "seed", "episode", "failed on", "reason"],
                      [[d["task"], d["condition"], d["seed"], d["episode"], d["failed_on"], d["reason"].replace("|", "/")]
                       for d in found])
    return (f"{summary}\n\n<details><summary>Every such pair, one line each ({len(found)})</summary>\n\n{detail}\n\n"
            f"</details>"), found
