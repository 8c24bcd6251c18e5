"""Every memory tool states the numbers it decides with (``Tool.thresholds``), and a run records them.

The thresholds are frozen dataclasses (the tools' own and the configs of the event detectors they
attach); :func:`memory.tools.registry.tool_thresholds` turns them into a JSON-ready record that
``experiments.loop.results.write_config_json`` writes beside the config.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from experiments.loop.config import ExperimentConfig
from experiments.loop.results import config_mismatch, write_config_json
from memory.tools.base import Tool
from memory.tools.manner_reader import MannerReader, MannerThresholds
from memory.tools.peg_reader import PegReader, PegThresholds
from memory.tools.registry import default_tools, tool_thresholds
from memory.tools.route_reader import ROW_OVER_COL, RouteReader, RouteThresholds

ROOT = Path(__file__).resolve().parents[1]


def test_every_registered_tool_states_frozen_dataclasses():
    tools = default_tools()
    assert tools
    for tool in tools:
        assert type(tool).thresholds is not Tool.thresholds, f"{tool.name} does not override thresholds()"
        found = tool.thresholds()
        assert isinstance(found, tuple) and found, tool.name
        for th in found:
            assert dataclasses.is_dataclass(th) and not isinstance(th, type), (tool.name, th)
            assert th.__dataclass_params__.frozen, (tool.name, type(th).__name__)
            field = dataclasses.fields(th)[0].name
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(th, field, getattr(th, field))


def test_the_record_is_json_ready_and_names_every_tool():
    record = tool_thresholds()
    assert set(record) == {t.name for t in default_tools()}
    assert json.loads(json.dumps(record, allow_nan=False)) == record  # tuples already lists, keys strings
    for name, rows in record.items():
        assert rows and all(isinstance(r["kind"], str) and len(r) > 1 for r in rows), name
    assert {"kind": "ColourThresholds"}.items() <= record["colour_blobs"][1].items()
    assert record["route_reader"][0]["step_px"] == [10.0, 45.0]


def test_tool_thresholds_refuses_what_is_not_a_frozen_dataclass():
    class Loose(MannerReader):
        def thresholds(self):
            return ({"low_z": 0.04},)

    with pytest.raises(TypeError, match="frozen dataclass"):
        tool_thresholds([Loose()])


def test_the_moved_constants_keep_their_values():
    # the class constants of the readers became dataclass fields with the same values
    assert dataclasses.astuple(MannerThresholds()) == (0.04, 0.06, 0.05, 8.0, 5.0, 4.0, 0.02, 25)
    assert dataclasses.astuple(PegThresholds())[:7] == (0.03, 0.09, 60.0, 0.9, 14, 30.0, 250)
    assert PegThresholds().mark_px == 30  # added for the official envs' acceptance mark
    peg = PegReader()
    assert (peg.descent_config.low_z, peg.descent_config.up_z) == (0.03, 0.09)
    assert RouteThresholds().row_over_col == ROW_OVER_COL == 0.8


def test_a_changed_value_shows_in_the_record():
    base = tool_thresholds([MannerReader(), RouteReader(), PegReader()])
    changed = tool_thresholds([
        MannerReader(dataclasses.replace(MannerThresholds(), low_z=0.05)),
        RouteReader(node_px=9.0),  # the constructor keywords still work and build the dataclass
        PegReader(PegThresholds(up_z=0.1)),
    ])
    assert base["manner_reader"][0]["low_z"] == 0.04 and changed["manner_reader"][0]["low_z"] == 0.05
    assert base["route_reader"][0]["node_px"] == 7.0 and changed["route_reader"][0]["node_px"] == 9.0
    # the peg reader's descent detector follows its thresholds
    assert changed["peg_reader"] == [
        {"kind": "PegThresholds", **dataclasses.asdict(PegThresholds(up_z=0.1))},
        {"kind": "DescentConfig", **dataclasses.asdict(PegReader(PegThresholds(up_z=0.1)).descent_config)},
    ]
    assert changed["peg_reader"][1]["up_z"] == 0.1


def test_config_json_records_the_thresholds_and_an_old_run_directory_still_resumes(tmp_path):
    cfg = ExperimentConfig.from_flat(tasks=("counting",), out=tmp_path)
    write_config_json(tmp_path, cfg)
    doc = json.loads((tmp_path / "config.json").read_text())
    assert doc["memory_thresholds"] == tool_thresholds()
    assert "memory_thresholds" not in doc["config"]  # not a setting: it never makes a resume refuse
    assert config_mismatch(tmp_path, cfg) == {}
    # a directory written before the record existed: same config and commit, so no rotation
    old = dict(doc)
    del old["memory_thresholds"]
    (tmp_path / "config.json").write_text(json.dumps(old))
    assert config_mismatch(tmp_path, cfg) == {}
    write_config_json(tmp_path, cfg)
    assert not (tmp_path / "config.1.json").exists()
    assert "memory_thresholds" in json.loads((tmp_path / "config.json").read_text())


def test_event_detectors_do_not_import_tools():
    for path in sorted((ROOT / "memory" / "events").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            assert not any(n == "memory.tools" or n.startswith("memory.tools.") for n in names), (path.name, names)
