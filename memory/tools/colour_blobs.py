"""The colour-blob tool: entity records for the coloured objects the goal asks to watch.

:class:`ColourBlobTool` uses these blobs to maintain entity records for the coloured
objects the goal asks to watch, moving each record through the candidate -> verified
-> uncertain -> reacquired lifecycle, and to re-ground recalled coloured entities.
The pixel predicates it uses live in :mod:`memory.perception.blobs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable
import numpy as np

from memory.events.tracking import BlobTrack, TrackConfig
from memory.contract.frames import Frame
from memory.language.needs import Need
from memory.perception.blobs import Blob, ColourThresholds, find_blobs
from memory.store.records import EntityRecord, EntityStatus, Source
from memory.language.spec import MemorySpec
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.language.words import canonical_role, colour_of
from subgoals.grammar import Point
from memory.tools.groups import ToolGroup

__all__ = ["BlobToolThresholds", "ColourBlobTool"]


@dataclass(frozen=True)
class BlobToolThresholds:
    """The numbers :class:`ColourBlobTool` takes blobs and moves records with, beside the colour predicates (:class:`~memory.perception.blobs.ColourThresholds`) and the track's gate (:class:`~memory.events.tracking.TrackConfig`); pixels in the 256x256 frame."""

    min_area: int = 12
    """Smallest blob (px) that counts as an object: smaller ones are stray pixels of a vivid hue."""
    max_area: int | None = None
    """Largest blob (px); ``None``: no limit."""
    move_tolerance: float = 2.0
    """Smallest move (px) of a verified object worth an UPDATE (centroid jitter stays below it)."""
    reground_radius: float = 40.0
    """How far (px) from the stored position a blob may be to re-ground a recalled entity."""


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
    candidate below it is not taken (no look-alike is grounded; the read falls back on the record's
    stored position, or abstains with ``MemoryConfig.record_position_fallback`` off).
    """

    name = "colour_blobs"
    group = ToolGroup.IDENTITY
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
        self.config = BlobToolThresholds(
            min_area=min_area, max_area=max_area, move_tolerance=move_tolerance, reground_radius=reground_radius,
        )
        self.colour_thresholds = thresholds or ColourThresholds()
        self.track_config = TrackConfig(max_jump=max_jump, confirm_frames=confirm_frames, lose_frames=lose_frames)
        self._watch: dict[str, str] = {}
        self._tracks: dict[str, BlobTrack] = {}
        self._frames_seen = 0
        self.perception = None  # None: the colour default (find_blobs, colour histograms)
        self._identity = None
        self._prototype: dict[str, np.ndarray] = {}
        self._similarities: list[dict] = []

    def thresholds(self) -> tuple:
        return (self.config, self.colour_thresholds, self.track_config)

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
            if colour is not None and colour in self.colour_thresholds.hue_windows:
                self._watch[phrase] = colour
        self._tracks = {phrase: BlobTrack(self.track_config) for phrase in self._watch}
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
            min_area=self.config.min_area,
            max_area=self.config.max_area,
            thresholds=self.colour_thresholds,
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
        # lost for a while: the track accepts the object wherever it reappears
        blob = track.associate(blobs, record.position if isinstance(record, EntityRecord) else None)
        source = Source.of_frame(frame.source)

        if blob is None:
            if track.miss():
                if isinstance(record, EntityRecord) and record.status.readable:
                    store.update(
                        key,
                        record.evolve(status=EntityStatus.UNCERTAIN),
                        step=frame.step,
                        reason=f"{colour} blob not seen for {track.misses} frames",
                    )
            return

        track.hit(blob)
        position = blob.point.as_tuple()
        if record is None:
            status = EntityStatus.VERIFIED if track.confirmed else EntityStatus.CANDIDATE
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
        confirmed = track.confirmed
        if record.status is EntityStatus.CANDIDATE:
            new_status = EntityStatus.VERIFIED if confirmed else EntityStatus.CANDIDATE
        elif record.status is EntityStatus.UNCERTAIN:
            new_status = EntityStatus.REACQUIRED if confirmed else EntityStatus.UNCERTAIN
        else:
            new_status = record.status
        moved = record.position is None or (
            np.hypot(position[0] - record.position[0], position[1] - record.position[1]) > self.config.move_tolerance
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
        if colour is None or colour not in self.colour_thresholds.hue_windows:
            return None
        blobs = self.blobs(frame.rgb, [colour]) if self._colour_default else self._detected(frame.rgb, entity.identity, colour)
        if not blobs:
            return None
        if entity.position is not None:
            near = [b for b in blobs if b.distance(entity.position) <= self.config.reground_radius]
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
