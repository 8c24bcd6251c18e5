"""Record names are one contract between the envs' audit probes and the memory's tools.

A probe that names a record no tool writes scores nothing, silently; so a name is declared once
(``subgoals/record_names.py``), a probe with an unknown name is refused at construction, every
declared name is written by some memory tool, and neither side spells a name as a literal.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from envs.core.probes import ProbeQuestion
from subgoals import record_names as R

ROOT = Path(__file__).resolve().parents[1]


def test_an_unknown_record_name_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"'repetition'.*known: .*repetitions"):
        R.check_record_name("repetition")
    with pytest.raises(ValueError, match="'round trip'"):
        ProbeQuestion("count", "how many?", "round trip", 1)
    with pytest.raises(ValueError, match="unknown probe kind 'tally'"):
        ProbeQuestion("tally", "how many?", R.RecordName.REPETITIONS, 1)


def test_parameterised_names_are_part_of_the_contract():
    assert R.check_record_name(R.cover_binding("green cube")) == "cover hiding the green cube"
    assert R.check_record_name(R.deposited("red", "cube")) == "deposited red cube"
    assert R.check_record_name(R.deposited("red", "ball")) == "deposited red ball"
    assert R.reference_picks("cube") == R.RecordName.REFERENCE_CUBE_PICKS
    assert R.highlight_count("cube") == R.RecordName.HIGHLIGHTED_CUBES
    assert R.highlight_binding("cube") == R.RecordName.HIGHLIGHTED_CUBE
    assert R.reference_binding("target") == R.RecordName.REFERENCE_TARGET
    assert R.reference_binding("cube") == R.RecordName.REFERENCE_CUBE


def _source(folder: str) -> str:
    return "\n".join(p.read_text() for p in sorted((ROOT / folder).rglob("*.py")))


def test_every_declared_name_is_written_by_a_memory_tool():
    tools = _source("memory/tools")
    builders = {R.RecordName.HIGHLIGHTED_CUBES: "highlight_count(", R.RecordName.HIGHLIGHTED_CUBE: "highlight_binding(",
                R.RecordName.REFERENCE_CUBE: "reference_binding(", R.RecordName.REFERENCE_TARGET: "reference_binding(",
                R.RecordName.REFERENCE_CUBE_PICKS: "reference_picks("}
    for attr, name in vars(R.RecordName).items():
        if attr.isupper():
            assert f"RecordName.{attr}" in tools or builders.get(name, "\0") in tools, f"no memory tool writes {name!r}"


@pytest.mark.parametrize("folder", ["envs", "memory/tools"])
def test_no_side_spells_a_record_name_as_a_literal(folder):
    literal = re.compile(r'(?:name=|\?",\s*)"(' + "|".join(re.escape(n) for n in R.FIXED_NAMES) + r')"')
    found = [m.group(1) for m in literal.finditer(_source(folder))]
    assert not found, f"record names spelt as literals in {folder}/: {found} (use subgoals.record_names)"
