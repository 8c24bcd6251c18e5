"""A worked example of generality: the memory on a task it was not written for, with word-table entries only.

The test env (``tests/generality/ball_under_bowl.py``) is VideoUnmask with a real sphere, a "ball",
for the hidden cube and "bowl" for "container" in every text. The memory gets one new concept in
its word table (``"ball"`` in ``memory/language/words.py``'s ``CONCEPT_NOUNS``); "bowl" was already a
word of the container concept. The fast tests check that the table resolves the new words and that
the specifier, the access and the record contract read a ball goal as they read a cube goal; the
episode test plays the env through the harness (oracle, no-memory, memory) and checks that the
memory's binding is of the ball and turns the blind arm's failures into successes.
"""

from __future__ import annotations

import numpy as np
import pytest

from memory.control.access import slot_query
from memory.language.lexicon import canonical_text
from memory.language.needs import Need, needs_of
from memory.language.spec import ReadKind, specify
from memory.language.words import CONCEPT_NOUNS, OBJECT_ROLES, ROLE_SYNONYMS, canonical_role
from subgoals.grammar import parse_subgoal
from subgoals.record_names import check_record_name, cover_binding
from tests.generality.ball_under_bowl import BALL_RADIUS, SEED_CODE_OF, TASK, BallUnderBowl, episode, registered

GOAL = "watch the video carefully, then pick up the bowl hiding the green ball, finally pick up another bowl hiding the blue ball"


# --------------------------------------------------------------------------- the word table (fast)


def test_the_word_table_resolves_the_new_nouns():
    assert CONCEPT_NOUNS["ball"] == ("ball", "sphere", "orb")
    for word in ("ball", "balls", "sphere", "spheres", "orb", "orbs"):
        assert ROLE_SYNONYMS[word] == "ball" == canonical_role(word), word
    assert canonical_role("bowl") == canonical_role("bowls") == "cover"  # an old surface word of the container
    assert canonical_role("ball") != canonical_role("cube")  # a ball is its own concept, not a kind of cube
    assert "ball" in OBJECT_ROLES and "cover" not in OBJECT_ROLES and not set(OBJECT_ROLES) & {"target", "bin"}
    assert canonical_text("the bowls hiding the red spheres") == "the containers hiding the red balls"


def test_a_ball_goal_is_specified_as_the_cube_goal_is():
    ball, cube = specify(GOAL), specify(GOAL.replace("bowl", "container").replace("ball", "cube"))
    assert ball.bindings == (cover_binding("green ball"), cover_binding("blue ball"))
    assert ball.watch == ("green ball", "blue ball")
    assert ball.reads == cube.reads == frozenset({ReadKind.COVER_BINDING})
    assert needs_of(ball) == needs_of(cube) and Need.COVER_BINDING in needs_of(ball)
    assert ball.unfilled == ()
    # synonyms of the new concept read the same
    assert specify(GOAL.replace("ball", "orb")).bindings == ball.bindings


def test_the_access_reads_a_ball_binding_from_a_bowl_subgoal():
    np_ = parse_subgoal("pick up the bowl at <80, 90> that hides the red ball").noun_phrases[0]
    q = slot_query(np_)
    assert q is not None and q.kind is ReadKind.COVER_BINDING
    assert (q.role, q.binding, q.identity) == ("cover", cover_binding("red ball"), "red ball")


def test_the_record_contract_takes_a_ball_binding():
    assert check_record_name(cover_binding("red ball")) == "cover hiding the red ball"
    with pytest.raises(ValueError, match="unknown record name"):
        check_record_name("cover hiding the ball")  # no colour: no tool writes it


# --------------------------------------------------------------------------- the env without a scene (fast)


def _layout(cls, seed: int, difficulty: str):
    t = cls.__new__(cls)
    t.layout = cls.sample_layout(t, np.random.default_rng(seed), difficulty)
    return t


@pytest.mark.parametrize("idx", [0, 3])
def test_the_env_changes_only_the_words_of_its_base(idx):
    from envs.tasks.video_unmask import VideoUnmask

    from envs.episodes import difficulty_for

    spec = episode(idx)
    assert (spec.task, spec.split, spec.difficulty) == (TASK, "train", difficulty_for(idx, "train"))
    ball, cube = _layout(BallUnderBowl, spec.env_seed, spec.difficulty), _layout(VideoUnmask, spec.env_seed, spec.difficulty)
    assert ball.layout == cube.layout  # the same seed draws the same scene
    text = ball.goal_texts()[0]
    assert text == cube.goal_texts()[0].replace("container", "bowl").replace("cube", "ball")
    assert "cube" not in text and "container" not in text
    with registered():
        from envs import episode_spec, task_class

        assert task_class(TASK) is BallUnderBowl and episode_spec(TASK, idx, "train") == spec
    from envs import ALL_TASKS, TASK_CLASSES

    assert TASK not in ALL_TASKS and TASK not in TASK_CLASSES  # not a benchmark task, once the block is over
    assert SEED_CODE_OF in ALL_TASKS


# --------------------------------------------------------------------------- episodes through the harness


def _run(ep: int, condition: str):
    from experiments.loop.config import ExperimentConfig
    from experiments.loop.episode import run_episode
    from experiments.loop.records import WorkUnit
    from experiments.loop.unit import build_parts

    cfg = ExperimentConfig.from_flat(out="/tmp/robomem_generality_ball", wandb="disabled")
    parts = build_parts(WorkUnit(task=TASK, split="train", episode=ep, condition=condition, seed=7), cfg)
    return run_episode(episode(ep, "train"), parts), parts


# easy (three bowls, one pick; about 12 s with the env's build) and hard (more bowls, two picks, a put-down)
@pytest.mark.parametrize("ep", [0, pytest.param(3, marks=pytest.mark.slow)])
def test_memory_binds_the_ball_and_turns_a_blind_failure_into_a_success(ep):
    with registered():
        oracle, oracle_parts = _run(ep, "oracle")
        t = oracle_parts.env.get_wrapper_attr("low").unwrapped
        blind, _ = _run(ep, "no-memory")
        mem, parts = _run(ep, "memory")

    # the env is real: spheres in the simulation, resting where the layout put them, and the oracle solves it
    assert isinstance(t, BallUnderBowl)
    for ball in t.hidden_cubes:
        (shape,) = ball._bodies[0].get_collision_shapes()
        assert type(shape).__name__ == "PhysxCollisionShapeSphere" and shape.radius == pytest.approx(BALL_RADIUS)
    assert oracle.status == "success", (oracle.error, oracle.subgoals)
    assert "bowl" in oracle.goal and "ball" in oracle.goal and "cube" not in oracle.goal
    assert all("container" not in s["oracle"] and "cube" not in s["oracle"] for s in oracle.subgoals)

    # without memory the proposal is a draw among look-alike bowls, and here it draws wrong
    assert blind.status == "fail", blind.subgoals
    assert blind.history_audit["proposals_wrong"] >= 1 and blind.history_audit["right"] == 0

    # with memory: the same wrong proposals, corrected, and the episode succeeds
    assert mem.status == "success", (mem.error, mem.subgoals)
    assert mem.history_audit["corrected"] >= 1 and mem.memory["abstentions"] == 0
    picks = t.layout.pick_colours
    wanted = tuple(cover_binding(f"{c} ball") for c in picks)
    assert tuple(mem.memory["spec"]["bindings"]) == wanted
    # the memory's records bind a cover to each named ball, and the audit asks about balls in bowls
    bound = {r.binding for r in parts.memory.store.entities().values() if r.binding and r.role == "cover"}
    assert set(wanted) <= bound
    notes = {r.identity: r.role for r in parts.memory.store.entities().values() if r.identity.endswith(" ball")}
    assert set(notes) == {f"{c} ball" for c in picks} and set(notes.values()) == {"ball"}
    binding = mem.memory["assessment"]["by_kind"]["binding"]
    assert binding["asked"] >= len(picks) and binding["right"] == binding["asked"]
    assert all(" ball?" in e["question"] and "bowl" in e["question"] for e in mem.memory["assessment"]["log"])
