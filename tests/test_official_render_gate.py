"""The official envs' render gate (``--official-render-gate``), where ``robomme`` is importable:
the same episode with and without it gives the same oracle texts and outcome with far fewer
renders, and the same frames a consumer reads, every frame labelled with its entry's own clock."""

from __future__ import annotations

import numpy as np
import pytest

from envs.official.install import robomme_available

AVAILABLE, WHY = robomme_available()
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900),
              pytest.mark.skipif(not AVAILABLE, reason=f"the official robomme package is not importable ({WHY})")]


def _play(gated: bool, task: str = "PickXtimes", episode: int = 0):
    from envs.official.env import OfficialSubgoalEnv
    from envs.official.episodes import official_episode_spec

    env = OfficialSubgoalEnv(task, split="train", render_lod="simplified", frame_stride=4, video_stride=2)
    env.render_only_consumed = gated
    obs, info = env.reset(options={"episode": official_episode_spec(task, episode, "train")})
    video = [np.asarray(f) for f in info["video"].front]
    frames, texts, spans = {}, [], []
    for _ in range(60):
        texts.append(env.oracle_subgoal())
        obs, _, term, trunc, info = env.step(texts[-1])
        frames.update({f.step: f.rgb for f in info["frames"] if f.rgb is not None})
        spans.append((info["frames"][0].step, info["frames"][-1].step))
        if term or trunc:
            break
    # each decision's frames start right after the previous decision's last one: after the final press
    # the benchmark's wrapper takes an extra, unlisted step per entry, which a count back from the
    # last clock would hide by shifting every earlier frame of that decision
    assert all(b[0] == a[1] + 1 for a, b in zip(spans, spans[1:])), spans
    out = frames, texts, info["status"], info["steps"], env.timings["renders"], video
    env.close()
    return out


@pytest.mark.parametrize("task, episode", [("PickXtimes", 0), ("VideoRepick", 1)])
def test_the_gate_keeps_the_oracle_and_the_outcome_and_renders_far_less(task, episode):
    """PickXtimes: the final press runs steps past the episode's end; VideoRepick: a demonstration
    of many subgoals, then an option that runs dozens of steps after the episode has terminated."""
    fa, ta, sa, na, ra, va = _play(True, task, episode)
    fb, tb, sb, nb, rb, vb = _play(False, task, episode)
    assert (ta, sa, na) == (tb, sb, nb) and sa == "success"
    assert ra < rb / 2, (ra, rb)
    assert fa.keys() == fb.keys()
    assert [k for k in fa if not np.array_equal(fa[k], fb[k])] == []
    assert len(va) == len(vb) and all(np.array_equal(a, b) for a, b in zip(va, vb))  # the video too
