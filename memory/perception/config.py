"""Which perception back-ends the memory tools use: a typed config and the bundle built from it.

The default (``colour`` detector, ``colour-histogram`` identity, no identity gate) is what every
measured result in this repository ran with. The research setting swaps in Grounding DINO (+ SAM 2
masks) as the detector and DINOv2 as the identity features, each from a local directory::

    python -m experiments.run ... --perception.detector grounding-dino \\
        --perception.detector-path ~/w/grounding-dino-tiny --perception.segmenter-path ~/w/sam2.1-hiera-tiny \\
        --perception.identity dinov2 --perception.identity-path ~/w/dinov2-small --perception.identity-min-similarity 0.6
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from memory.perception.base import Detector, IdentityFeatures, PerceptionSetupError
from memory.perception.colour import ColourDetector, ColourHistogram

__all__ = ["Perception", "PerceptionConfig", "build_perception"]


@dataclass(frozen=True)
class PerceptionConfig:
    detector: Literal["colour", "grounding-dino"] = "colour"
    """Where the goal's objects are: colour blobs (CPU default) or Grounding DINO boxes."""
    detector_path: str | None = None
    """Local Grounding DINO checkpoint directory (transformers format, with tokenizer files)."""
    segmenter_path: str | None = None
    """Local SAM 2 checkpoint directory: masks for the detector's boxes (optional)."""
    identity: Literal["colour-histogram", "dinov2"] = "colour-histogram"
    """Identity features compared when a remembered object is re-grounded."""
    identity_path: str | None = None
    """Local DINOv2 checkpoint directory."""
    identity_min_similarity: float | None = None
    """Re-grounding accepts only a candidate this similar (cosine) to the object as first verified;
    ``None``: similarity is logged, not gated."""
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.detector not in ("colour", "grounding-dino"):
            raise ValueError(f"perception.detector {self.detector!r}: expected 'colour' or 'grounding-dino'")
        if self.identity not in ("colour-histogram", "dinov2"):
            raise ValueError(f"perception.identity {self.identity!r}: expected 'colour-histogram' or 'dinov2'")
        s = self.identity_min_similarity
        if s is not None and not -1.0 <= s <= 1.0:
            raise ValueError(f"perception.identity_min_similarity {s!r}: a cosine, in [-1, 1]")


@dataclass(frozen=True)
class Perception:
    detector: Detector
    identity: IdentityFeatures
    min_similarity: float | None = None

    @property
    def is_default(self) -> bool:
        return isinstance(self.detector, ColourDetector)


def build_perception(cfg: PerceptionConfig | None = None) -> Perception:
    """The back-ends ``cfg`` names, loaded once per process (the memory layer is rebuilt every
    episode; the back-ends keep no episode state); raises :class:`PerceptionSetupError` naming what
    is missing."""
    return _build(cfg or PerceptionConfig())


@lru_cache(maxsize=4)
def _build(cfg: PerceptionConfig) -> Perception:
    if cfg.detector == "colour":
        if cfg.segmenter_path:
            raise PerceptionSetupError("perception.segmenter_path is given but the colour detector has no boxes to segment")
        detector: Detector = ColourDetector()
    else:
        from memory.perception.grounding_dino import GroundingDinoDetector

        segmenter = None
        if cfg.segmenter_path:
            from memory.perception.sam2 import Sam2Segmenter

            segmenter = Sam2Segmenter(cfg.segmenter_path, device=cfg.device)
        detector = GroundingDinoDetector(cfg.detector_path, device=cfg.device, segmenter=segmenter)
    if cfg.identity == "colour-histogram":
        identity: IdentityFeatures = ColourHistogram()
    else:
        from memory.perception.dinov2 import DinoV2Features

        identity = DinoV2Features(cfg.identity_path, device=cfg.device)
    return Perception(detector, identity, cfg.identity_min_similarity)
