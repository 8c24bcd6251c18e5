"""Why did the memory arm fail an episode the oracle composer solved? One line per episode.

The oracle arm runs the same policy with the same noise stream on the same episode, so when it
succeeds and the memory arm fails, the difference is what memory gave the policy. The row's own
audit says which part: the retrospective probes compare the memory's state with the env's truth
(``memory.assessment``), and the history audit scores every history-dependent decision
(``history_audit``). The first cause that applies, in the order the pipeline runs, names it:

1. ``state wrong``: a probe found the maintained state wrong, or missing where the env had it
   (the state was formed badly; nothing downstream could recover);
2. ``grounding wrong``: the state agreed with the truth (or no probe covers it) but a read answered
   wrong (the recalled entity was re-grounded on the wrong object or place);
3. ``read missed``: no read was wrong but wrong proposals went through (memory abstained, or the
   gate let a history-dependent subgoal pass without a read);
4. ``executor fault``: every history-dependent decision was right and the executor profile made
   the policy fail at least once (``executor_events``: a missed grasp, a drop, a short press...);
5. ``execution``: every history-dependent decision was right and no failure was injected; the
   policy's execution failed anyway.

Under an executor profile the oracle arm fails too, so :func:`every_failure` classifies every failed
episode of a condition, not only those the oracle solved.

Rows without an audit (a researcher's own memory, say) are ``unaudited``. Probes are timed by the
env's clock, which counts a demonstration's frames too; subgoals and outcomes by the robot's steps. This reads only rows:
ground truth enters through the audit the episode wrote, never through the memory.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from experiments.reporting.report_sections import md_table, task_order

Row = dict[str, Any]
CAUSES = ("state wrong", "grounding wrong", "read missed", "executor fault", "execution", "unaudited")
_TEXT = 70


@dataclass(frozen=True)
class FailureReason:
    task: str
    episode: int
    seed: int
    condition: str
    cause: str
    detail: str

    @property
    def line(self) -> str:
        return f"{self.cause}: {self.detail}"


def oracle_solved_memory_failed(rows: list[Row], condition: str = "memory") -> list[tuple[Row, Row]]:
    """``(memory row, oracle row)`` of every episode where ``condition`` failed and the oracle succeeded."""
    oracle = {(r["task"], r["episode"], r["seed"], r.get("split")): r for r in rows
              if r["condition"] == "oracle" and r.get("status") != "error"}
    out = []
    for r in rows:
        if r["condition"] != condition or r.get("status") == "error" or r.get("success"):
            continue
        o = oracle.get((r["task"], r["episode"], r["seed"], r.get("split")))
        if o is not None and o.get("success"):
            out.append((r, o))
    return sorted(out, key=lambda p: (p[0]["task"], p[0]["seed"], p[0]["episode"]))


def classify(row: Row) -> FailureReason:
    """The first cause (module docstring) that the row's audit supports, with its evidence."""
    head = dict(task=row["task"], episode=int(row["episode"]), seed=int(row["seed"]), condition=row["condition"])
    end = f"{row.get('status', '?')} after {row.get('steps', '?')} steps"
    memory = row.get("memory") if isinstance(row.get("memory"), dict) else {}
    kinds = ((memory.get("assessment") or {}).get("by_kind") or {})
    audit = row.get("history_audit") if isinstance(row.get("history_audit"), dict) else {}
    if not kinds and not audit.get("decisions"):
        return FailureReason(**head, cause="unaudited", detail=f"no probes and no history audit; {end}")

    bad = {k: v for k, v in kinds.items() if (v.get("wrong") or 0) + (v.get("not_available") or 0)}
    if bad:
        parts = []
        for kind, v in sorted(bad.items()):
            wrong, missing, asked = int(v.get("wrong") or 0), int(v.get("not_available") or 0), int(v.get("asked") or 0)
            split = ", ".join(f"{int(v[k])} {k.replace('_', ' ')}" for k in ("too_low", "too_high") if v.get(k))
            split = f" ({split})" if split else ""
            parts.append(f"{kind} " + ", ".join(p for p in (f"wrong on {wrong}/{asked} probes{split}" if wrong else "",
                                                             f"missing on {missing}/{asked}" if missing else "") if p))
        first = next((e for e in (memory.get("assessment") or {}).get("log") or [] if e.get("verdict") != "right"), None)
        if first:
            parts.append(f"first at clock {first.get('step')}: {_short(first.get('question'))} memory "
                         f"{_short(first.get('memory'))}, truth {_short(first.get('truth'))}")
        return FailureReason(**head, cause="state wrong", detail="; ".join(parts) + f"; {end}")

    n = int(audit.get("decisions") or 0)
    wrong = int(audit.get("wrong") or 0)
    missed = int(audit.get("abstained") or 0) + int(audit.get("silent_wrong") or 0)
    first = _first_wrong_subgoal(row)
    if wrong:
        return FailureReason(**head, cause="grounding wrong",
                             detail=f"{'state right' if kinds else 'state not probed'}, {wrong}/{n} history-dependent reads answered wrong{first}; {end}")
    if missed:
        how = ", ".join(p for p in (f"{int(audit.get('abstained') or 0)} abstained" if audit.get("abstained") else "",
                                    f"{int(audit.get('silent_wrong') or 0)} passed silently" if audit.get("silent_wrong") else "") if p)
        return FailureReason(**head, cause="read missed", detail=f"{missed}/{n} wrong proposals kept ({how}){first}; {end}")
    events = [e for e in row.get("executor_events") or [] if isinstance(e, dict)]
    if events:
        what = "; ".join(f"{e.get('failure')} on {_short(e.get('subgoal'))}" for e in events[:3])
        more = f" (+{len(events) - 3} more)" if len(events) > 3 else ""
        return FailureReason(**head, cause="executor fault",
                             detail=f"all {n} history-dependent decisions right; the executor failed: {what}{more}; {end}")
    return FailureReason(**head, cause="execution",
                         detail=f"all {n} history-dependent decisions right; the policy did not finish ({end})")


def _first_wrong_subgoal(row: Row) -> str:
    for s in row.get("subgoals") or []:
        if isinstance(s, dict) and s.get("right") is False:
            return f" (first at step {s.get('step')}: executed {_short(s.get('executed'))}, oracle {_short(s.get('oracle'))})"
    return ""


def _short(v: Any) -> str:
    if isinstance(v, (list, tuple)) and all(isinstance(x, (int, float)) for x in v):
        return "(" + ", ".join(f"{x:.0f}" for x in v) + ")"  # an image point: pixels
    text = str(v)
    text = text if len(text) <= _TEXT else text[: _TEXT - 1] + "…"
    return f"'{text}'" if isinstance(v, str) else text


def reasons(rows: list[Row], condition: str = "memory") -> list[FailureReason]:
    return [classify(r) for r, _ in oracle_solved_memory_failed(rows, condition)]


def every_failure(rows: list[Row], condition: str = "memory") -> list[FailureReason]:
    """Every failed (not errored) episode of ``condition``, whatever the oracle arm did."""
    failed = [r for r in rows if r["condition"] == condition and r.get("status") != "error" and not r.get("success")]
    return [classify(r) for r in sorted(failed, key=lambda r: (r["task"], r["seed"], r["episode"]))]


def failures_section(rows: list[Row], condition: str = "memory", every: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """Causes per task (counts), then every episode's one-line reason in a collapsed list. ``every``:
    all of the condition's failures (under an executor profile), not only those the oracle solved."""
    found = every_failure(rows, condition) if every else reasons(rows, condition)
    records = [{"task": f.task, "seed": f.seed, "episode": f.episode, "condition": f.condition, "cause": f.cause,
                "reason": f.detail} for f in found]
    per_task = Counter(f.task for f in found)
    per_cause = Counter((f.task, f.cause) for f in found)
    tasks = [t for t in task_order(rows) if per_task[t]]
    body = [[t, per_task[t]] + [per_cause[(t, c)] or "" for c in CAUSES] for t in tasks]
    body.append(["**all**", len(found)] + [sum(f.cause == c for f in found) or "" for c in CAUSES])
    head = f"{condition} failed" if every else f"{condition} failed, oracle solved"
    summary = md_table(["task", head] + list(CAUSES), body)
    detail = md_table(["task", "seed", "episode", "reason"],
                      [[f.task, f.seed, f.episode, f.line.replace("|", "/")] for f in found])
    md = (f"{summary}\n\n<details><summary>Every such episode, one line each ({len(found)})</summary>\n\n"
          f"{detail}\n\n</details>")
    return md, records
