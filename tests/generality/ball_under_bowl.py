"""BallUnderBowl: VideoUnmask with a ball for the cube and "bowl" for "container". A test-only env.

Why: the memory is meant to be switched on by what a goal means, never by a task's name or its
particular nouns. This env keeps everything of VideoUnmask (layout draw, timeline, containers,
subgoal structure, solvers, failure rule) and changes

* the hidden object: a sphere of radius ``BALL_RADIUS`` (a real SAPIEN sphere collision and
  visual, resting on the table at height ``BALL_RADIUS``) instead of a cube of half-size 0.02/1.2;
* the nouns of the goal, the subgoals and the probes: "ball" for "cube", "bowl" for "container"
  ("watch the video carefully, then pick up the bowl hiding the red ball").

The covers keep the container's geometry (an upside-down open box with a knob); only their noun
changes. "bowl" was already a surface word of the container concept in the memory's word table;
"ball" is a new concept there (``memory/language/words.py``).

It is not a 17th task: it has no card, so the harness does not list it. :func:`registered`
makes the harness know it for the duration of a test (its class, and a seed code, VideoUnmask's:
so its episode ``i`` draws VideoUnmask's episode ``i`` layout, and the two differ only in the object
and the words).
"""

from __future__ import annotations

from contextlib import contextmanager

import sapien

from envs.core import primitives as P
from envs.episodes import EpisodeSpec, base_seed, difficulty_for
from envs.tasks.video_unmask import VideoUnmask

TASK = "BallUnderBowl"
SEED_CODE_OF = "VideoUnmask"
"""The task whose seed code this env borrows: same seeds, same layouts."""

BALL_RADIUS = 0.02
"""Close to the cube's half-size (0.02/1.2), and it fits the container's 0.05 inside with 5 mm to
spare each side. Its colour blob in the front camera is about 0.6-0.8 of the cube's (shading and the
highlight leave fewer saturated pixels on a sphere), within the colour tools' pixel ranges."""


class BallUnderBowl(VideoUnmask):
    TASK = TASK
    OBJECT_NOUN = "ball"
    COVER_NOUN = "bowl"
    HIDDEN_REST_Z = BALL_RADIUS

    def build_hidden(self, colour: str):
        """A dynamic sphere of ``colour``; high friction and angular damping so it stays where it is put."""
        b = self.scene.create_actor_builder()
        grip = sapien.physx.PhysxMaterial(static_friction=2.0, dynamic_friction=2.0, restitution=0.0)
        b.add_sphere_collision(radius=BALL_RADIUS, material=grip)
        # the cubes' material (envs/core/primitives.py): only the shape differs
        b.add_sphere_visual(radius=BALL_RADIUS, material=sapien.render.RenderMaterial(base_color=[*P.COLOURS[colour], 1.0], roughness=0.5))
        b.initial_pose = sapien.Pose(p=[0, 0, BALL_RADIUS])
        ball = b.build(name=f"ball_{colour}")
        ball.set_linear_damping(2.0)
        ball.set_angular_damping(5.0)
        return ball


def episode(idx: int, split: str = "train") -> EpisodeSpec:
    """Episode ``idx`` of the test env on ``split`` (train: the split the tests play): VideoUnmask's base
    seed and difficulty for that episode, without its retry offset (the scene is VideoUnmask's
    episode ``idx`` wherever that episode needed no retry)."""
    return EpisodeSpec(TASK, split, idx, base_seed(SEED_CODE_OF, split, idx), difficulty_for(idx, split))


@contextmanager
def registered():
    """Let the harness build and seed the test env by name while the block runs (no card: not a benchmark task)."""
    import envs
    import envs.episodes as episodes

    envs.TASK_CLASSES[TASK] = f"{__name__}:BallUnderBowl"
    episodes.TASK_CODES[TASK] = episodes.TASK_CODES[SEED_CODE_OF]
    try:
        yield
    finally:
        envs.TASK_CLASSES.pop(TASK, None)
        episodes.TASK_CODES.pop(TASK, None)
