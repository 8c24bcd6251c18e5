"""Render level of detail: fewer visual triangles, the same physics, a deterministic cache."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
import sapien  # noqa: F401 - SAPIEN initialised before ManiSkill, as the env modules do

import envs
from envs.core import render_lod as R
from envs.episodes import episode_spec

TASK = "PickXtimes"


def _env(lod: str | None):
    kwargs = {} if lod is None else {"render_lod": lod}
    env = envs.task_class(TASK)(**kwargs)
    env.reset(options={"episode": episode_spec(TASK, 0)})
    return env


@pytest.fixture(scope="module")
def both():
    full, simp = _env("full"), _env(None)  # None: the CPU default
    yield full, simp
    full.close()
    simp.close()


def test_default_on_cpu_is_simplified(both):
    full, simp = both
    assert simp.render_lod == "simplified" and full.render_lod == "full"


def test_simplified_scene_has_far_fewer_visual_triangles(both):
    full, simp = both
    tf, ts = R.visual_triangles(full.scene), R.visual_triangles(simp.scene)
    assert set(tf) == set(ts)
    assert sum(ts.values()) < 0.15 * sum(tf.values()), (sum(ts.values()), sum(tf.values()))
    assert ts["camera_link"] < 0.05 * tf["camera_link"]
    # only the robot is simplified: every other body keeps its triangles
    robot = {link.name for link in full.agent.robot.get_links()}
    for name in tf:
        if name not in robot:
            assert ts[name] == tf[name], name


def test_full_keeps_the_packaged_meshes(both):
    from mani_skill.agents.robots.panda.panda_wristcam import PandaWristCam

    full, simp = both
    assert full.agent.urdf_path == PandaWristCam.urdf_path
    # the packaged class, with only the benchmark's hand camera added (envs/core/hand_camera.py)
    assert type(full.agent).__mro__[1] is PandaWristCam and "urdf_path" not in vars(type(full.agent))
    assert sum(R.visual_triangles(full.scene).values()) == 582_036  # the packaged scene as measured in the issue
    assert Path(simp.agent.urdf_path).is_relative_to(R.cache_root())
    assert simp.agent.uid == full.agent.uid and isinstance(simp.agent, PandaWristCam)
    assert Path(simp.agent.urdf_path).read_bytes() == Path(PandaWristCam.urdf_path).read_bytes()


def _collision_signature(env) -> list:
    out = []
    for link in env.agent.robot.get_links():
        for shape in link._objs[0].collision_shapes:
            sig = [link.name, type(shape).__name__, tuple(np.round(shape.local_pose.p, 9)), tuple(np.round(shape.local_pose.q, 9))]
            if hasattr(shape, "vertices"):
                sig.append(hashlib.sha256(np.ascontiguousarray(shape.vertices).tobytes()).hexdigest())
            if hasattr(shape, "half_size"):
                sig.append(tuple(shape.half_size))
            out.append(tuple(sig))
        body = link._objs[0]
        out.append((link.name, float(body.mass), tuple(body.inertia), tuple(body.cmass_local_pose.p)))
    return out


def test_collision_shapes_and_masses_identical(both):
    full, simp = both
    assert _collision_signature(full) == _collision_signature(simp)


def test_rollout_bit_identical(both):
    full, simp = both
    for env in (full, simp):
        env.reset(options={"episode": episode_spec(TASK, 0)})
    q0 = full.qpos()
    assert np.array_equal(q0, simp.qpos())
    n = full.action_space.shape[0]
    for k in range(40):
        a = np.zeros(n, np.float32)
        a[:7] = q0[:7]
        a[1] += 0.6 * np.sin(k / 10)
        a[3] += 0.3 * k / 40
        a[7:] = 0.0 if k > 20 else 0.04
        full.step(a)
        simp.step(a)
    assert np.array_equal(full.qpos(), simp.qpos())
    assert np.array_equal(full.agent.robot.get_qvel().numpy(), simp.agent.robot.get_qvel().numpy())
    for af, as_ in zip(full.scene.sub_scenes[0].entities, simp.scene.sub_scenes[0].entities):
        assert af.name == as_.name
        assert np.array_equal(af.pose.p, as_.pose.p) and np.array_equal(af.pose.q, as_.pose.q), af.name


def test_cache_built_once_and_deterministic(tmp_path):
    from mani_skill.agents.robots.panda.panda_wristcam import PandaWristCam

    a = R.build_lod_assets(PandaWristCam.urdf_path, root=tmp_path / "a")
    b = R.build_lod_assets(PandaWristCam.urdf_path, root=tmp_path / "b")
    assert a.parent.name == b.parent.name  # same key
    files_a = sorted(p.relative_to(a.parent) for p in a.parent.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b.parent) for p in b.parent.rglob("*") if p.is_file())
    assert files_a == files_b and files_a
    for rel in files_a:
        assert (a.parent / rel).read_bytes() == (b.parent / rel).read_bytes(), rel
    # collision meshes are copies of the packaged files (never links into the install that built them)
    _, collision = R.urdf_meshes(a.read_text())
    for rel in collision:
        assert not (a.parent / rel).is_symlink()
        assert (a.parent / rel).read_bytes() == (Path(PandaWristCam.urdf_path).parent / rel).read_bytes()
    assert R.entry_problem(a.parent) is None
    # reused, not rebuilt
    mtime = os.stat(a.parent / "franka_description/meshes/visual/link0.glb").st_mtime_ns
    assert R.build_lod_assets(PandaWristCam.urdf_path, root=tmp_path / "a") == a
    assert os.stat(a.parent / "franka_description/meshes/visual/link0.glb").st_mtime_ns == mtime
    assert len(list((tmp_path / "a").iterdir())) == 1


def test_unknown_render_lod_names_it():
    with pytest.raises(ValueError, match="'medium'"):
        R.check_render_lod("medium")
    with pytest.raises(ValueError, match="'coarse'"):
        envs.task_class(TASK)(render_lod="coarse")


def test_simplified_front_frame_close_to_full(both):
    full, simp = both
    for env in (full, simp):
        env.reset(options={"episode": episode_spec(TASK, 0)})
    a, b = full.render_front()["rgb"].astype(float), simp.render_front()["rgb"].astype(float)
    mse = ((a - b) ** 2).mean()
    assert mse > 0  # the meshes did change
    assert 10 * np.log10(255**2 / mse) > 35


def _tiny_robot(folder: Path) -> Path:
    """A one-link robot asset folder (URDF, a visual and a collision STL with its convex hull), as
    a virtualenv's packaged robot is laid out, small enough to build in a moment."""
    import trimesh

    (folder / "meshes").mkdir(parents=True)
    trimesh.creation.icosphere(subdivisions=4).export(folder / "meshes" / "body.stl")
    trimesh.creation.box().export(folder / "meshes" / "hull.stl")
    trimesh.creation.box().export(folder / "meshes" / "hull.stl.convex.stl")
    urdf = folder / "tiny.urdf"
    urdf.write_text('<robot name="tiny"><link name="base">'
                    '<visual><geometry><mesh filename="meshes/body.stl"/></geometry></visual>'
                    '<collision><geometry><mesh filename="meshes/hull.stl"/></geometry></collision>'
                    '</link></robot>')
    return urdf


def _unusable_files(entry: Path) -> list[str]:
    return sorted(str(p.relative_to(entry)) for p in entry.rglob("*") if p.is_symlink() or not p.exists())


def test_an_entry_outlives_the_install_that_built_it(tmp_path):
    """The stale-cache bug: install A builds the entry, A is deleted, install B (same bytes,
    another folder) must get a working entry, not A's dangling links."""
    import shutil

    cache = tmp_path / "cache"
    first = R.build_lod_assets(_tiny_robot(tmp_path / "venv_a"), root=cache)
    shutil.rmtree(tmp_path / "venv_a")
    assert _unusable_files(first.parent) == [] and R.entry_problem(first.parent) is None
    second = R.build_lod_assets(_tiny_robot(tmp_path / "venv_b"), root=cache)
    assert _unusable_files(second.parent) == []
    assert (second.parent / "meshes" / "hull.stl.convex.stl").is_file()
    assert R.entry_problem(second.parent) is None
    assert second.parent != first.parent  # keyed by the resolved source path too


def test_a_damaged_entry_is_rebuilt_not_used(tmp_path):
    urdf = _tiny_robot(tmp_path / "venv")
    built = R.build_lod_assets(urdf, root=tmp_path / "cache")
    entry = built.parent
    hull = entry / "meshes" / "hull.stl.convex.stl"
    good = hull.read_bytes()
    hull.unlink()
    hull.symlink_to(tmp_path / "gone.stl")  # a dangling link, as an old cache left them
    assert R.entry_problem(entry) == "meshes/hull.stl.convex.stl is a link"
    assert R.build_lod_assets(urdf, root=tmp_path / "cache") == built
    assert not hull.is_symlink() and hull.read_bytes() == good
    (entry / "meshes" / "body.stl").write_bytes(b"not a mesh")
    assert R.entry_problem(entry) == "meshes/body.stl differs from what was built"
    R.build_lod_assets(urdf, root=tmp_path / "cache")
    assert R.entry_problem(entry) is None
    (entry / "meshes" / "hull.stl").unlink()
    assert R.entry_problem(entry) == "meshes/hull.stl is missing"
    R.build_lod_assets(urdf, root=tmp_path / "cache")
    assert R.entry_problem(entry) is None
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [entry.name]  # no stale copies left
