"""Names that cannot drift: task cards, tool groups and ablation effects are declared once and
checked, so an unknown name is an error listing the known ones instead of a silent no-op."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

import envs
from envs import cards
from envs.cards.card import TaskCard, register
from envs.episodes import ALL_TASKS, SUITES, TASK_CODES
from envs.ood import OOD_TIERS
from envs.official.slots import HISTORY_OPTIONS
from experiments.loop.conditions import MemoryFlags, condition_from_name
from experiments.loop.memory_factory import ABLATION_EFFECTS, memory_config
from experiments.reporting import campaign
from memory.layer import MemoryConfig
from memory.tools.groups import TOOL_GROUPS, check_tool_groups
from memory.tools.registry import default_tools


def test_every_list_of_tasks_is_read_from_the_cards():
    names = [c.name for c in cards.all_cards()]
    assert len(names) == 16 == len(set(names)) == campaign.TASKS
    assert tuple(names) == ALL_TASKS
    assert SUITES == cards.suites() and list(SUITES) == list(cards.SUITE_ORDER)
    assert all(len(tasks) == 4 for tasks in SUITES.values())
    assert TASK_CODES == {c.name: c.code for c in cards.all_cards()} and sorted(TASK_CODES.values()) == list(range(1, 17))
    assert envs.TASK_CLASSES == {c.name: c.env_class for c in cards.all_cards()}
    assert {t: len(v) for t, v in OOD_TIERS.items()} == {c.name: len(c.ood_tiers) for c in cards.all_cards()}
    assert set(HISTORY_OPTIONS) == {c.name for c in cards.all_cards() if c.official_history_options}


@pytest.mark.parametrize("card", cards.all_cards(), ids=lambda c: c.name)
def test_a_card_names_a_class_of_that_name_in_its_own_module(card):
    module, cls = card.env_class.split(":")
    assert cls == card.name
    source = importlib.util.find_spec(module)
    assert source is not None, card.env_class
    assert f"class {cls}(" in open(source.origin).read()
    assert card.ood_tiers, f"{card.name} has no ood tier"


def test_an_unknown_task_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown task 'PickXtime'.*known: BinFill, PickXtimes"):
        cards.card("PickXtime")
    with pytest.raises(ValueError, match="did you mean 'PickXtimes'"):
        envs.episodes.check_task("PickXtime")


def test_a_clashing_or_malformed_card_is_refused():
    px = cards.card("PickXtimes")
    with pytest.raises(ValueError, match="share the code 1"):
        register(dataclasses.replace(px, name="PickYtimes", rank=9))
    with pytest.raises(ValueError, match="share rank 2 of suite 'counting'"):
        register(dataclasses.replace(px, name="PickYtimes", code=99))
    with pytest.raises(ValueError, match="unknown suite 'tallying'"):
        TaskCard("X", "tallying", 1, 99, "m:X")
    assert "PickYtimes" not in cards.card.__globals__["registered"]()  # refused cards are not filed


def test_tool_groups_are_declared_and_every_tool_uses_one():
    used = {t.group for t in default_tools()}
    assert used <= TOOL_GROUPS
    assert TOOL_GROUPS - used <= {"generic"}, f"declared groups no tool has: {sorted(TOOL_GROUPS - used)}"
    with pytest.raises(ValueError, match=r"unknown tool group\(s\) 'count'.*known: .*progress"):
        check_tool_groups({"count", "route"})
    with pytest.raises(ValueError, match="MemoryConfig.tool_groups: unknown tool group"):
        MemoryConfig(tool_groups=frozenset({"routes"}))


def test_every_ablation_effect_is_a_flag_a_condition_and_removes_something_real():
    flags = {f.name for f in dataclasses.fields(MemoryFlags)}
    full = memory_config(condition_from_name("memory"))
    for flag, (groups, reads) in ABLATION_EFFECTS.items():
        assert flag in flags, flag
        assert groups or reads, flag
        assert groups <= {t.group for t in default_tools()}, (flag, groups)
        cond = condition_from_name("memory-" + flag.replace("_", "-"))
        cfg = memory_config(cond)
        assert cfg.tool_groups == full.tool_groups - groups, flag
        assert cfg.disabled_reads == full.disabled_reads | reads, flag
