"""Which look-alike container hides which cube: colour-verified notes turned into cover bindings.

The goal names cubes by colour ("pick up the container hiding the green cube"); the scene shows
them only until identical containers drop onto them. The evidence chain this module keeps:

1. **Notes.** Each watched cube is a saturated colour blob (:func:`~memory.tools.colour_blobs.find_blobs`).
   A note is written as ``candidate`` at the first sighting and becomes ``verified`` once the blob
   is seen ``confirm_frames`` times in a row within ``note_jump`` pixels (persistence + colour check).
2. **Cover binding.** A verified note whose colour has vanished from its place while a container
   now stands there, on ``cover_frames`` consecutive frames, becomes an entity record: identity
   ``container``, role ``cover``, binding ``cover hiding the <colour> cube``, status ``verified``.
   A vanished cube with nothing container-like on its spot (the arm passing over it) binds nothing.
3. **Container appearance** is learned from the frames, not given: containers are untextured
   boxes in the default material, so their faces render as a few flat neutral gray levels (one
   per face orientation). At the first binding the tool reads the neutral levels that now fill
   the place where the cube was (:class:`ContainerAppearance`); from then on a container pixel is
   a neutral pixel at one of those levels. Before that, a generic neutral-and-bright predicate
   stands in. The robot arm is also gray, but smoothly shaded: few of its pixels sit exactly on
   the learned levels, and a small morphological opening removes those.
4. **Re-grounding.** At a read, the recalled container is located in the current view near the
   record's position (a lone container blob's centroid, or the palette's mean-shift mode when it
   touches a neighbour). When the spot is hidden by something grayish that is not a container
   (the arm or gripper over it, typically while grasping this very container), the record's
   position stands; when the spot shows bare table, the tool finds nothing (and the access layer
   answers with the record's stored position unless ``MemoryConfig.record_position_fallback`` is off).

Following the bound containers when they move is :mod:`memory.tools.cover_tracker`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from memory.contract.frames import Frame
from memory.language.needs import Need
from memory.store.records import EntityRecord, EntityStatus, RelationRecord, Source
from memory.language.spec import MemorySpec
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.blobs import find_blobs
from memory.language.words import COLOUR_WORDS, canonical_role, colour_of
from subgoals.record_names import cover_binding
from subgoals.grammar import COORD_MAX, Point
from memory.tools.groups import ToolGroup
from memory.perception.morphology import open_

__all__ = [
    "AppearanceThresholds",
    "ContainerAppearance",
    "CoverBindingThresholds",
    "CoverBindingTool",
    "cover_key",
    "local_centre",
    "neutral_levels",
    "note_key",
]

COVER_ROLE = "cover"
COVER_IDENTITY = "container"
_SQUARE3 = np.ones((3, 3), dtype=bool)


def note_key(source: Source, phrase: str) -> str:
    return f"note/{source.value}/{phrase}"


def cover_key(source: Source, phrase: str) -> str:
    return f"cover/{source.value}/{phrase}"


def relation_key(source: Source, phrase: str) -> str:
    return f"relation/{source.value}/{cover_binding(phrase)}"


def _disk(radius: float) -> tuple[np.ndarray, np.ndarray]:
    r = int(np.ceil(radius))
    dy, dx = np.mgrid[-r : r + 1, -r : r + 1]
    keep = dy * dy + dx * dx <= radius * radius
    return dy[keep], dx[keep]


def _window(shape, centre, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates of a disk around ``centre`` clipped to the image."""
    dy, dx = _disk(radius)
    ys = np.round(centre[0]).astype(int) + dy
    xs = np.round(centre[1]).astype(int) + dx
    inside = (ys >= 0) & (ys < shape[0]) & (xs >= 0) & (xs < shape[1])
    return ys[inside], xs[inside]


def neutral_levels(rgb: np.ndarray, max_spread: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``(neutral, value)``: pixels whose channels differ by at most ``max_spread``, and each pixel's max channel."""
    img = rgb.astype(np.int16)
    value = img.max(axis=-1)
    neutral = (value - img.min(axis=-1)) <= max_spread
    return neutral, value


def local_centre(mask: np.ndarray, start, radius: float = 9.0, iters: int = 6, min_pixels: int = 40):
    """Mean-shift to the nearest mode of ``mask`` from ``start``: ``((y, x), pixels)`` or ``None``.

    ``pixels`` counts mask pixels in the final window; fewer than ``min_pixels`` means there is
    no container there.
    """
    p = np.asarray(start, dtype=float)
    count = 0
    for _ in range(iters):
        ys, xs = _window(mask.shape, p, radius)
        hit = mask[ys, xs]
        count = int(hit.sum())
        if count < min_pixels:
            return None
        new = np.array([ys[hit].mean(), xs[hit].mean()])
        moved = float(np.hypot(*(new - p)))
        p = new
        if moved < 0.5:
            break
    return (float(p[0]), float(p[1])), count


def to_point(yx) -> Point:
    return Point(int(np.clip(round(yx[0]), 0, COORD_MAX)), int(np.clip(round(yx[1]), 0, COORD_MAX)))


@dataclass(frozen=True)
class AppearanceThresholds:
    """The numbers :class:`ContainerAppearance` learns and reads container pixels with (8-bit channel values)."""

    max_spread: int = 2
    """Channels within this of each other make a pixel neutral-coloured (containers, and the arm, are gray)."""
    tol: int = 1
    """A pixel within this of a learned gray level is on the palette; untextured faces render as flat levels."""
    prior_min_value: int = 120
    """The blob predicate: neutral pixels at least this bright (a container standing alone is one compact blob of them)."""
    min_share: float = 0.08
    """A gray level is learned where a container stands when at least this share of the pixels there have it (and at least 6 pixels)."""
    max_levels: int = 8
    """Most gray levels the palette keeps."""


class ContainerAppearance:
    """What a container looks like in this episode, learned from the frames.

    Two views of the same idea, both neutral-colour (the channels within ``max_spread``):

    * the *blob* predicate: every neutral pixel at least ``prior_min_value`` bright. A container
      standing alone is one compact connected blob of these; the arm is neutral too, so a blob
      that touches it grows far beyond a container's size and is not trusted;
    * the *palette* predicate: only pixels within ``tol`` of a gray level learned where a
      container is known to stand (:meth:`learn`). Untextured faces render as flat levels; the
      smoothly shaded arm rarely sits on them, so this mask separates a container from an arm
      touching it (at the price of missing faces turned to an unlearned shade).

    Masks are opened with a 3x3 square so thin structures drop out. :meth:`locate` uses the blob
    when it has a container's size and the palette's mean-shift mode otherwise.
    """

    def __init__(self, *, max_spread: int = 2, tol: int = 1, prior_min_value: int = 120, min_share: float = 0.08,
                 max_levels: int = 8) -> None:
        self.config = AppearanceThresholds(
            max_spread=max_spread, tol=tol, prior_min_value=prior_min_value, min_share=min_share,
            max_levels=max_levels,
        )
        self.reset()

    def reset(self) -> None:
        self.levels: tuple[int, ...] = ()
        self._cache: dict[str, tuple[tuple, np.ndarray]] = {}

    @property
    def learned(self) -> bool:
        return bool(self.levels)

    def learn(self, rgb: np.ndarray, centre, radius: float = 10.0) -> tuple[int, ...]:
        """Add the dominant neutral levels around ``centre`` (where a container stands) to the palette; return the new ones."""
        neutral, value = neutral_levels(rgb, self.config.max_spread)
        ys, xs = _window(neutral.shape, centre, radius)
        vals = value[ys, xs][neutral[ys, xs] & (value[ys, xs] >= 60)]
        if vals.size < 20:
            return ()
        levels, counts = np.unique(vals, return_counts=True)
        keep = [int(v) for v, c in zip(levels, counts) if c >= max(6, self.config.min_share * vals.size)]
        new = tuple(v for v in keep if all(abs(v - old) > self.config.tol for old in self.levels))
        if new:
            self.levels = tuple(sorted(set(self.levels) | set(new)))[: self.config.max_levels]
            self._cache.pop("palette", None)
        return new

    @staticmethod
    def _clip(rgb: np.ndarray, roi) -> tuple[int, int, int, int]:
        h, w = rgb.shape[:2]
        return (0, h, 0, w) if roi is None else (max(0, roi[0]), min(h, roi[1]), max(0, roi[2]), min(w, roi[3]))

    def _cached(self, name: str, rgb: np.ndarray, step, roi, compute) -> np.ndarray:
        roi = self._clip(rgb, roi)
        key = (step, id(rgb), roi, self.levels)
        hit = self._cache.get(name)
        if step is not None and hit is not None and hit[0] == key:
            return hit[1]
        y0, y1, x0, x1 = roi
        out = np.zeros(rgb.shape[:2], dtype=bool)
        if y1 > y0 and x1 > x0:
            out[y0:y1, x0:x1] = open_(compute(rgb[y0:y1, x0:x1]))
        if step is not None:
            self._cache[name] = (key, out)
        return out

    def mask(self, rgb: np.ndarray, step: int | None = None, roi: tuple[int, int, int, int] | None = None) -> np.ndarray:
        """Palette mask of ``rgb`` inside ``roi = (y0, y1, x0, x1)`` (zeros outside); the blob predicate until learned."""
        if not self.levels:
            return self.blob_mask(rgb, step, roi)

        def compute(crop):
            neutral, value = neutral_levels(crop, self.config.max_spread)
            on_level = np.zeros(value.shape, dtype=bool)
            for level in self.levels:
                on_level |= np.abs(value - level) <= self.config.tol
            return neutral & on_level

        return self._cached("palette", rgb, step, roi, compute)

    def blob_mask(self, rgb: np.ndarray, step: int | None = None, roi: tuple[int, int, int, int] | None = None) -> np.ndarray:
        """Neutral-and-bright mask inside ``roi`` (zeros outside)."""

        def compute(crop):
            neutral, value = neutral_levels(crop, self.config.max_spread)
            return neutral & (value >= self.config.prior_min_value)

        return self._cached("blob", rgb, step, roi, compute)

    def occluder_mask(self, rgb: np.ndarray, step: int | None = None, roi: tuple[int, int, int, int] | None = None,
                      max_spread: int = 30) -> np.ndarray:
        """Grayish pixels that are not container pixels (the arm, its black fingers, a button) inside ``roi``.

        The table is a saturated colour, so anything near-neutral on it that is not on the
        container palette is something else standing in front of or beside a container.
        """
        palette = self.mask(rgb, step, roi)
        y0, y1, x0, x1 = self._clip(rgb, roi)
        out = np.zeros(rgb.shape[:2], dtype=bool)
        crop = rgb[y0:y1, x0:x1].astype(np.int16)
        out[y0:y1, x0:x1] = (crop.max(axis=-1) - crop.min(axis=-1)) <= max_spread
        return out & ~palette

    def hidden(self, rgb: np.ndarray, centre, radius: float = 8.0, share: float = 0.5, step: int | None = None) -> bool:
        """Whether the spot around ``centre`` is covered by something grayish (arm, gripper) rather than bare table."""
        r = int(radius) + 2
        roi = (int(centre[0]) - r, int(centre[0]) + r + 1, int(centre[1]) - r, int(centre[1]) + r + 1)
        neutralish = self.occluder_mask(rgb, step, roi) | self.mask(rgb, step, roi)
        return self.coverage(neutralish, centre, radius) >= share

    def coverage(self, mask: np.ndarray, centre, radius: float) -> float:
        ys, xs = _window(mask.shape, centre, radius)
        return float(mask[ys, xs].mean()) if ys.size else 0.0

    def _blob_at(self, rgb: np.ndarray, near, step, roi=None, radius: float = 5.0):
        """``((y, x), area)`` of the neutral blob with most pixels within ``radius`` of ``near``, or ``None``."""
        if roi is None:
            roi = (int(near[0]) - 40, int(near[0]) + 41, int(near[1]) - 40, int(near[1]) + 41)
        m = self.blob_mask(rgb, step, roi)
        y0, y1, x0, x1 = self._clip(rgb, roi)
        labels, n = ndimage.label(m[y0:y1, x0:x1], structure=_SQUARE3)
        if n == 0:
            return None
        ys, xs = _window(m.shape, near, radius)
        inside = (ys >= y0) & (ys < y1) & (xs >= x0) & (xs < x1)
        hit = labels[ys[inside] - y0, xs[inside] - x0]
        hit = hit[hit > 0]
        if hit.size == 0:
            return None
        lab = int(np.bincount(hit).argmax())
        py, px = np.nonzero(labels == lab)
        # a blob cut by the region's border is not a whole container
        if py.min() == 0 and y0 > 0 or px.min() == 0 and x0 > 0 or py.max() == y1 - y0 - 1 and y1 < rgb.shape[0] \
                or px.max() == x1 - x0 - 1 and x1 < rgb.shape[1]:
            return (float(py.mean() + y0), float(px.mean() + x0)), 10**6
        return (float(py.mean() + y0), float(px.mean() + x0)), int(py.size)

    def detect(self, rgb: np.ndarray, near, *, radius: float = 9.0, max_shift: float = 12.0, min_pixels: int = 40,
               step: int | None = None, roi: tuple[int, int, int, int] | None = None, expected_area: float | None = None,
               area_tol: float = 0.35):
        """The container nearest to ``near``: ``((y, x), kind)`` or ``None`` when none is within ``max_shift``.

        ``kind`` is ``"blob"`` when a neutral blob of the container's size (``expected_area`` within
        ``area_tol``) lies under ``near`` (its centroid is the container's centre), ``"mode"`` when only the palette's mean-shift
        mode was found (the blob was merged with the arm or a neighbour): evidence that a container
        is there, but its centre may be pulled toward the neighbour.
        """
        if roi is None:
            r = int(radius + max_shift + 30)
            roi = (int(near[0]) - r, int(near[0]) + r + 1, int(near[1]) - r, int(near[1]) + r + 1)
        blob = self._blob_at(rgb, near, step, roi) if expected_area else None
        if blob is not None and abs(blob[1] / expected_area - 1.0) <= area_tol:
            (y, x), _ = blob
            if np.hypot(y - near[0], x - near[1]) <= max_shift:
                return (y, x), "blob"
        found = local_centre(self.mask(rgb, step, roi), near, radius=radius, min_pixels=min_pixels)
        if found is None:
            return None
        (y, x), _ = found
        if np.hypot(y - near[0], x - near[1]) > max_shift:
            return None
        return (y, x), "mode"

    def blob_area(self, rgb: np.ndarray, near, step: int | None = None, max_shift: float = 4.0) -> int | None:
        """Area of the neutral blob centred within ``max_shift`` of ``near`` (a lone container's size), else ``None``."""
        blob = self._blob_at(rgb, near, step)
        if blob is None or blob[1] >= 10**6 or np.hypot(blob[0][0] - near[0], blob[0][1] - near[1]) > max_shift:
            return None
        return blob[1]

    def locate(self, rgb: np.ndarray, near, **kwargs):
        """:meth:`detect` without the kind: ``(y, x)`` or ``None``."""
        found = self.detect(rgb, near, **kwargs)
        return None if found is None else found[0]


@dataclass
class _Note:
    """Evidence state of one watched cube."""

    phrase: str
    colour: str
    pos: tuple[float, float] | None = None
    streak: int = 0
    verified: bool = False
    gone: int = 0
    covered: int = 0
    bound: bool = False
    area: int = 0


@dataclass(frozen=True)
class CoverBindingThresholds:
    """The numbers :class:`CoverBindingTool` verifies a note and a cover binding with (frames read by the tool, pixels in the 256x256 frame)."""

    confirm_frames: int = 2
    """Consecutive sightings that verify a note."""
    note_jump: float = 4.0
    """Largest move (px) between sightings of one note (the cubes sit still)."""
    vanish_radius: float = 8.0
    """A blob of the note's colour within this distance (px) means the cube is still there."""
    cover_radius: float = 5.0
    """A container stands at the note when at least ``cover_share`` of the disk of this radius (px) around it is container pixels..."""
    cover_share: float = 0.6
    """...this share of that disk..."""
    cover_frames: int = 2
    """...on this many consecutive frames after the cube vanished."""
    min_cube_area: int = 20
    """Smallest colour blob (px) taken as a watched cube."""
    max_cube_area: int = 900
    """Largest colour blob (px) taken as a watched cube."""
    reground_radius: float = 12.0
    """How far (px) from the record's position a re-grounded container may be."""
    cover_to_cube: float = 3.8
    """Expected blob area of a lone container over that of the cube it covers (the rendered ratio is about 3.8 over the whole table); only a blob within 30 % of it is taken as one container."""
    stable_px: float = 3.0
    """A re-grounded point this close (px) to the previous answer is reported as that answer."""


@register_tool(order=80, source="video")
@register_tool(order=100, source="live")
class CoverBindingTool(Tool):
    """Notes on the watched cubes and their cover bindings, from the frames of one ``source``.

    Args:
        source: ``"live"`` or ``"video"``: which frames this instance reads (the two are separate
            ablation groups: a binding seen live, a binding seen in the demonstration).
        confirm_frames: consecutive sightings that verify a note.
        note_jump: largest move (px) between sightings of one note (the cubes sit still).
        vanish_radius: a blob of the note's colour within this distance means the cube is still there.
        cover_radius / cover_share: a container stands at the note when at least ``cover_share`` of
            the disk of ``cover_radius`` px around it is container pixels...
        cover_frames: ...on this many consecutive frames after the cube vanished.
        reground_radius: how far from the record's position a re-grounded container may be.
        stable_px: a re-grounded point this close to the previous answer is reported as that answer.
        cover_to_cube: expected blob area of a lone container over that of the cube it covers
            (the rendered ratio is about 3.8 over the whole table); only a blob within 30 % of
            it is taken as one container.
    """

    group = ToolGroup.LIVE_BINDING
    serves = frozenset({Need.COVER_BINDING})

    def __init__(self, source: str = "live", *, confirm_frames: int = 2, note_jump: float = 4.0,
                 vanish_radius: float = 8.0, cover_radius: float = 5.0, cover_share: float = 0.6,
                 cover_frames: int = 2, min_cube_area: int = 20, max_cube_area: int = 900,
                 reground_radius: float = 12.0, cover_to_cube: float = 3.8, stable_px: float = 3.0) -> None:
        if source not in ("live", "video"):
            raise ValueError(f"source must be 'live' or 'video', got {source!r}")
        self.frame_source = source
        self.source = Source.of_frame(source)
        self.name = "cover_binding_live" if source == "live" else "cover_binding_demo"
        self.group = ToolGroup.LIVE_BINDING if source == "live" else "demo_binding"
        self.stride = 1
        # the notes need the cubes' few visible frames; every 4 steps is plenty (see render_schedule)
        self.render = RenderNeed(stride=4, video=source == "video", video_stride=2)  # bindings the same at video stride 2 and 4 on train 0-3 (benchmarks/video_stride_train.md); thresholds counted in frames were measured at this stride
        self.config = CoverBindingThresholds(
            confirm_frames=confirm_frames, note_jump=note_jump, vanish_radius=vanish_radius,
            cover_radius=cover_radius, cover_share=cover_share, cover_frames=cover_frames,
            min_cube_area=min_cube_area, max_cube_area=max_cube_area, reground_radius=reground_radius,
            cover_to_cube=cover_to_cube, stable_px=stable_px,
        )
        self._answers: dict[str, Point] = {}
        self._areas: dict[str, int | None] = {}
        self._hidden_reads = 0
        self.appearance = ContainerAppearance()
        self._notes: dict[str, _Note] = {}
        self._frames = 0
        self._events: list[str] = []

    def thresholds(self) -> tuple:
        return (self.config, self.appearance.config)

    # ------------------------------------------------------------------ episode
    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self.appearance.reset()
        self._frames = 0
        self._events = []
        self._notes = {}
        self._areas = {}
        self._answers = {}
        self._hidden_reads = 0
        for binding in spec.bindings:
            phrase = binding.removeprefix(cover_binding(""))
            colour = colour_of(phrase.split())
            if colour is not None and colour in COLOUR_WORDS:
                self._notes[phrase] = _Note(phrase, colour)

    # ------------------------------------------------------------------ frames
    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if frame.rgb is None or frame.source != self.frame_source or not self._notes:
            return
        if all(n.bound for n in self._notes.values()):
            return
        self._frames += 1
        colours = {n.colour for n in self._notes.values() if not n.bound}
        blobs = find_blobs(frame.rgb, colours, min_area=self.config.min_cube_area, max_area=self.config.max_cube_area)
        mask = None
        for note in self._notes.values():
            if note.bound:
                continue
            mine = [b for b in blobs if b.colour == note.colour]
            if note.pos is None or not note.verified:
                self._sight(note, mine, frame, store)
                continue
            near = [b for b in mine if b.distance(note.pos) <= self.config.vanish_radius]
            if near:
                note.gone, note.covered = 0, 0
                continue
            note.gone += 1
            if mask is None:
                mask = self.appearance.mask(frame.rgb, frame.step)
            share = self.appearance.coverage(mask, note.pos, self.config.cover_radius)
            note.covered = note.covered + 1 if share >= self.config.cover_share else 0
            if note.covered >= self.config.cover_frames:
                self._bind(note, frame, store, share)

    def _sight(self, note: _Note, blobs, frame: Frame, store: MemoryStore) -> None:
        """Colour-verified sighting with persistence: candidate, then verified."""
        if note.pos is not None:
            near = [b for b in blobs if b.distance(note.pos) <= self.config.note_jump]
            blob = min(near, key=lambda b: b.distance(note.pos)) if near else None
            if blob is None:
                note.streak = 0
                if blobs:  # it is elsewhere: start over from the largest blob of its colour
                    blob = blobs[0]
        else:
            blob = blobs[0] if blobs else None
        if blob is None:
            return
        note.pos = (blob.y, blob.x)
        note.area = blob.area
        note.streak += 1
        note.verified = note.streak >= self.config.confirm_frames
        status = EntityStatus.VERIFIED if note.verified else EntityStatus.CANDIDATE
        record = EntityRecord(identity=note.phrase, role=canonical_role(note.phrase.split()[-1]),
                              position=blob.point.as_tuple(), status=status, source=self.source)
        self.commit(store, note_key(self.source, note.phrase), record, step=frame.step,
                    reason=f"{note.colour} blob of {blob.area} px seen {note.streak}x in a row", accepted=True)

    def _bind(self, note: _Note, frame: Frame, store: MemoryStore, share: float) -> None:
        binding = cover_binding(note.phrase)
        rival = [r for r in store.entities().values() if r.binding == binding and r.readable]
        note.bound = True
        if rival:  # the same cover is already bound from the other source: do not make access ambiguous
            self._events.append(f"{frame.step}: {note.phrase} covered; binding already held")
            return
        learned = self.appearance.learn(frame.rgb, note.pos)
        # a lone container is a neutral blob a few times the cube's size (it covers the cube, walls and
        # all, and stands taller); its centroid is its centre. One that touches a neighbour or the arm
        # is placed on the cube's spot instead.
        found = self.appearance.detect(frame.rgb, note.pos, max_shift=10.0, expected_area=self.config.cover_to_cube * note.area,
                                       area_tol=0.3)
        centre = found[0] if found is not None and found[1] == "blob" else note.pos
        if found is not None and found[1] == "blob":
            self._areas[cover_key(self.source, note.phrase)] = self.appearance.blob_area(frame.rgb, centre, max_shift=1.0)
        point = to_point(centre)
        nk = note_key(self.source, note.phrase)
        old = store.get(nk)
        if isinstance(old, EntityRecord):
            store.update(nk, old.evolve(status=EntityStatus.UNCERTAIN), step=frame.step,
                         reason=f"{note.colour} cube no longer visible: covered")
        store.put(cover_key(self.source, note.phrase),
                  EntityRecord(identity=COVER_IDENTITY, role=COVER_ROLE, position=point.as_tuple(), binding=binding,
                               status=EntityStatus.VERIFIED, source=self.source),
                  step=frame.step,
                  reason=(f"{note.phrase} vanished at {to_point(note.pos)} and a container stands there "
                          f"({share:.0%} of the spot, {note.covered} frames)"))
        store.put(relation_key(self.source, note.phrase),
                  RelationRecord(subject=cover_key(self.source, note.phrase), relation="hides", object=note.phrase,
                                 status=EntityStatus.VERIFIED, source=self.source),
                  step=frame.step, reason="cover binding")
        self._events.append(f"{frame.step}: {binding} at {point} (levels learned {list(learned)})")

    # ------------------------------------------------------------------ reads
    def reground(self, entity: EntityRecord, frame: Frame) -> Point | None:
        """The recalled container in the current view (``None``: abstain).

        * A container stands near the record's position: a lone one gives its centroid, one that
          touches others is confirmed where the record says.
        * No container is seen there, but the spot is hidden by something grayish (the arm or the
          gripper over it), or it shows the very cube the binding names (the container has just
          been lifted off it by the robot, the cube is still where the memory put it): the view
          cannot contradict the record, so the answer stands.
        * Bare table where the container should be: ``None`` (the access layer then answers with the
          record's stored position, unless its fallback is off).

        A point within ``stable_px`` of the previous answer for the same binding is returned as
        that answer, so the subgoal's text stays the same while the robot acts on it.
        """
        if (frame.rgb is None or entity.role != COVER_ROLE or entity.position is None or entity.source != self.source
                or not (entity.binding or "").startswith(cover_binding(""))):
            return None
        phrase = (entity.binding or "").removeprefix(cover_binding(""))
        key = cover_key(self.source, phrase)
        last = self._answers.get(key)
        found = self.appearance.detect(frame.rgb, entity.position, max_shift=self.config.reground_radius,
                                       expected_area=self._areas.get(key))
        if found is not None:
            point = to_point(found[0]) if found[1] == "blob" else to_point(entity.position)
            if last is not None and np.hypot(point.y - last.y, point.x - last.x) <= self.config.stable_px:
                point = last
        elif self.appearance.hidden(frame.rgb, entity.position) or self._cube_in_view(frame.rgb, phrase, entity.position):
            self._hidden_reads += 1
            point = last if last is not None else to_point(entity.position)
        else:
            return None
        self._answers[key] = point
        return point

    def _cube_in_view(self, rgb: np.ndarray, phrase: str, near) -> bool:
        """Whether the cube ``phrase`` names is seen within ``vanish_radius`` of ``near`` (a cover just lifted off it)."""
        colour = colour_of(phrase.split())
        if colour is None:
            return False
        y, x = int(near[0]), int(near[1])
        r = int(self.config.vanish_radius) + 24
        crop = rgb[max(0, y - r) : y + r + 1, max(0, x - r) : x + r + 1]
        off = np.array([max(0, y - r), max(0, x - r)])
        blobs = find_blobs(crop, [colour], min_area=self.config.min_cube_area // 2, max_area=self.config.max_cube_area)
        return any(np.hypot(b.y + off[0] - near[0], b.x + off[1] - near[1]) <= self.config.vanish_radius + 6 for b in blobs)

    def diagnostics(self) -> dict:
        return {
            "frames": self._frames,
            "levels": list(self.appearance.levels),
            "notes": {p: {"verified": n.verified, "bound": n.bound, "pos": None if n.pos is None else [round(v, 1) for v in n.pos]}
                      for p, n in self._notes.items()},
            "events": self._events[:20],
            "reads_under_occlusion": self._hidden_reads,
        }
