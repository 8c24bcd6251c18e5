"""Render level of detail: decimated visual meshes for CPU (software Vulkan) rendering.

Software Vulkan (lavapipe) is geometry-bound on these scenes: of the 582k triangles of a
``panda_wristcam`` scene, 425k are the wrist camera's mount model (``d415.stl``) and 155k the arm's
visual meshes; the table, the ground and the task's objects are a few thousand. So the robot's
visual meshes are the ones worth simplifying; nothing else in a scene is.

``render_lod="simplified"`` loads the robot from a cached copy of its asset directory in which
every *visual* mesh is decimated (quadric decimation, ``fast-simplification``); the URDF, the SRDF
and every *collision* mesh (with the packaged ``.convex.stl`` beside it) are copied byte for byte,
so the articulation, its collision shapes, masses, inertias and the motion planner's model are the
packaged ones: physics is bit-identical (``tests/test_render_lod.py`` rolls the same actions
through both levels and compares joint states and object poses). ``render_lod="full"`` loads the
packaged robot unchanged.

The cache lives under ``$ROBOMEM_CACHE`` (default ``~/.cache/robomem``)``/lod/<urdf>-<key>/``.
It must never decide whether a fresh install works, so an entry is self-contained and checked on
every use:
- ``key`` hashes what the entry is built from: the URDF's resolved path and bytes, every source
  mesh file it copies or decimates (path and bytes) and the decimation parameters. Another
  install (another virtualenv, another path) gets its own entry.
- An entry holds copies, never links into the install that built it (a deleted virtualenv once
  left every later install on the machine with dangling collision links).
- ``lod.json`` lists the sha256 of every file the entry holds; an entry with a file missing or
  changed is rebuilt, never used.
A build writes into a temporary directory and renames it into place, so concurrent workers never
see half an entry; the output bytes are deterministic.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np

RENDER_LODS = ("simplified", "full")
DEFAULT_RENDER_LOD = "simplified"

# Decimation parameters (part of the cache key). A mesh part with more than MIN_FACES triangles is
# reduced to about FACE_RATIO of its triangles, never below MIN_FACES nor above MAX_FACES; the
# wrist camera model (425k triangles, a few pixels in the front view) thereby keeps MAX_FACES.
LOD_PARAMS = {"version": 2, "face_ratio": 0.08, "min_faces": 300, "max_faces": 1500, "agg": 7, "crease_deg": 40.0}


def check_render_lod(render_lod: str) -> str:
    if render_lod not in RENDER_LODS:
        raise ValueError(f"unknown render_lod {render_lod!r} (choose one of: {', '.join(RENDER_LODS)})")
    return render_lod


def cache_root() -> Path:
    return Path(os.environ.get("ROBOMEM_CACHE", Path.home() / ".cache" / "robomem")) / "lod"


_MESH_RE = re.compile(r"<(visual|collision)\b.*?</\1>", re.S)
_FILE_RE = re.compile(r'filename="([^"]+)"')


def urdf_meshes(urdf_text: str) -> tuple[list[str], list[str]]:
    """(visual mesh files, collision mesh files) named by a URDF, relative as written, in order."""
    visual: list[str] = []
    collision: list[str] = []
    for m in _MESH_RE.finditer(urdf_text):
        for f in _FILE_RE.findall(m.group(0)):
            (visual if m.group(1) == "visual" else collision).append(f)
    dedup = lambda xs: list(dict.fromkeys(xs))  # noqa: E731
    return dedup(visual), dedup(collision)


def _target_faces(n: int) -> int:
    p = LOD_PARAMS
    if n <= p["min_faces"]:
        return n
    return int(min(p["max_faces"], max(p["min_faces"], round(n * p["face_ratio"]))))


def _decimate(vertices: np.ndarray, faces: np.ndarray):
    """Quadric decimation of one mesh part, then normals split at creases (flat CAD edges stay sharp)."""
    import fast_simplification
    import trimesh

    # CAD exports repeat a vertex per face corner; weld them (by position) so the decimation sees
    # the surface's connectivity instead of a soup of separate triangles
    welded = trimesh.Trimesh(vertices=np.asarray(vertices, np.float64), faces=np.asarray(faces, np.int64), process=False)
    welded.merge_vertices(merge_tex=True, merge_norm=True)
    vertices, faces = welded.vertices, welded.faces
    n = len(faces)
    target = _target_faces(n)
    if target < n:
        vertices, faces = fast_simplification.simplify(
            np.ascontiguousarray(vertices, dtype=np.float32),
            np.ascontiguousarray(faces, dtype=np.int32),
            target_reduction=1.0 - target / n,
            agg=LOD_PARAMS["agg"],
        )
    mesh = trimesh.Trimesh(vertices=np.asarray(vertices, np.float64), faces=np.asarray(faces, np.int64), process=False)
    return trimesh.graph.smooth_shade(mesh, angle=np.radians(LOD_PARAMS["crease_deg"]))


def simplify_mesh_file(src: Path) -> bytes:
    """The decimated version of one visual mesh file, in the same format (glb keeps its PBR materials)."""
    import trimesh

    suffix = src.suffix.lower()
    if suffix == ".glb":
        scene = trimesh.load(str(src), force="scene", process=False)
        # a flat scene with deterministic node names (the loader's own node names carry random
        # suffixes); each part keeps its world transform and its PBR material
        flat = trimesh.Scene()
        placed = sorted((scene.graph[node][1], node) for node in scene.graph.nodes_geometry)
        for i, (geom_name, node) in enumerate(placed):
            g = scene.geometry[geom_name]
            out = _decimate(g.vertices, g.faces)
            material = getattr(g.visual, "material", None)
            if material is not None:
                out.visual = trimesh.visual.TextureVisuals(material=material)
            flat.add_geometry(out, geom_name=f"part{i}", node_name=f"node{i}", transform=scene.graph[node][0])
        return flat.export(file_type="glb")
    if suffix == ".stl":
        mesh = trimesh.load(str(src), force="mesh", process=False)
        out = _decimate(mesh.vertices, mesh.faces)
        buf = io.BytesIO()
        out.export(buf, file_type="stl")
        return buf.getvalue()
    raise ValueError(f"render LOD: no simplifier for mesh format {suffix!r} ({src})")


def _collision_files(urdf: Path, collision: list[str]) -> list[str]:
    """Collision mesh files to copy, relative to the URDF's folder: each named mesh and its
    packaged siblings (e.g. ``link0.stl.convex.stl``, the convex hull SAPIEN loads)."""
    out: list[str] = []
    for rel in collision:
        src = urdf.parent / rel
        for f in [src] + sorted(src.parent.glob(src.name + ".*")):
            out.append(str(Path(rel).parent / f.name))
    return list(dict.fromkeys(out))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _lod_key(urdf: Path, visual: list[str], copied: list[str]) -> str:
    """What an entry is built from: source paths (resolved) and contents, and the parameters."""
    import fast_simplification

    h = hashlib.sha256()
    h.update(json.dumps({"params": LOD_PARAMS, "fast_simplification": getattr(fast_simplification, "__version__", "?")}, sort_keys=True).encode())
    h.update(str(urdf).encode())
    h.update(urdf.read_bytes())
    srdf = urdf.with_suffix(".srdf")
    for rel in visual + copied + ([srdf.name] if srdf.exists() else []):
        h.update(rel.encode())
        h.update(hashlib.sha256((urdf.parent / rel).read_bytes()).digest())
    return h.hexdigest()[:16]


def entry_problem(entry: Path) -> str | None:
    """Why the cache entry ``entry`` cannot be used (``None``: complete and intact).

    Complete means its URDF and ``lod.json`` exist; intact means every file ``lod.json`` lists is
    a regular file (not a link) whose sha256 is the recorded one."""
    manifest_path = entry / "lod.json"
    if not manifest_path.is_file():
        return "no lod.json"
    try:
        manifest = json.loads(manifest_path.read_text())
        files = manifest["files"]
    except (ValueError, KeyError) as err:
        return f"unreadable lod.json ({err!r})"
    for rel, digest in files.items():
        f = entry / rel
        if f.is_symlink():
            return f"{rel} is a link"
        if not f.is_file():
            return f"{rel} is missing"
        if _sha256(f) != digest:
            return f"{rel} differs from what was built"
    return None


def build_lod_assets(urdf_path: str | os.PathLike, root: Path | None = None) -> Path:
    """The simplified copy of ``urdf_path``'s robot (built on first use, then reused while it is
    intact: see :func:`entry_problem`); returns its URDF."""
    urdf = Path(urdf_path).resolve()
    text = urdf.read_text()
    visual, collision = urdf_meshes(text)
    for rel in collision:
        if rel in visual:
            raise ValueError(f"render LOD: {rel} is both a visual and a collision mesh in {urdf}")
    copied = _collision_files(urdf, collision)
    entry = (root or cache_root()) / f"{urdf.stem}-{_lod_key(urdf, visual, copied)}"
    out_urdf = entry / urdf.name
    if out_urdf.exists() and entry_problem(entry) is None:
        return out_urdf
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=entry.parent))
    try:
        files: dict[str, str] = {}
        for rel in visual:
            dst = tmp / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(simplify_mesh_file(urdf.parent / rel))
            files[rel] = _sha256(dst)
        srdf = urdf.with_suffix(".srdf")
        for rel in copied + ([srdf.name] if srdf.exists() else []) + [urdf.name]:
            dst = tmp / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(urdf.parent / rel, dst)
            files[rel] = _sha256(dst)
        manifest = {"source": str(urdf), "params": LOD_PARAMS, "files": dict(sorted(files.items()))}
        (tmp / "lod.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
        os.chmod(tmp, 0o755)
        _put_in_place(tmp, entry)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    problem = entry_problem(entry)
    if problem is not None:
        raise RuntimeError(f"render LOD: cache entry {entry} is unusable right after its build ({problem})")
    return out_urdf


def _put_in_place(tmp: Path, entry: Path) -> None:
    """Rename the finished build ``tmp`` to ``entry``; a broken entry already there is moved aside
    first, an intact one (another worker finished first) is kept."""
    try:
        os.rename(tmp, entry)
        return
    except OSError:
        if entry_problem(entry) is None:
            return
    stale = Path(tempfile.mkdtemp(prefix=f".{entry.name}.stale.", dir=entry.parent))
    try:
        os.rename(entry, stale / "entry")
    except OSError:
        pass  # another worker moved it first
    try:
        os.rename(tmp, entry)
    except OSError:
        if entry_problem(entry) is not None:
            raise
    shutil.rmtree(stale, ignore_errors=True)


def lod_agent_class(agent_cls: type, render_lod: str) -> type:
    """The agent class to build for ``render_lod``: ``agent_cls`` itself, or a subclass (same uid,
    controllers and sensors) whose ``urdf_path`` is the simplified copy."""
    check_render_lod(render_lod)
    if render_lod == "full" or getattr(agent_cls, "urdf_path", None) is None:
        return agent_cls
    path = str(build_lod_assets(agent_cls.urdf_path))
    return _SUBCLASSES.setdefault((agent_cls, path), type(agent_cls.__name__ + "SimplifiedLOD", (agent_cls,), {"urdf_path": path}))


_SUBCLASSES: dict[tuple[type, str], type] = {}


def visual_triangles(scene) -> dict[str, int]:
    """Triangles of every render body in sub-scene 0, by entity name."""
    import sapien

    out: dict[str, int] = {}
    for ent in scene.sub_scenes[0].entities:
        for c in ent.components:
            if isinstance(c, sapien.render.RenderBodyComponent):
                n = 0
                for s in c.render_shapes:
                    for p in getattr(s, "parts", []):
                        n += len(p.triangles)
                out[ent.name] = out.get(ent.name, 0) + n
    return out
