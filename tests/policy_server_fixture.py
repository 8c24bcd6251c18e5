"""Helpers shared by the policy-server tests: a real server subprocess and a low-level observation."""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def make_obs(joints=None, step=0, width=0.04, subgoal="pick up the red cube at <142, 97> for the first time"):
    rng = np.random.default_rng(step)
    return {
        "front_rgb": rng.integers(0, 256, (256, 256, 3), dtype=np.uint8),
        "wrist_rgb": rng.integers(0, 256, (256, 256, 3), dtype=np.uint8),
        "joint_state": np.asarray(joints if joints is not None else np.linspace(-1, 1, 7), dtype=np.float32),
        "gripper_state": np.array([width, width], dtype=np.float32),
        "goal": "pick up the red cube twice",
        "subgoal": subgoal,
        "step": step,
    }


@contextlib.contextmanager
def server_process(*args: str, startup_timeout_s: float = 20.0, module: str = "policies.policy_server",
                   lifetime_s: float = 60):
    """Run `python -m <module> --port 0 ...` (a policy server); yield (proc, port)."""
    cmd = [sys.executable, "-m", module, "--host", "127.0.0.1", "--port", "0",
           "--max-lifetime-s", str(lifetime_s), *args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + startup_timeout_s
        line = ""
        while time.monotonic() < deadline and "listening on" not in line:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
        if "listening on" not in line:
            raise RuntimeError(f"policy server did not start (rc={proc.poll()}, last line {line!r})")
        port = int(line.strip().rsplit(":", 1)[1])
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        proc.stdout.close()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
