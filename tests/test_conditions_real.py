"""Every condition the CLI accepts runs something different from ``memory``, or refuses.

Two conditions that build the same composer, window, memory configuration and oracle-ladder rung
would report one experiment twice under two names (``memory-single-vote`` and
``memory-refine-every-verb`` once did exactly that).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.loop.conditions import ALL_CONDITIONS, condition_from_name
from experiments.loop.config import ConfigError, SpecifierConfig, parse_config
from experiments.loop.memory_factory import ConditionRefused, condition_signature, memory_config
from memory.contract.frames import Frame
from memory.layer import MemoryLayer
from memory.tools.registry import default_tools

NEEDS_LLM = {"memory-single-vote"}


def _LLMRun() -> SpecifierConfig:
    return SpecifierConfig(kind="llm", specifier_endpoint="http://127.0.0.1:9/v1", specifier_model="test")


@pytest.mark.parametrize("name", ALL_CONDITIONS)
def test_every_condition_differs_from_memory_or_refuses(name):
    cond = condition_from_name(name)
    if name in NEEDS_LLM:
        with pytest.raises(ConditionRefused, match="LLM specifier"):
            condition_signature(cond)
        run_cfg = _LLMRun()
    else:
        run_cfg = None
    if name == "memory":
        return
    assert condition_signature(cond, run_cfg) != condition_signature(condition_from_name("memory"), run_cfg), name


def test_signatures_are_pairwise_distinct():
    sigs = {}
    for name in ALL_CONDITIONS:
        cond = condition_from_name(name)
        sig = json.dumps(condition_signature(cond, _LLMRun() if name in NEEDS_LLM else None), sort_keys=True)
        assert sig not in sigs, f"{name} runs exactly what {sigs.get(sig)} runs"
        sigs[sig] = name


def test_single_vote_is_refused_by_the_cli_with_the_reason():
    with pytest.raises(ConfigError, match="single-vote ablation needs the LLM specifier"):
        parse_config(["--conditions", "memory-single-vote"])
    cfg = parse_config(["--conditions", "memory-single-vote", "--specifier", "llm", "--specifier-endpoint", "http://h:1/v1"])
    assert cfg.condition_names == ("memory-single-vote",)


def test_single_vote_takes_one_reading():
    cfg = memory_config(condition_from_name("memory-single-vote"), "llm", "http://127.0.0.1:9/v1")
    full = memory_config(condition_from_name("memory"), "llm", "http://127.0.0.1:9/v1")
    assert (cfg.specifier_votes, full.specifier_votes) == (1, 3)
    assert cfg.specifier.widths == (None,) and cfg.specifier.min_agree == 1


def _frame_with_red_cube(step=0):
    rgb = np.full((256, 256, 3), 90, np.uint8)
    rgb[100:112, 140:152] = (200, 20, 20)  # a red cube centred at (105.5, 145.5)
    return Frame(step=step, rgb=rgb)


def test_refine_every_verb_moves_a_point_the_full_memory_leaves_alone():
    """Behaviour on the same input: a press or pick point a few pixels off an object is snapped to
    it by the refine ablation and left byte for byte by the full memory (no history slot in it)."""
    goal = "pick up the red cube"
    proposal = "pick up the red cube at <98, 139>"
    out = {}
    for name in ("memory", "memory-refine-every-verb"):
        layer = MemoryLayer(memory_config(condition_from_name(name)), default_tools())
        layer.reset(goal, [])
        layer.observe(_frame_with_red_cube())
        out[name] = layer.revise(proposal, _frame_with_red_cube(1)).text
    assert out["memory"] == proposal
    assert out["memory-refine-every-verb"] == "pick up the red cube at <106, 146>"
