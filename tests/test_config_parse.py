"""Config parsing: presets, flags, derived values, and clear errors for bad values."""

from __future__ import annotations

import dataclasses
import json

import pytest

from envs.episodes import ALL_TASKS, SUITES
from experiments import run
from experiments.conditions import ALL_CONDITIONS
from experiments.config import ConfigError, ExperimentConfig, parse_config, parse_episodes


def test_defaults_are_a_small_valid_run():
    cfg = parse_config([])
    assert cfg.split == "test"
    assert cfg.task_list == ALL_TASKS
    assert cfg.episode_list == (0,)
    assert cfg.condition_names == ("oracle", "no-memory", "memory")
    assert cfg.wandb == "offline" and cfg.executor == "local" and cfg.workers == 1
    assert cfg.horizon == 16 and cfg.max_steps == 1300 and cfg.history_blind_p == 1.0


def test_quick_preset():
    cfg = parse_config(["--preset", "quick"])
    assert cfg.preset == "quick"
    assert cfg.task_list == ALL_TASKS
    assert cfg.episode_list == (0,)
    assert cfg.seeds == (7,)
    assert cfg.condition_names == ("oracle", "no-memory", "memory")
    assert cfg.n_units == 16 * 3


def test_paper_preset_and_override():
    cfg = parse_config(["--preset", "paper"])
    assert len(cfg.task_list) == 16
    assert cfg.episode_list == tuple(range(50))
    assert cfg.seeds == (7, 11, 23)
    assert cfg.condition_names == tuple(c for c in ALL_CONDITIONS if c != "memory-single-vote")
    assert cfg.n_units == 16 * 50 * 3 * (len(ALL_CONDITIONS) - 1)
    assert cfg.policy_noise.p_fail_grasp > 0
    # flags given with a preset override it, the rest of the preset stays
    cfg = parse_config(["--preset=paper", "--seeds", "11", "--tasks", "imitation"])
    assert cfg.seeds == (11,)
    assert cfg.task_list == SUITES["imitation"]
    assert cfg.episode_list == tuple(range(50))


def test_tasks_episodes_seeds_conditions():
    cfg = parse_config(
        ["--tasks", "counting", "VideoUnmask", "BinFill", "--episodes", "0:3", "7", "9,11", "--seeds", "7", "11", "23",
         "--conditions", "no-memory", "memory-no-route", "recent4", "--split", "val"]
    )
    assert cfg.task_list == SUITES["counting"] + ("VideoUnmask",)  # deduplicated, order kept
    assert cfg.episode_list == (0, 1, 2, 7, 9, 11)
    assert cfg.seeds == (7, 11, 23)
    assert cfg.condition_names == ("no-memory", "memory-no-route", "recent4")
    assert cfg.split == "val"


def test_memory_flags_and_window_add_their_condition():
    cfg = parse_config(["--conditions", "no-memory", "--memory.no-route", "--memory.no-count", "--recent-window", "8"])
    assert cfg.memory.no_route and cfg.memory.no_count
    assert cfg.condition_names == ("no-memory", "memory-no-route+no-count", "recent8")


def test_config_is_frozen_and_not_rewritten():
    cfg = ExperimentConfig(tasks=("counting",), episodes=("0:2",))
    assert cfg.tasks == ("counting",) and cfg.episodes == ("0:2",)  # raw values kept; derived ones are properties
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.tasks = ("all",)  # type: ignore[misc]
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
        ExperimentConfig(tasks=("Nope",))
    with pytest.raises(ConfigError, match="seeds"):
        ExperimentConfig(seeds=())
    with pytest.raises(ConfigError, match="workers"):
        ExperimentConfig(workers=0)
    with pytest.raises(ConfigError, match="history-blind-p"):
        ExperimentConfig(history_blind_p=1.5)
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
    assert parse_config(["--split", "ood"]).max_steps == 1800
    assert parse_config(["--split=ood", "--preset", "quick"]).max_steps == 1800
    assert parse_config(["--split", "ood", "--max-steps", "900"]).max_steps == 900
    assert parse_config([]).max_steps == parse_config(["--split", "val"]).max_steps == 1300
