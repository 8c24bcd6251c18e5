"""The benchmark's planner behind a policy server: the whole learned-policy path runs without weights.

A real websocket server process (the wire protocol of ``policies/policy_server.py``: openpi's
msgpack-numpy, metadata first, the benchmark server's reset message) that answers each request's
subgoal with the joint-space chunk the benchmark's own planner would execute for it
(:class:`policies.episode_planner.EpisodePlanner`). Memory -> subgoal -> this server -> chunk ->
the official controller (``--backend robomme --policy openpi``) then runs end to end on the CPU,
and a real π0.5 server is the same command with another ``--openpi-host``.

The reset message must name the episode (``{"reset": True, "episode": {"task", "split",
"episode_idx", "env_seed", "difficulty"}}``, what the harness's client sends): the server builds its
own copy of that episode and never sees anything else of the client but the requests. Requests in
either format are answered:

* openpi / MME-VLA (``observation/state``, ``grounded_subgoal`` / ``simple_subgoal``);
* the challenge interface (``front_rgb_list`` ... ``joint_state_list``, ``task_goal``,
  ``is_first_step``), with the subgoal in the same two keys when the client has one.

Each chunk has ``--chunk`` actions (the client must execute all of them: the copy assumes it);
replies also carry ``planner`` (the subgoal, actions planned / left, the client's joint drift from
the copy, plans so far). Without the official ``robomme`` package the server cannot plan and says so
at the reset.

Usage::

    python -m policies.planner_server --port 8010
    python -m experiments.run --backend robomme --policy openpi --openpi-port 8010 --openpi-server benchmark ...
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence

import numpy as np

from policies.policy_server import PolicyServer, serve_until_stopped
from policies.serving_protocol import reset_reply

log = logging.getLogger("planner_server")

EPISODE_KEYS = ("task", "split", "episode_idx", "env_seed")


def episode_of(message: dict):
    """The :class:`envs.episodes.EpisodeSpec` a reset message names; ValueError naming what is missing."""
    from envs.episodes import EpisodeSpec

    ep = message.get("episode") if isinstance(message, dict) else None
    if not isinstance(ep, dict):
        raise ValueError("the planner server needs the episode in the reset message: "
                         "{'reset': True, 'episode': {'task', 'split', 'episode_idx', 'env_seed'}} "
                         f"(got keys {sorted(message) if isinstance(message, dict) else type(message).__name__})")
    missing = [k for k in EPISODE_KEYS if k not in ep]
    if missing:
        raise ValueError(f"the reset message's episode lacks {', '.join(missing)} (got {sorted(ep)})")
    return EpisodeSpec(str(ep["task"]), str(ep["split"]), int(ep["episode_idx"]), int(ep["env_seed"]),
                       str(ep.get("difficulty") or ""))


def subgoal_of(request: dict) -> str:
    """The subgoal a request carries (both formats use the benchmark's two keys), or ""."""
    for key in ("grounded_subgoal", "simple_subgoal"):
        text = request.get(key)
        if isinstance(text, str) and text.strip():
            return text.strip()
    return ""


def joints_of(request: dict) -> np.ndarray | None:
    """The client's 7 arm joints: ``observation/state`` (openpi) or the last ``joint_state_list`` entry."""
    if "observation/state" in request:
        return np.asarray(request["observation/state"], np.float32).reshape(-1)[:7]
    js = request.get("joint_state_list")
    if js is not None and len(js):
        return np.asarray(js[-1], np.float32).reshape(-1)[:7]
    return None


class PlannerServer(PolicyServer):
    """A benchmark-kind policy server whose policy is :class:`EpisodePlanner` (module docstring)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, chunk: int = 16, render_lod: str = "simplified"):
        super().__init__(policy="hold", host=host, port=port, horizon=chunk, action_dim=8, kind="benchmark",
                         metadata={"policy": "planner", "executes_every_action": True})
        self.render_lod = render_lod
        self.planner = None
        self.episodes = 0
        self.last_info: dict = {}

    def _reset(self, message: dict | None = None) -> dict:
        from policies.episode_planner import EpisodePlanner

        t0 = time.monotonic()
        spec = episode_of(message or {})
        with self._lock:
            if self.planner is not None:
                self.planner.close()
            self.planner = EpisodePlanner(spec, chunk=self.horizon, render_lod=self.render_lod)
            self.episodes += 1
            self.resets += 1
        log.info("episode %s %s %d ready in %.1f s", spec.task, spec.split, spec.episode_idx, time.monotonic() - t0)
        return reset_reply((time.monotonic() - t0) * 1000.0)

    def _infer(self, obs: dict) -> np.ndarray:
        with self._lock:
            if self.planner is None:
                raise RuntimeError("no episode: send the reset message with the episode first")
            actions, info = self.planner.act(subgoal_of(obs), joints_of(obs))
            self.last_info = info
            return actions


    def _reply_extra(self) -> dict:
        return {"planner": {k: v for k, v in self.last_info.items() if v is not None}}


def build_arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m policies.planner_server", description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1, local only)")
    p.add_argument("--port", type=int, default=8010, help="TCP port; 0 picks a free one (printed on stdout)")
    p.add_argument("--chunk", type=int, default=16, help="actions per reply; the client executes all of them")
    p.add_argument("--render-lod", choices=("simplified", "full"), default="simplified",
                   help="robot meshes of the server's own copy (rendering never changes its physics)")
    p.add_argument("--max-lifetime-s", type=float, default=None, help="exit after this many seconds")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    server = PlannerServer(host=args.host, port=args.port, chunk=args.chunk, render_lod=args.render_lod)
    return serve_until_stopped(server, "planner_server", args.max_lifetime_s)


if __name__ == "__main__":
    sys.exit(main())
