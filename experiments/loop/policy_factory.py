"""The run's low-level policy (``--policy``) over a low-level env, for either backend."""

from __future__ import annotations


def build_policy(cfg, low):
    """The run's low-level policy over ``low`` and whether it reads images (``cfg.policy.kind``)."""
    pc, horizon = cfg.policy, cfg.env.horizon
    if pc.kind == "scripted":
        from policies.scripted import ScriptedPolicy

        from policies.executor_profile import load_profile

        return ScriptedPolicy(low, horizon=horizon, noise=pc.policy_noise,
                              profile=load_profile(pc.executor_profile)), False
    if pc.kind == "openpi":
        from policies.base import ActionHorizon
        from policies.openpi_client import OpenPIPolicy

        # the stick robot takes 7-D actions: the client drops the 8-column reply's gripper column
        inner = OpenPIPolicy(host=pc.openpi_host, port=pc.openpi_port, action_dim=int(low.action_space.shape[0]),
                             connect_timeout_s=pc.openpi_connect_timeout_s, recv_timeout_s=pc.openpi_recv_timeout_s,
                             server_kind=pc.openpi_server)
        return ActionHorizon(inner, horizon), True
    if pc.kind == "challenge":
        from policies.challenge_client import ChallengePolicy

        return ChallengePolicy(low, host=pc.openpi_host, port=pc.openpi_port, horizon=horizon,
                               action_dim=int(low.action_space.shape[0]), connect_timeout_s=pc.openpi_connect_timeout_s,
                               recv_timeout_s=pc.openpi_recv_timeout_s), True
    if pc.kind == "lerobot":
        from policies.base import ActionHorizon
        from policies.lerobot_policy import LeRobotPI05Policy

        if not pc.lerobot_path:
            raise ValueError("--policy lerobot needs --lerobot-path (a local PI05 checkpoint directory)")
        return ActionHorizon(LeRobotPI05Policy(pc.lerobot_path), horizon), True
    raise ValueError(f"unknown policy {pc.kind!r}")
