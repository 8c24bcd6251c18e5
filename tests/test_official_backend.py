"""The official backend against the real ``robomme`` package: runs where it is importable, and is
skipped with the reason otherwise. The configuration checks run everywhere."""

import pytest

from envs.official.install import INSTALL_HINT, robomme_available
from experiments.loop.config import ConfigError, ExperimentConfig

AVAILABLE, WHY = robomme_available()
needs_robomme = pytest.mark.skipif(not AVAILABLE, reason=f"the official robomme package is not importable ({WHY})")


def test_backend_defaults_to_ours_and_refuses_what_it_cannot_run():
    assert ExperimentConfig().env.backend == "robomem"
    with pytest.raises(ConfigError, match="--policy lerobot is not wired"):
        ExperimentConfig.from_flat(backend="robomme", policy="lerobot")
    if AVAILABLE:  # --video runs on both backends; without the package the install is what is missing
        assert ExperimentConfig.from_flat(backend="robomme", video=True).render.video
    else:
        with pytest.raises(ConfigError, match="robomme_benchmark"):
            ExperimentConfig.from_flat(backend="robomme", video=True)
    with pytest.raises(ConfigError, match="cannot run memory-true-state: the oracle ladder"):
        ExperimentConfig.from_flat(backend="robomme", conditions=("memory", "memory-true-state"))
    if AVAILABLE:  # reworded goals run on both backends (envs/official/goal_values.py)
        assert ExperimentConfig.from_flat(backend="robomme", goal_style="reworded").env.goal_style == "reworded"
    if AVAILABLE:  # an executor profile perturbs the benchmark planner's motions (policies/official_faults.py)
        cfg = ExperimentConfig.from_flat(backend="robomme", executor_profile="pi05-like")
        assert cfg.policy.executor_profile == "pi05-like"
    with pytest.raises(ConfigError, match="executes its own actions"):
        ExperimentConfig.from_flat(backend="robomme", policy="openpi", executor_profile="pi05-like")


def test_backend_robomme_says_what_to_install_when_missing():
    if AVAILABLE:
        assert ExperimentConfig.from_flat(backend="robomme", tasks=("VideoUnmask",)).env.backend == "robomme"
    else:
        with pytest.raises(ConfigError, match="pip install --no-deps -e"):
            ExperimentConfig.from_flat(backend="robomme")
    assert "robomme_benchmark" in INSTALL_HINT


@needs_robomme
def test_bridges_are_applied_once_and_only_when_needed():
    from envs.official.bridges import apply_bridges

    first = list(apply_bridges().applied)
    again = apply_bridges()
    assert again.applied == first, "a second call applies nothing new"
    import gymnasium as gym
    from mani_skill.agents.robots.panda.panda_stick import PandaStick

    assert "__getattr__" in vars(gym.Wrapper)
    assert getattr(PandaStick, "_robomem_bridge", False) or not any("stick-hand" in a for a in first)


@needs_robomme
def test_official_metadata_gives_the_benchmark_seeds():
    from envs.official.episodes import official_episode_spec

    spec = official_episode_spec("VideoUnmask", 0, "test")
    assert (spec.env_seed, spec.difficulty) == (560000, "easy")


@needs_robomme
@pytest.mark.slow
def test_official_episode_through_our_interface():
    """VideoUnmask test episode 0 with the oracle: video, goal, slot, executed frames, success (~2 min)."""
    from envs.official.env import OfficialSubgoalEnv
    from envs.official.episodes import official_episode_spec
    from memory.control.boundary import check_frame

    env = OfficialSubgoalEnv("VideoUnmask", frame_stride=4)
    obs, info = env.reset(options={"episode": official_episode_spec("VideoUnmask", 0, "test")})
    assert obs["front_rgb"].shape == (256, 256, 3) and len(info["video"]) > 10
    assert obs in env.observation_space and obs["front_rendered"] == 1
    assert "green cube" in info["goal"]
    slot = env.unwrapped.history_slot()
    assert slot is not None and slot.name == "which container" and len(slot.alternatives) >= 2
    oracle = env.oracle_subgoal()
    before = {a: env.resolve(a) for a in (oracle, *slot.alternatives)}
    assert before[oracle] in [before[a] for a in slot.alternatives], "the oracle's object is one of the alternatives"
    assert len({id(r[1]) for a, r in before.items() if a != oracle}) == len(slot.alternatives)
    obs, _, term, trunc, info = env.step(oracle)
    # the audit asks after the step: texts resolve in the scene the decision saw (the container is lifted by now)
    assert {a: env.resolve(a) for a in before} == before
    assert info["status"] == "success" and term
    assert obs in env.observation_space and oracle in env.action_space
    frames = info["frames"]
    assert frames and all(f.action is not None and f.action.shape == (8,) for f in frames)
    assert frames[-1].rgb is not None and any(f.rgb is None for f in frames)
    for f in frames:
        check_frame(f)
    env.close()


def test_the_installer_names_a_wrong_source_path_before_pip_runs(tmp_path, capsys):
    from envs.official.install import NotARobommeCheckout, check_source, main

    with pytest.raises(NotARobommeCheckout, match="no such directory"):
        check_source(tmp_path / "nowhere")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    with pytest.raises(NotARobommeCheckout, match=r"has no src/robomme/__init__.py, src/robomme/env_record_wrapper"):
        check_source(tmp_path)
    assert main([str(tmp_path)]) == 2
    assert str(tmp_path) in capsys.readouterr().err
    (tmp_path / "src/robomme/env_record_wrapper").mkdir(parents=True)
    (tmp_path / "src/robomme/__init__.py").write_text("")
    assert check_source(tmp_path) == tmp_path.resolve()


def test_setup_refuses_a_robomme_flag_without_a_path():
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "setup.sh"
    out = subprocess.run(["bash", str(script), "--robomme"], capture_output=True, text=True)
    assert out.returncode == 2 and "--robomme needs a path" in out.stderr
    out = subprocess.run(["bash", str(script), "--robome", "x"], capture_output=True, text=True)
    assert out.returncode == 2 and "unknown argument '--robome'" in out.stderr


@needs_robomme
@pytest.mark.slow
def test_an_official_episode_is_recorded_with_video(tmp_path):
    """``--video`` on the official backend: the conditioning video and the live frames, annotated,
    in the same place and with the same name as on ours (PickXtimes has no video: live frames only)."""
    import imageio.v2 as imageio

    from experiments import run
    from experiments.loop.results import read_rows

    assert run.main(["--backend", "robomme", "--tasks", "PickXtimes", "--split", "train", "--episodes", "0",
                     "--conditions", "oracle", "--video", "--wandb", "disabled", "--out", str(tmp_path)]) == 0
    (row,) = read_rows(tmp_path)
    (mp4,) = (tmp_path / "videos").rglob("*.mp4")
    assert mp4.name == f"PickXtimes_ep0_{'success' if row['success'] else 'fail'}.mp4"
    frames = imageio.mimread(str(mp4), memtest=False)
    assert len(frames) >= row["steps"] // 8 and frames[0].shape[1] == 512


@needs_robomme
@pytest.mark.slow
def test_reworded_goals_run_on_the_official_envs(tmp_path):
    """``--goal-style reworded``: the official goal's values read back (envs/official/goal_values.py)
    fill one of our rewordings, which every consumer is given and the row records (~30 s)."""
    from envs.core.rewording import pool_of
    from envs.official.goal_values import goal_values_from_text
    from experiments import run
    from experiments.loop.results import read_rows

    assert run.main(["--backend", "robomme", "--goal-style", "reworded", "--tasks", "StopCube", "--split", "train",
                     "--episodes", "0", "--conditions", "memory", "--wandb", "disabled", "--out", str(tmp_path)]) == 0
    (row,) = read_rows(tmp_path)
    assert row["backend"] == "robomme" and row["goal_style"] == "reworded"
    assert pool_of("StopCube", row["goal"]) in ("dev", "held_out")
    assert goal_values_from_text(row["goal"])["nth"] == "fourth"  # train 0 asks for the fourth arrival
    assert row["success"], row.get("error")
