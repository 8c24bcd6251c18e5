"""The RoboMME challenge interface (``--policy challenge``) with real server processes: our own
policy server and, where the benchmark's checkout is on this machine, the benchmark's own
``challenge_interface`` server with its DummyPolicy; on our envs everywhere, on the official envs
against the planner server where the official package is installed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy_server_fixture import free_port, server_process  # noqa: E402

from envs.official.install import robomme_available  # noqa: E402
from experiments import run  # noqa: E402
from experiments.loop.results import read_rows  # noqa: E402
from policies.challenge_client import challenge_inputs  # noqa: E402

AVAILABLE, WHY = robomme_available()
CHECKOUT = Path(os.environ.get("ROBOMME_SRC", "/work/robomme_src"))


def test_inputs_carry_the_lists_the_goal_the_first_step_flag_and_the_subgoal():
    new = {k: [np.zeros(3)] for k in ("front_rgb_list", "wrist_rgb_list", "joint_state_list", "eef_state_list",
                                      "gripper_state_list")}
    x = challenge_inputs(new, ["goal a", "goal b"], True, "press the button at <1, 2>")
    assert x["task_goal"] == ["goal a", "goal b"] and x["is_first_step"] is True
    assert x["front_rgb_list"][0].dtype == np.uint8 and x["joint_state_list"][0].dtype == np.float32
    assert x["grounded_subgoal"] == x["simple_subgoal"] == "press the button at <1, 2>"
    assert "grounded_subgoal" not in challenge_inputs(new, ["g"], False, "")
    with pytest.raises(ValueError, match="lack"):
        challenge_inputs({"front_rgb_list": []}, ["g"], True)


@pytest.mark.slow
def test_a_challenge_server_drives_our_envs_with_only_the_new_observations(tmp_path, monkeypatch):
    """PickXtimes on our envs against our hold server in challenge format: the first call carries the
    conditioning video (PickXtimes has none: one frame), every later call the 16 steps since."""
    sent = []
    from policies import challenge_client

    real = challenge_client.challenge_inputs

    def spy(new, goals, first, subgoal=""):
        out = real(new, goals, first, subgoal)
        sent.append((first, len(out["front_rgb_list"]), len(out["eef_state_list"][0])))
        return out

    monkeypatch.setattr(challenge_client, "challenge_inputs", spy)
    with server_process("--policy", "hold", "--kind", "benchmark", "--horizon", "16") as (_, port):
        assert run.main(["--tasks", "PickXtimes", "--policy", "challenge", "--openpi-port", str(port), "--conditions",
                         "oracle", "--episodes", "0", "--max-steps", "48", "--wandb", "disabled",
                         "--out", str(tmp_path)]) == 0
    (row,) = read_rows(tmp_path)
    assert row["status"] == "timeout" and row["steps"] == 48
    assert sent[0] == (True, 1, 6) and [s[:2] for s in sent[1:]] == [(False, 16), (False, 16)]


@pytest.mark.slow
@pytest.mark.skipif(not (CHECKOUT / "challenge_interface" / "server.py").exists(),
                    reason=f"no benchmark checkout with challenge_interface/ at {CHECKOUT} (set ROBOMME_SRC)")
def test_the_benchmarks_own_challenge_server_is_spoken_to(tmp_path):
    """The benchmark's challenge_interface server (its DummyPolicy: the home pose plus noise, 10-action
    chunks), a real process: our client resets it and executes whole chunks until the step budget."""
    port = free_port()
    code = ("from challenge_interface.server import PolicyServer; from challenge_interface.policy import DummyPolicy; "
            f"PolicyServer(DummyPolicy(), host='127.0.0.1', port={port}).serve_forever()")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=CHECKOUT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(CHECKOUT)})
    try:
        time.sleep(3)
        assert run.main(["--tasks", "PickXtimes", "--policy", "challenge", "--openpi-port", str(port), "--conditions",
                         "no-memory", "--episodes", "0", "--max-steps", "40", "--wandb", "disabled",
                         "--out", str(tmp_path)]) == 0
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    (row,) = read_rows(tmp_path)
    assert row["status"] in ("timeout", "fail") and not row["error"], row


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.skipif(not AVAILABLE, reason=f"the official robomme package is not importable ({WHY})")
def test_a_challenge_submission_is_evaluated_on_the_official_envs_with_our_audit(tmp_path):
    """The planner server in challenge format on the official envs: PickXtimes train 0, oracle."""
    with server_process(module="policies.planner_server", lifetime_s=1100, startup_timeout_s=60) as (_, port):
        assert run.main(["--backend", "robomme", "--tasks", "PickXtimes", "--split", "train", "--policy", "challenge",
                         "--openpi-port", str(port), "--conditions", "oracle", "--episodes", "0", "--wandb",
                         "disabled", "--out", str(tmp_path)]) == 0
    (row,) = read_rows(tmp_path)
    assert row["status"] == "success", row
