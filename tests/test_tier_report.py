"""The ood per-tier report section, from hand-made rows: rates per tier, memory ÷ oracle, count
directions, route lengths, and the failures named where memory falls below 0.9 of the oracle."""

from __future__ import annotations

from experiments.reporting.report import build_report
from experiments.reporting.tier_report import tier_section


def row(task, ep, cond, success, tier, *, split="ood", memory=None, status=None, subgoal="press the button"):
    return {"task": task, "episode": ep, "condition": cond, "seed": 7, "split": split, "difficulty": f"ood{tier}",
            "success": success, "status": status or ("success" if success else "fail"), "memory": memory or {},
            "subgoals": [{"oracle": subgoal, "executed": subgoal}], "error": None}


def mem(right, wrong, count=None, routes=None):
    m = {"reads": right + wrong, "reads_correct": right, "reads_wrong": wrong, "abstentions": 0,
         "assessment": {"by_kind": {"count": count} if count else {}, "route_by_length": routes or {}}}
    return m


def test_tiers_rates_ratio_and_named_failures():
    rows = []
    for ep in range(4):  # PickXtimes has 3 tiers: episodes 0, 3 are tier 1
        tier = 1 + ep % 3
        rows.append(row("PickXtimes", ep, "oracle", True, tier))
        rows.append(row("PickXtimes", ep, "no-memory", False, tier))
        ok = ep != 3
        rows.append(row("PickXtimes", ep, "memory", ok, tier, subgoal="pick up the red cube for the seventh time",
                        memory=mem(3, 0 if ok else 1, {"asked": 4, "right": 3 if ok else 2, "too_low": 0 if ok else 2,
                                                       "too_high": 1 if ok else 0, "not_available": 0})))
    rows.append(row("RouteStick", 0, "memory", True, 1, memory=mem(2, 0, routes={"9": {"asked": 1, "right": 1}})))
    rows.append(row("RouteStick", 0, "oracle", True, 1))
    md, recs = tier_section(rows)
    tiers = {(r["task"], r["tier"]): r for r in recs if "tier" in r}
    t1 = tiers[("PickXtimes", 1)]
    assert (t1["oracle"], t1["no_memory"], t1["memory"], t1["memory_over_oracle"]) == (1.0, 0.0, 0.5, 0.5)
    assert t1["read_accuracy"] == 6 / 7 and t1["count_too_low"] == 2 / 8 and t1["count_too_high"] == 1 / 8
    assert tiers[("PickXtimes", 2)]["memory_over_oracle"] == 1.0
    assert "**PickXtimes tier 1** (memory ÷ oracle 0.50): ep3 fail at 'pick up the red cube for the seventh time'" in md
    assert "PickXtimes tier 2" not in md.split("### Where")[1]
    assert any(r.get("route_length") == 9 and r["route_exact"] == 1.0 for r in recs)


def test_no_section_without_ood_rows_and_report_carries_it():
    test_rows = [row("PickXtimes", 0, "memory", True, 1, split="test"), row("PickXtimes", 0, "oracle", True, 1, split="test")]
    assert tier_section(test_rows) == ("", [])
    assert "Out-of-distribution" not in build_report(test_rows, n_resamples=10).markdown
    ood_rows = [row("StopCube", 0, "oracle", True, 1), row("StopCube", 0, "memory", True, 1),
                row("StopCube", 0, "no-memory", False, 1)]
    rep = build_report(ood_rows, n_resamples=10)
    assert "## Out-of-distribution split, per tier" in rep.markdown and rep.tables["ood_tiers"]
