"""The subgoal composer of one episode, from its kind and the run's ``composer`` group.

Shared by both backends (``experiments.loop.unit`` for ours, ``experiments.loop.official_backend`` for the
benchmark's envs), so neither imports the other for it.
"""

from __future__ import annotations


def build_composer(kind: str, composer_cfg, env):
    """The composer ``kind`` (``oracle``, ``history-blind``, ``prior`` or ``vlm``) over ``env``; its
    settings come from ``composer_cfg`` (:class:`experiments.loop.config.ComposerConfig`)."""
    from policies.composers import LaggedComposer, OracleComposer

    if kind == "oracle":
        return OracleComposer(env)  # the ceiling is never lagged
    composer = _composer(kind, composer_cfg, env)
    lag = getattr(composer_cfg, "proposal_lag", 0)
    return LaggedComposer(composer, lag) if lag else composer


def _composer(kind: str, composer_cfg, env):
    from policies.composers import HistoryBlindComposer

    if kind == "history-blind":
        return HistoryBlindComposer(env, p=composer_cfg.history_blind_p)
    if kind == "prior":
        from policies.composers import PriorComposer
        from policies.slot_prior import DEFAULT_PATH, SlotPrior

        return PriorComposer(env, SlotPrior.load(getattr(composer_cfg, "slot_prior", None) or DEFAULT_PATH))
    if kind == "vlm":
        from policies.vlm import VLMComposer

        if composer_cfg.vlm_endpoint:
            return VLMComposer.from_url(composer_cfg.vlm_endpoint, composer_cfg.vlm_model)
        return VLMComposer.from_local(composer_cfg.vlm_model)
    raise ValueError(f"unknown composer {kind!r}")
