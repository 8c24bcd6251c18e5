"""``--render-lod`` on the official backend: the same decimated robot visual meshes as our envs.

The official wrappers render the front camera (RGB, depth and segmentation) and the hand camera at
every env step, and software Vulkan is geometry-bound (most of a frame is the robot's visual
meshes, above all the wrist camera model: ``envs/core/render_lod.py``). ``simplified`` points the
robot classes the benchmark builds (``panda_wristcam``, ``panda_stick``) at the cached copy of
their asset directory whose *visual* meshes are decimated; URDF, SRDF and collision meshes are the
packaged bytes, so physics and the motion planner's model are unchanged (tests/test_render_lod.py).
``full`` restores the packaged paths: the frames the benchmark itself renders.
"""

from __future__ import annotations

from envs.core.render_lod import build_lod_assets, check_render_lod


def apply_render_lod(render_lod: str) -> dict[str, str]:
    """Point the benchmark's robot classes at the ``render_lod`` assets; returns uid -> urdf path."""
    from mani_skill.agents.robots.panda.panda_stick import PandaStick
    from mani_skill.agents.robots.panda.panda_wristcam import PandaWristCam

    check_render_lod(render_lod)
    out = {}
    for cls in (PandaWristCam, PandaStick):
        full = cls.__dict__.get("_robomem_full_urdf") or cls.urdf_path
        cls._robomem_full_urdf = full
        cls.urdf_path = full if render_lod == "full" else str(build_lod_assets(full))
        out[cls.uid] = cls.urdf_path
    return out
