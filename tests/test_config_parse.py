"""Config parsing: presets, flags, derived values, clear errors for bad values, and the groups
(nested dataclasses under their flat flags; config.json in both shapes)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from envs.episodes import ALL_TASKS, SUITES
from experiments import run
from experiments.loop.conditions import ALL_CONDITIONS
from experiments.loop.config import (
    FLAT_FIELDS,
    GROUPS,
    OUTCOME_FIELDS,
    ConfigError,
    ExecutionConfig,
    ExperimentConfig,
    PolicyConfig,
    config_from_dict,
    flatten_config,
    parse_config,
    parse_episodes,
)
from experiments.loop.results import config_mismatch, write_config_json
from policies.noise import ScriptedNoise

ROOT = Path(__file__).resolve().parents[1]


def test_defaults_are_a_small_valid_run():
    cfg = parse_config([])
    assert cfg.scope.split == "test"
    assert cfg.task_list == ALL_TASKS
    assert cfg.episode_list == (0,)
    assert cfg.condition_names == ("oracle", "no-memory", "memory")
    assert cfg.logging.wandb == "offline" and cfg.execution.executor == "local" and cfg.execution.workers == 1
    assert cfg.env.horizon == 16 and cfg.env.max_steps == 1300 and cfg.composer.history_blind_p == 1.0
    assert cfg.composer.kind == "history-blind" and cfg.policy.kind == "scripted" and cfg.specifier.kind == "instruction"


def test_quick_preset():
    cfg = parse_config(["--preset", "quick"])
    assert cfg.preset == "quick"
    assert cfg.task_list == ALL_TASKS
    assert cfg.episode_list == (0,)
    assert cfg.scope.seeds == (7,)
    assert cfg.condition_names == ("oracle", "no-memory", "memory")
    assert cfg.n_units == 16 * 3


def test_paper_preset_and_override():
    cfg = parse_config(["--preset", "paper"])
    assert len(cfg.task_list) == 16
    assert cfg.episode_list == tuple(range(50))
    assert cfg.scope.seeds == (7, 11, 23)
    assert cfg.condition_names == tuple(c for c in ALL_CONDITIONS if c != "memory-single-vote")
    assert cfg.n_units == 16 * 50 * 3 * (len(ALL_CONDITIONS) - 1)
    assert cfg.policy.policy_noise.p_fail_grasp > 0
    # flags given with a preset override it, the rest of the preset stays
    cfg = parse_config(["--preset=paper", "--seeds", "11", "--tasks", "imitation"])
    assert cfg.scope.seeds == (11,)
    assert cfg.task_list == SUITES["imitation"]
    assert cfg.episode_list == tuple(range(50))


def test_tasks_episodes_seeds_conditions():
    cfg = parse_config(
        ["--tasks", "counting", "VideoUnmask", "BinFill", "--episodes", "0:3", "7", "9,11", "--seeds", "7", "11", "23",
         "--conditions", "no-memory", "memory-no-route", "recent4", "--split", "val"]
    )
    assert cfg.task_list == SUITES["counting"] + ("VideoUnmask",)  # deduplicated, order kept
    assert cfg.episode_list == (0, 1, 2, 7, 9, 11)
    assert cfg.scope.seeds == (7, 11, 23)
    assert cfg.condition_names == ("no-memory", "memory-no-route", "recent4")
    assert cfg.scope.split == "val"


def test_memory_flags_and_window_add_their_condition():
    cfg = parse_config(["--conditions", "no-memory", "--memory.no-route", "--memory.no-count", "--recent-window", "8"])
    assert cfg.memory.no_route and cfg.memory.no_count
    assert cfg.condition_names == ("no-memory", "memory-no-route+no-count", "recent8")


def test_config_is_frozen_and_not_rewritten():
    cfg = ExperimentConfig.from_flat(tasks=("counting",), episodes=("0:2",))
    assert cfg.scope.tasks == ("counting",) and cfg.scope.episodes == ("0:2",)  # raw values kept; derived ones are properties
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.scope = cfg.scope  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.scope.tasks = ("all",)  # type: ignore[misc]
    json.dumps(cfg.to_dict())


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["--tasks", "BinFil"], ["'BinFil'", "'BinFill'"]),
        (["--tasks", "countng"], ["'countng'", "'counting'"]),
        (["--conditions", "memroy"], ["'memroy'", "'memory'"]),
        (["--conditions", "memory-no-rout"], ["'memory-no-rout'", "'memory-no-route'"]),
        (["--preset", "quik"], ["'quik'", "'quick'"]),
        (["--episodes", "0-20"], ["'0-20'", "'0:20'"]),
        (["--episodes", "a:b"], ["'a:b'", "START:STOP"]),
        (["--episodes", "5:2"], ["'5:2'"]),
        (["--episodes", "0:60"], ["50", "'test'"]),
        (["--split", "tset"], ["'tset'", "'test'"]),
        (["--seeds", "7", "7"], ["repeated seed"]),
    ],
)
def test_bad_values_exit_2_naming_the_value(argv, needles, capsys):
    assert run.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    for n in needles:
        assert n in err


def test_config_errors_raise_directly():
    with pytest.raises(ConfigError, match="'Nope'"):
        ExperimentConfig.from_flat(tasks=("Nope",))
    with pytest.raises(ConfigError, match="seeds"):
        ExperimentConfig.from_flat(seeds=())
    with pytest.raises(ConfigError, match="workers"):
        ExperimentConfig.from_flat(workers=0)
    with pytest.raises(ConfigError, match="workers"):
        ExecutionConfig(workers=0)  # a group checks its own fields
    with pytest.raises(ConfigError, match="history-blind-p"):
        ExperimentConfig.from_flat(history_blind_p=1.5)
    with pytest.raises(ConfigError, match="openpi-port"):
        ExperimentConfig.from_flat(openpi_port=0)
    with pytest.raises(ConfigError, match="render-stride"):
        ExperimentConfig.from_flat(render_stride=0)
    assert parse_episodes("0:6:2") == (0, 2, 4)


def test_malformed_command_line_exits_nonzero():
    with pytest.raises(SystemExit) as e:
        parse_config(["--wandb", "sometimes"])
    assert e.value.code != 0


def test_help_lists_the_public_flags(capsys):
    with pytest.raises(SystemExit) as e:
        run.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for flag in ["--preset", "--tasks", "--episodes", "--split", "--seeds", "--conditions", "--out", "--executor", "--wandb", "--video", "--memory.no-route"]:
        assert flag in out
    assert "--unit-fn" not in out  # test-only hook stays hidden


def test_the_step_budget_is_the_splits_unless_given():
    assert parse_config(["--split", "ood"]).env.max_steps == 1800
    assert parse_config(["--split=ood", "--preset", "quick"]).env.max_steps == 1800
    assert parse_config(["--split", "ood", "--max-steps", "900"]).env.max_steps == 900
    assert parse_config([]).env.max_steps == parse_config(["--split", "val"]).env.max_steps == 1300


# --- the groups -------------------------------------------------------------------------------------
ALL_COMMITTED_CONFIGS = sorted((ROOT / "benchmarks" / "results").glob("*/config.json"))
COMMITTED_CONFIGS = [p for p in ALL_COMMITTED_CONFIGS if "scope" not in json.loads(p.read_text())["config"]]
"""The committed configs written before the groups existed (flat); later ones are by group."""
GROUPED_CONFIGS = [p for p in ALL_COMMITTED_CONFIGS if p not in COMMITTED_CONFIGS]


def _committed(path: Path) -> dict:
    return json.loads(path.read_text())["config"]


@pytest.fixture
def robomme_importable(monkeypatch):
    """The committed official-backend runs name --backend robomme; loading them needs no simulator."""
    import envs.official.install as install

    monkeypatch.setattr(install, "robomme_available", lambda: (True, ""))


def test_help_shows_one_section_per_group(capsys):
    with pytest.raises(SystemExit):
        run.main(["--help"])
    out = capsys.readouterr().out
    sections = re.findall(r"(?m)^\W*(\w+) options\W*$", out)  # boxed on a terminal, plain under pytest
    assert sections[0] == "scope"
    for group in (*GROUPS, "memory", "perception", "policy_noise"):
        assert group in sections, (group, sections)
    assert out.index("scope options") < out.index("--tasks") < out.index("env options")
    assert out.index("policy options") < out.index("--openpi-port") < out.index("policy_noise options")


def test_every_flat_field_keeps_its_flag(capsys):
    with pytest.raises(SystemExit):
        run.main(["--help"])
    out = capsys.readouterr().out
    for name, (group, _) in FLAT_FIELDS.items():
        if name == "policy_noise":
            assert "--policy-noise.p-fail-grasp" in out
            continue
        flag = "--" + name.replace("_", "-")
        assert re.search(re.escape(flag) + r"[ ,\n]", out), flag
        assert "--" + group + "." not in out or group in ("memory", "perception"), group  # no group prefixes


def test_flags_land_in_their_groups():
    cfg = parse_config([
        "--tasks", "BinFill", "--split", "val", "--recent-window", "4", "--backend", "robomem", "--horizon", "8",
        "--composer", "vlm", "--vlm-endpoint", "http://h:1/v1", "--history-blind-p", "0.5",
        "--policy", "openpi", "--openpi-host", "h", "--openpi-port", "9000", "--openpi-server", "benchmark",
        "--policy-noise.p-drop", "0.1", "--specifier", "llm", "--specifier-endpoint", "http://h:2/v1",
        "--memory.no-route", "--perception.identity", "dinov2", "--render-stride", "2", "--render-lod", "full",
        "--video", "--max-videos", "3", "--out", "/tmp/x", "--workers", "3", "--worker-max-units", "5",
        "--executor", "ray", "--ray-address", "auto", "--retry-errors",
        "--wandb", "disabled", "--wandb-project", "p", "--wandb-entity", "e", "--wandb-group", "g",
    ])
    assert cfg.scope.tasks == ("BinFill",) and cfg.scope.split == "val" and cfg.scope.recent_window == 4
    assert cfg.env.horizon == 8 and cfg.env.max_steps == 1300
    assert (cfg.composer.kind, cfg.composer.vlm_endpoint, cfg.composer.history_blind_p) == ("vlm", "http://h:1/v1", 0.5)
    assert (cfg.policy.kind, cfg.policy.openpi_host, cfg.policy.openpi_port, cfg.policy.openpi_server) == (
        "openpi", "h", 9000, "benchmark")
    assert cfg.policy.policy_noise == ScriptedNoise(p_drop=0.1)
    assert (cfg.specifier.kind, cfg.specifier.specifier_endpoint) == ("llm", "http://h:2/v1")
    assert cfg.memory.no_route and cfg.perception.identity == "dinov2"
    assert (cfg.render.render_stride, cfg.render.render_lod, cfg.render.video, cfg.render.max_videos) == (2, "full", True, 3)
    ex = cfg.execution
    assert (str(ex.out), ex.workers, ex.worker_max_units, ex.executor, ex.ray_address, ex.retry_errors) == (
        "/tmp/x", 3, 5, "ray", "auto", True)
    assert (cfg.logging.wandb, cfg.logging.wandb_project, cfg.logging.wandb_entity, cfg.group) == ("disabled", "p", "e", "g")
    assert cfg.composer_for("oracle") == "oracle" and cfg.composer_for("memory") == "vlm"


def test_from_flat_takes_flat_names_and_whole_groups():
    cfg = ExperimentConfig.from_flat(policy="openpi", openpi_port=9, workers=2, tasks=("BinFill",))
    assert (cfg.policy.kind, cfg.policy.openpi_port, cfg.execution.workers, cfg.scope.tasks) == ("openpi", 9, 2, ("BinFill",))
    group = PolicyConfig(kind="lerobot", lerobot_path="/ckpt")
    assert ExperimentConfig.from_flat(policy=group).policy == group
    assert ExperimentConfig.from_flat(policy=group, openpi_port=9).policy == dataclasses.replace(group, openpi_port=9)
    with pytest.raises(TypeError, match="'worker'.*'workers'"):
        ExperimentConfig.from_flat(worker=2)


def test_config_json_is_by_group_and_flattens_to_the_old_keys(tmp_path):
    cfg = ExperimentConfig.from_flat(tasks=("BinFill",), out=tmp_path, policy="openpi")
    d = cfg.to_dict()
    assert set(d) == {f.name for f in dataclasses.fields(ExperimentConfig)}
    assert d["policy"]["kind"] == "openpi" and d["scope"]["tasks"] == ["BinFill"] and d["execution"]["out"] == str(tmp_path)
    flat = flatten_config(d)
    assert flat == cfg.flat_dict() and flat["policy"] == "openpi" and flat["openpi_port"] == 8000
    assert flatten_config(flat) == flat  # the flat shape passes through
    assert set(flat) == set(FLAT_FIELDS) | {"preset", "memory", "perception"}
    assert set(OUTCOME_FIELDS) <= set(flat)
    assert config_from_dict(d) == cfg == config_from_dict(flat)


def test_there_are_committed_configs_to_load():
    assert len(COMMITTED_CONFIGS) >= 5


@pytest.mark.parametrize("path", COMMITTED_CONFIGS, ids=lambda p: p.parent.name)
def test_committed_flat_config_json_still_loads(path, robomme_importable):
    old = _committed(path)
    assert "scope" not in old  # written before the groups: the flat shape
    assert set(old) <= set(FLAT_FIELDS) | {"preset", "memory", "perception"}, set(old) - set(FLAT_FIELDS)
    cfg = config_from_dict(old)
    flat = cfg.flat_dict()
    assert {k: flat[k] for k in old} == old  # every value it names comes back under the same name


def _without_added_defaults(new: dict, old: dict, default: dict) -> dict:
    """``new`` without the fields ``old`` predates that hold their default (fields added later)."""
    out = {}
    for k, v in new.items():
        if k not in old:
            if v == default.get(k):
                continue
            out[k] = v
        elif isinstance(v, dict) and isinstance(old[k], dict):
            out[k] = _without_added_defaults(v, old[k], default.get(k) or {})
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("path", GROUPED_CONFIGS, ids=lambda p: p.parent.name)
def test_committed_grouped_config_json_loads_and_round_trips(path, robomme_importable):
    doc = _committed(path)
    cfg = config_from_dict(doc)
    # every group and value comes back as written; a field added since comes back at its default
    assert _without_added_defaults(cfg.to_dict(), doc, ExperimentConfig().to_dict()) == doc


@pytest.mark.parametrize("path", COMMITTED_CONFIGS[:3], ids=lambda p: p.parent.name)
def test_an_old_run_directory_resumes_with_the_same_settings(path, tmp_path, robomme_importable):
    (tmp_path / "config.json").write_text(path.read_text())
    cfg = config_from_dict(_committed(path))
    assert config_mismatch(tmp_path, cfg) == {}
    changed = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, horizon=cfg.env.horizon + 1))
    assert set(config_mismatch(tmp_path, changed)) == {"horizon"}
    # and a directory written now (by group) compares with the same config by flat name
    write_config_json(tmp_path / "new", cfg)
    assert config_mismatch(tmp_path / "new", cfg) == {}
