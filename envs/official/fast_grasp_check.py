"""An exact, cheaper ``is_grasping`` for ManiSkill's Panda agents (bridged onto one agent instance).

The benchmark's success and failure checks ask, at every env step, whether the robot grasps each of
a task's objects (``is_any_obj_pickup`` over every spawned cube: VideoRepick asks about a dozen
cubes per step, most of an official step's CPU time). ManiSkill's ``Panda.is_grasping`` scans the
scene's contacts for each finger and the object, then computes both fingers' poses as matrices and
the angle between each finger's opening direction and its force; it returns ``lflag & rflag``, and
each flag needs that finger's contact force to be at least ``min_force``. For almost every
(step, object) pair the answer is decided before any of that: a finger that does not touch the
object has no force on it, so the answer is False whatever the angles.

:func:`install_fast_grasp_check` wraps the instance's method (CPU simulation only): it lists once
per physics step which bodies touch (:class:`ContactPairs`) and returns all-False when a finger
does not touch the object; otherwise it calls ManiSkill's own method. Every answer is therefore the
original one (``tests/test_fast_grasp_check.py`` compares them at every step of a real pick). Physics
never reads this check, so it changes no trajectory, only how long a step takes.
"""

from __future__ import annotations

import torch


class ContactPairs:
    """Which pairs of entities touch after the scene's last physics step, listed once per step.

    PhysX reports contacts as the last ``step`` left them, so the list can change only at a step:
    :meth:`touching` rebuilds it when the scene has stepped since (the scene's ``step`` is wrapped to
    count) or the contact count differs, and otherwise answers from the set."""

    def __init__(self, scene):
        self.scene = scene
        self.steps = 0
        self._key = None
        self._pairs: set = set()
        step = scene.step

        def counted_step():
            self.steps += 1
            return step()

        scene.step = counted_step

    def touching(self, a, b) -> bool:
        contacts = self.scene.px.get_contacts()
        key = (self.steps, id(self.scene.px), len(contacts))
        if key != self._key:
            pairs = set()
            for c in contacts:
                e0, e1 = c.bodies[0].entity, c.bodies[1].entity
                pairs.add((e0, e1))
                pairs.add((e1, e0))
            self._pairs, self._key = pairs, key
        return (a, b) in self._pairs


def install_fast_grasp_check(agent) -> bool:
    """Wrap ``agent.is_grasping`` with the contact short-circuit; False (left untouched) where the
    agent has no Panda-style fingers or the simulation runs on the GPU. Installing twice is a no-op."""
    if getattr(agent, "_fast_grasp_original", None) is not None:
        return True
    if not all(hasattr(agent, a) for a in ("finger1_link", "finger2_link", "scene", "is_grasping")):
        return False
    scene = agent.scene
    if getattr(scene, "gpu_sim_enabled", False) or len(getattr(scene, "sub_scenes", ())) != 1:
        return False
    original = agent.is_grasping
    contacts = ContactPairs(scene)
    fingers = (agent.finger1_link._bodies[0].entity, agent.finger2_link._bodies[0].entity)

    def is_grasping(object, min_force=0.5, max_angle=85):
        entity = object._bodies[0].entity
        if not all(contacts.touching(f, entity) for f in fingers):
            return torch.zeros(1, dtype=torch.bool, device=scene.device)  # a finger has no force on it
        return original(object, min_force=min_force, max_angle=max_angle)

    agent._fast_grasp_original = original
    agent.is_grasping = is_grasping
    return True
