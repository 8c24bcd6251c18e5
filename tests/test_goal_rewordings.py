"""The project's reworded goals: enough of them, varied, fillable on every train episode, drawn
deterministically from the episode's goal stream, and given to every consumer by the env."""

from __future__ import annotations

import re

import pytest

from envs import ALL_TASKS
from envs.core.rewording import GOAL_PLACEHOLDERS, draw_rewording, placeholders_of, rewordings
from experiments.loop.streams import stream_seed
from tests.goal_cases import goal_cases, layout_only, rewordings_of

CASES = goal_cases(range(20))


def test_every_task_has_ten_rewordings_per_variant_three_held_out():
    data = rewordings()
    assert set(data) == set(ALL_TASKS)
    for task, variants in data.items():
        for v in variants:
            assert len(v.all) >= 10, (task, v.when)
            assert len(v.held_out) >= 3, (task, v.when)
            assert len(set(v.all)) == len(v.all), f"{task}: a rewording is listed twice"
            assert not set(v.dev) & set(v.held_out)
            assert len(v.probe) >= 2 and not set(v.probe) & set(v.all), (task, v.when)
            for text in v.all + v.probe:
                assert placeholders_of(text) <= set(GOAL_PLACEHOLDERS), (task, text)


def test_rewordings_vary_wording_not_only_values():
    """Each variant's rewordings differ from each other in more than the filled values, and none
    of them is the template."""
    for case in CASES:
        texts = rewordings_of(case, "dev") + rewordings_of(case, "held_out")
        assert case.template not in texts
        first_words = {t.split()[0] for t in texts}
        assert len(first_words) >= 4, (case.task, first_words)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.task}-{c.episode}")
def test_every_train_episode_fills_a_variant(case):
    for text in rewordings_of(case, "dev") + rewordings_of(case, "held_out") + rewordings_of(case, "probe"):
        assert "{" not in text and "}" not in text
        assert re.fullmatch(r"[a-z0-9 ,;:'\-]+", text), text


def test_draw_is_the_episode_goal_stream():
    t = layout_only("PickXtimes", 3)
    seed = stream_seed(7, "PickXtimes", "train", 3, "goal")
    a = t.goal_text("reworded", seed)
    assert a == t.goal_text("reworded", seed)
    assert t.goal_text("template", seed) == t.goal_texts()[0]
    drawn = {draw_rewording("PickXtimes", t.goal_values(), s) for s in range(40)}
    assert len(drawn) >= 5  # the stream picks among the rewordings, not always the same one
    with pytest.raises(ValueError):
        t.goal_text("paraphrased", seed)


def test_the_cli_option_reaches_the_config():
    from experiments.loop.config import parse_config

    cfg = parse_config(["--goal-style", "reworded", "--split", "train"])
    assert cfg.env.goal_style == "reworded"
    assert cfg.to_dict()["env"]["goal_style"] == cfg.flat_dict()["goal_style"] == "reworded"
    assert "goal_style" in cfg.outcome_fields()
    assert parse_config([]).env.goal_style == "template"


def test_a_goal_names_the_pool_it_was_drawn_from():
    """The report reads a row's rewording pool back from its goal text (docs/RESULTS.md counts the
    held-out paraphrases that way), so every wording must map back to its own pool and only to it."""
    import string

    from envs.core.rewording import pool_of, rewordings

    checked = 0
    for task, variants in rewordings().items():
        for variant in variants:
            for pool, texts in (("dev", variant.dev), ("held_out", variant.held_out), ("probe", variant.probe)):
                for text in texts:
                    names = {n for _, n, _, _ in string.Formatter().parse(text) if n}
                    goal = text.format(**{n: "red cube" for n in names})
                    assert pool_of(task, goal) == pool, (task, pool, goal)
                    checked += 1
    assert checked >= 100
    assert pool_of("PickXtimes", "do something no wording says") is None


def test_held_out_and_probe_styles_draw_only_their_pool():
    """``reworded-held-out`` and ``reworded-probe`` give wordings of that pool alone (read back from
    the text), ``reworded`` never a probe one; the same goal seed, the same wording."""
    from envs import make_env
    from envs.core.rewording import pool_of
    from envs.episodes import episode_spec

    env = make_env("PickXtimes")
    try:
        pools: dict[str, set] = {"reworded": set(), "reworded-held-out": set(), "reworded-probe": set()}
        _, info = env.reset(options={"episode": episode_spec("PickXtimes", 0, "train"), "goal_style": "reworded-probe",
                                     "goal_seed": 3})
        task = env.unwrapped
        assert info["goal"] == task.goal_text("reworded-probe", 3)  # the reset gives the drawn goal
        for seed in range(40):
            for style in pools:
                pools[style].add(pool_of("PickXtimes", task.goal_text(style, seed)))
        assert pools["reworded-held-out"] == {"held_out"} and pools["reworded-probe"] == {"probe"}
        assert pools["reworded"] <= {"dev", "held_out"}
    finally:
        env.close()
    from experiments.loop.config import parse_config

    assert parse_config(["--goal-style", "reworded-probe", "--split", "train"]).env.goal_style == "reworded-probe"
