"""Colour predicates and connected-component blobs for saturated red, green and blue objects.

The cheapest identity evidence in a tabletop scene is colour: the cubes are red, green
or blue, while the table, containers, buttons, robot and target rings are mostly
unsaturated or of other hues. Rendered colours are never pure (shading, ambient light,
specular highlights), so the predicates work on hue, saturation and value rather than
on RGB distances, with thresholds gathered in :class:`ColourThresholds`:

* saturation >= 0.7 keeps lit and shaded faces of a pure-coloured cube but rejects
  muted colours of a similar hue (a salmon peg at about 0.63);
* hue windows leave a gap between blue (<= 262 degrees) and purple (about 277), the
  colour of target discs;
* value >= 50 drops near-black pixels whose hue is noise.

:class:`ColourBlobTool` uses these blobs to maintain entity records for the coloured
objects the goal asks to watch, moving each record through the candidate -> verified
-> uncertain -> reacquired lifecycle, and to re-ground recalled coloured entities.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np
from scipy import ndimage

from memory.frames import Frame
from memory.needs import Need
from memory.records import EntityRecord, EntityStatus, Source
from memory.spec import MemorySpec
from memory.store import MemoryStore
from memory.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.vocabulary import COLOUR_WORDS, canonical_role, colour_of
from policies.subgoal_grammar import COORD_MAX, Point

__all__ = ["Blob", "ColourBlobTool", "ColourThresholds", "colour_mask", "bare_table", "find_blobs", "hsv"]


@dataclass(frozen=True)
class ColourThresholds:
    """Pixel predicate parameters. Hue windows are in degrees, half-open ``[lo, hi)``."""

    min_saturation: float = 0.7
    min_value: int = 50
    hue_windows: dict[str, tuple[tuple[float, float], ...]] = field(
        default_factory=lambda: {
            "red": ((0.0, 22.0), (338.0, 360.0)),
            "green": ((80.0, 165.0),),
            "blue": ((200.0, 262.0),),
        }
    )


@dataclass(frozen=True)
class Blob:
    """One connected region of a colour: centroid ``(y, x)`` in pixels, area, bounding box ``(y0, x0, y1, x1)``."""

    colour: str
    y: float
    x: float
    area: int
    bbox: tuple[int, int, int, int]

    @property
    def point(self) -> Point:
        """The centroid as an integer image point (clipped to the 256x256 grid)."""
        return Point(int(np.clip(round(self.y), 0, COORD_MAX)), int(np.clip(round(self.x), 0, COORD_MAX)))

    def distance(self, yx: Sequence[float]) -> float:
        return float(np.hypot(self.y - yx[0], self.x - yx[1]))


def hsv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hue (degrees, 0..360), saturation (0..1) and value (0..255) of an ``(H, W, 3)`` uint8 image.

    OpenCV's float conversion: about 15x faster than the same arithmetic in numpy, which matters
    because every pixel tool calls this on every frame it reads.
    """
    # float input keeps the 0..255 scale: V is the max channel, S and H are scale-free
    h, s, v = cv2.split(cv2.cvtColor(np.ascontiguousarray(rgb, dtype=np.float32), cv2.COLOR_RGB2HSV))
    return h, s, v


def bare_table(rgb: np.ndarray, yx, radius: int = 6, share: float = 0.5) -> bool:
    """Whether the spot around ``yx`` shows bare table (a warm, saturated wood colour, not a saturated
    red cube): what the tools use to tell "something stands in front of the remembered place" (the
    record stands) from "nothing is there" (the view contradicts it)."""
    y, x = int(yx[0]), int(yx[1])
    crop = rgb[max(0, y - radius): y + radius + 1, max(0, x - radius): x + radius + 1]
    if crop.size == 0:
        return True
    hue, sat, _ = hsv(crop)
    wood = (hue >= 8) & (hue < 45) & (sat > 0.3) & (sat < 0.8)
    return float(wood.mean()) >= share


def colour_mask(rgb: np.ndarray, colour: str, thresholds: ColourThresholds | None = None) -> np.ndarray:
    """Boolean mask of pixels that read as ``colour``.

    Raises:
        ValueError: for a colour without a hue window.
    """
    t = thresholds or ColourThresholds()
    if colour not in t.hue_windows:
        raise ValueError(f"no colour predicate for {colour!r}; known: {sorted(t.hue_windows)}")
    hue, sat, val = hsv(rgb)
    in_hue = np.zeros(hue.shape, dtype=bool)
    for lo, hi in t.hue_windows[colour]:
        in_hue |= (hue >= lo) & (hue < hi)
    return in_hue & (sat >= t.min_saturation) & (val >= t.min_value)


_EIGHT_NEIGHBOURS = np.ones((3, 3), dtype=bool)


def find_blobs(
    rgb: np.ndarray,
    colours: Iterable[str] = COLOUR_WORDS,
    *,
    min_area: int = 12,
    max_area: int | None = None,
    thresholds: ColourThresholds | None = None,
) -> list[Blob]:
    """Connected components (8-neighbour) of each colour's mask, largest first within the list."""
    blobs: list[Blob] = []
    for colour in colours:
        mask = colour_mask(rgb, colour, thresholds)
        labels, n = ndimage.label(mask, structure=_EIGHT_NEIGHBOURS)
        if n == 0:
            continue
        index = np.arange(1, n + 1)
        areas = ndimage.sum_labels(mask, labels, index)
        centres = ndimage.center_of_mass(mask, labels, index)
        boxes = ndimage.find_objects(labels)
        for area, (cy, cx), box in zip(areas, centres, boxes):
            area = int(area)
            if area < min_area or (max_area is not None and area > max_area):
                continue
            bbox = (box[0].start, box[1].start, box[0].stop - 1, box[1].stop - 1)
            blobs.append(Blob(colour=colour, y=float(cy), x=float(cx), area=area, bbox=bbox))
    blobs.sort(key=lambda b: -b.area)
    return blobs


@dataclass
class _Track:
    """Per-phrase evidence state between frames."""

    streak: int = 0
    misses: int = 0
    lost: bool = False
    last: tuple[float, float] | None = None


@register_tool(order=10)
class ColourBlobTool(Tool):
    """Maintains entity records for the coloured objects the goal names.

    For each watch phrase with a colour word (``"green cube"``) it keeps the record
    ``entity:<phrase>``:

    * first sighting -> ADD as ``candidate``;
    * seen in ``confirm_frames`` consecutive observed frames, moving at most ``max_jump``
      pixels between them (the evidence gate) -> ``verified`` (or ``reacquired`` after
      being uncertain);
    * missing for ``lose_frames`` consecutive frames -> ``uncertain``, last position kept,
      because the object's identity is still known when a cover or the gripper hides it;
    * a verified record's position is updated when it moves more than ``move_tolerance``.

    Args:
        stride: observe every ``stride``-th frame.
        min_area: smallest blob, in pixels, that counts as an object.
        max_area: largest blob (``None``: no limit).
        confirm_frames: consecutive sightings needed to verify.
        lose_frames: consecutive misses before a record becomes uncertain.
        max_jump: largest centroid move, in pixels, between consecutive sightings.
        move_tolerance: smallest move, in pixels, worth an UPDATE.
        reground_radius: how far from the stored position a re-grounding blob may be.
        thresholds: the colour predicate parameters.

    Perception back-ends (:meth:`use_perception`): with the default colour detector the blobs are
    this module's colour components; with another detector (Grounding DINO, SAM 2 masks) they are
    its detections of each watched phrase. Either way the record's identity features (colour
    histogram by default, DINOv2 when configured) are taken when it is first verified, and every
    re-grounding logs the chosen candidate's similarity to them; with a minimum similarity set, a
    candidate below it is not taken (the read abstains rather than ground a look-alike).
    """

    name = "colour_blobs"
    group = "identity"
    serves = frozenset({Need.SCENE})

    def __init__(
        self,
        *,
        stride: int = 1,
        min_area: int = 12,
        max_area: int | None = None,
        confirm_frames: int = 2,
        lose_frames: int = 5,
        max_jump: float = 24.0,
        move_tolerance: float = 2.0,
        reground_radius: float = 40.0,
        thresholds: ColourThresholds | None = None,
    ) -> None:
        if stride < 1 or confirm_frames < 1 or lose_frames < 1:
            raise ValueError("stride, confirm_frames and lose_frames must be >= 1")
        self.stride = stride
        self.min_area = min_area
        self.max_area = max_area
        self.confirm_frames = confirm_frames
        self.lose_frames = lose_frames
        self.max_jump = max_jump
        self.move_tolerance = move_tolerance
        self.reground_radius = reground_radius
        self.thresholds = thresholds or ColourThresholds()
        self._watch: dict[str, str] = {}
        self._tracks: dict[str, _Track] = {}
        self._frames_seen = 0
        self.perception = None  # None: the colour default (find_blobs, colour histograms)
        self._identity = None
        self._prototype: dict[str, np.ndarray] = {}
        self._similarities: list[dict] = []

    def use_perception(self, perception) -> None:
        self.perception = perception
        self._identity = perception.identity

    @staticmethod
    def key(phrase: str) -> str:
        return f"entity:{phrase}"

    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self._watch = {}
        for phrase in spec.watch:
            colour = colour_of(phrase.split())
            if colour is not None and colour in self.thresholds.hue_windows:
                self._watch[phrase] = colour
        self._tracks = {phrase: _Track() for phrase in self._watch}
        self._frames_seen = 0
        self._prototype = {}
        self._similarities = []

    def _features(self):
        if self._identity is None:
            from memory.perception.colour import ColourHistogram

            self._identity = ColourHistogram()
        return self._identity

    def _detected(self, rgb: np.ndarray, phrase: str, colour: str) -> list[Blob]:
        """The perception detector's objects for ``phrase``, as blobs (centre, area, box)."""
        out = []
        for d in self.perception.detector.detect(rgb, phrase):
            y, x = d.centre
            out.append(Blob(colour=colour, y=y, x=x, area=d.area, bbox=d.box))
        return out

    @property
    def _colour_default(self) -> bool:
        return self.perception is None or self.perception.is_default

    def blobs(self, rgb: np.ndarray, colours: Iterable[str] | None = None) -> list[Blob]:
        return find_blobs(
            rgb,
            self._watch.values() if colours is None else colours,
            min_area=self.min_area,
            max_area=self.max_area,
            thresholds=self.thresholds,
        )

    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if frame.rgb is None or not self._watch:
            return
        self._frames_seen += 1
        if not self._colour_default:
            for phrase, colour in self._watch.items():
                self._update(phrase, colour, self._detected(frame.rgb, phrase, colour), frame, store)
            return
        by_colour: dict[str, list[Blob]] = {}
        for blob in self.blobs(frame.rgb, set(self._watch.values())):
            by_colour.setdefault(blob.colour, []).append(blob)
        for phrase, colour in self._watch.items():
            self._update(phrase, colour, by_colour.get(colour, []), frame, store)

    def _update(self, phrase: str, colour: str, blobs: list[Blob], frame: Frame, store: MemoryStore) -> None:
        track = self._tracks[phrase]
        key = self.key(phrase)
        record = store.get(key)
        if track.lost:
            anchor = None  # lost for a while: accept the object wherever it reappears
        else:
            anchor = track.last or (record.position if isinstance(record, EntityRecord) else None)
        if anchor is not None:
            near = [b for b in blobs if b.distance(anchor) <= self.max_jump]
            blob = min(near, key=lambda b: b.distance(anchor)) if near else None
        else:
            blob = blobs[0] if blobs else None
        source = Source.of_frame(frame.source)

        if blob is None:
            track.streak = 0
            track.misses += 1
            if track.misses >= self.lose_frames:
                track.last = None
                track.lost = True
                if isinstance(record, EntityRecord) and record.status.readable:
                    store.update(
                        key,
                        record.evolve(status=EntityStatus.UNCERTAIN),
                        step=frame.step,
                        reason=f"{colour} blob not seen for {track.misses} frames",
                    )
            return

        track.misses = 0
        track.lost = False
        track.streak += 1
        track.last = (blob.y, blob.x)
        position = blob.point.as_tuple()
        if record is None:
            status = EntityStatus.VERIFIED if track.streak >= self.confirm_frames else EntityStatus.CANDIDATE
            store.add(
                key,
                EntityRecord(
                    identity=phrase,
                    role=canonical_role(phrase.split()[-1]),
                    position=position,
                    status=status,
                    source=source,
                ),
                step=frame.step,
                reason=f"{colour} blob of {blob.area} px",
            )
            return
        assert isinstance(record, EntityRecord)
        confirmed = track.streak >= self.confirm_frames
        if record.status is EntityStatus.CANDIDATE:
            new_status = EntityStatus.VERIFIED if confirmed else EntityStatus.CANDIDATE
        elif record.status is EntityStatus.UNCERTAIN:
            new_status = EntityStatus.REACQUIRED if confirmed else EntityStatus.UNCERTAIN
        else:
            new_status = record.status
        moved = record.position is None or (
            np.hypot(position[0] - record.position[0], position[1] - record.position[1]) > self.move_tolerance
        )
        if new_status.readable and phrase not in self._prototype:
            self._prototype[phrase] = self._features().embed(frame.rgb, blob.bbox)  # as first verified
        if new_status is not record.status or (moved and new_status.readable):
            self.commit(
                store,
                key,
                record.evolve(status=new_status, position=position, source=source),
                step=frame.step,
                reason=f"{colour} blob seen {track.streak}x in a row",
                accepted=True,
            )

    reground_priority = 1  # any coloured entity: asked after the tools that own a binding
    # tracks coloured objects frame to frame (2 consecutive sightings verify, 24 px max jump); its
    # video tracks serve readers whose answers hold at video stride 2
    render = RenderNeed(stride=4, video_stride=2)

    def reground(self, entity: EntityRecord, frame: Frame) -> Point | None:
        """Nearest blob of the entity's colour within ``reground_radius`` of its stored position.

        Without a stored position, the largest blob of that colour, but only if it is the
        only one (several same-coloured objects cannot be told apart by colour alone).
        """
        if frame.rgb is None:
            return None
        colour = colour_of(entity.identity.split())
        if colour is None or colour not in self.thresholds.hue_windows:
            return None
        blobs = self.blobs(frame.rgb, [colour]) if self._colour_default else self._detected(frame.rgb, entity.identity, colour)
        if not blobs:
            return None
        if entity.position is not None:
            near = [b for b in blobs if b.distance(entity.position) <= self.reground_radius]
            near = self._same_identity(entity, near, frame)
            return min(near, key=lambda b: b.distance(entity.position)).point if near else None
        blobs = self._same_identity(entity, blobs, frame)
        return blobs[0].point if len(blobs) == 1 else None

    def _same_identity(self, entity: EntityRecord, blobs: list[Blob], frame: Frame) -> list[Blob]:
        """``blobs`` whose identity features match the object as first verified (all of them when no
        minimum similarity is set; each similarity is logged either way)."""
        proto = self._prototype.get(entity.identity)
        if proto is None or not blobs:
            return blobs
        from memory.perception.base import cosine

        sims = [cosine(proto, self._features().embed(frame.rgb, b.bbox)) for b in blobs]
        floor = None if self.perception is None else self.perception.min_similarity
        kept = [b for b, s in zip(blobs, sims) if floor is None or s >= floor]
        self._similarities.append({"step": frame.step, "identity": entity.identity,
                                   "similarities": [round(s, 3) for s in sims], "kept": len(kept)})
        return kept

    def diagnostics(self) -> dict:
        return {"frames": self._frames_seen, "watching": dict(self._watch),
                "detector": "colour" if self._colour_default else self.perception.detector.name,
                "identity": self._features().name, "reground_identity": self._similarities[-20:]}
