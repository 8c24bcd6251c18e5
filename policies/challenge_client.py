"""A RoboMME challenge submission as the low-level policy (``--policy challenge``).

The challenge interface (CVPR 2026 workshop, the benchmark's ``challenge_interface/``) is a contract
between the organisers' evaluator and a participant's ``Policy`` server: websocket, msgpack-numpy,
the server's metadata first (the openpi wire); ``{"reset": True}`` at each episode start, answered
``{"reset_finished": True}``; then ``infer(inputs) -> {"actions": (chunk, 8 or 7)}`` where ``inputs``
carries only the observations new since the previous call, as the env's raw lists:

    task_goal            the goal's paraphrases (a list of strings)
    is_first_step        True on the episode's first call
    front_rgb_list       front camera frames (the first call: the conditioning video, then the current frame)
    wrist_rgb_list       hand camera frames
    joint_state_list     (7,) joint angles
    eef_state_list       (6,) end-effector xyz + rpy
    gripper_state_list   (2,) finger widths

and the evaluator executes the whole chunk before it calls again. :class:`ChallengePolicy` is that
evaluator's side inside this harness: it keeps the chunk as a plan, hands it to
``SubgoalExecution`` ``horizon`` actions at a time and calls the server only when the plan is spent,
with everything the env observed since. Two additions, both ignored by a submission that does not
read them: the subgoal of the harness's memory / oracle in the benchmark's two keys
(``grounded_subgoal``, ``simple_subgoal``), and the episode's identity in the reset message (for a
server that simulates the episode, ``policies/planner_server.py``, which speaks this format too).

The low-level env supplies the lists (``take_new_observations()``): the official envs' own, as they
come (:class:`envs.official.joint_env.OfficialJointEnv`); on our envs, every step's frames rendered
and the end-effector pose from the arm's joints (:meth:`envs.robomme_env.RoboMMEEnv.take_new_observations`).
"""

from __future__ import annotations

import numpy as np

from policies.base import PolicyServerError, validate_chunk
from policies.openpi_client import OpenPIPolicy, _as_float, _plain

__all__ = ["ChallengePolicy", "challenge_inputs"]


def challenge_inputs(new: dict, goals: list[str], first: bool, subgoal: str = "") -> dict:
    """The challenge ``infer`` inputs from the env's new observation lists (module docstring)."""
    keys = ("front_rgb_list", "wrist_rgb_list", "joint_state_list", "eef_state_list", "gripper_state_list")
    missing = [k for k in keys if k not in new]
    if missing:
        raise ValueError(f"the env's new observations lack {missing} (have {sorted(new)})")
    inputs = {"task_goal": [str(g) for g in goals], "is_first_step": bool(first)}
    for k in keys:
        dtype = np.uint8 if "rgb" in k else np.float32
        inputs[k] = [np.ascontiguousarray(np.asarray(v), dtype=dtype) for v in new[k]]
    if subgoal.strip():
        inputs["grounded_subgoal"] = inputs["simple_subgoal"] = subgoal.strip()
    return inputs


class ChallengePolicy(OpenPIPolicy):
    """Client of a challenge-interface server over ``low`` (see the module docstring)."""

    def __init__(self, low, host: str = "127.0.0.1", port: int | None = 8000, *, horizon: int = 16, **kw) -> None:
        kw.setdefault("server_kind", "benchmark")  # the challenge server always takes the reset message
        super().__init__(host, port, **kw)
        if not callable(getattr(low, "take_new_observations", None)):
            raise TypeError(f"{type(low).__name__} cannot feed a challenge policy: it has no take_new_observations()")
        self.low = low
        self.horizon = int(horizon)
        self._plan: list[np.ndarray] = []
        self._first = True

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self._plan, self._first = [], True

    def infer(self, obs: dict) -> np.ndarray:
        if not self._plan:
            self._plan = list(self._query(obs))
        out, self._plan = self._plan[: self.horizon], self._plan[self.horizon:]
        return np.stack(out)

    def _query(self, obs: dict) -> np.ndarray:
        new = self.low.take_new_observations()
        request = challenge_inputs(new, self.low.goal_list(), self._first, str(obs.get("subgoal") or ""))
        self.connect()
        if self._reset_pending:
            self._send_reset()
            self._reset_pending = False
        self._first = False
        self._queries += 1
        where = f"challenge query {self._queries}, step {obs.get('step')}"
        reply, roundtrip_ms = self._roundtrip(request, late=where, during=f"during {where}", failed="reported an error")
        if not isinstance(reply, dict) or "actions" not in reply:
            keys = sorted(reply) if isinstance(reply, dict) else type(reply).__name__
            raise PolicyServerError(f"challenge server {self.uri}: reply has no 'actions' (got {keys})")
        actions = np.asarray(reply["actions"], dtype=np.float32)
        if actions.ndim == 1:
            actions = actions.reshape(-1, self.action_dim)
        if self.action_dim == 7 and actions.ndim == 2 and actions.shape[1] == 8:
            actions = actions[:, :7]
        chunk = validate_chunk(actions, self.action_dim, where=f"challenge server {self.uri}")
        self.timings.append({"seed": self.seed, "query": self._queries, "step": obs.get("step"),
                             "roundtrip_ms": roundtrip_ms, "infer_time_ms": _as_float(reply.get("infer_time_ms")),
                             "frames_sent": len(request["front_rgb_list"]), "chunk": int(len(chunk)),
                             "server_timing": _plain(reply.get("server_timing"))})
        return chunk
