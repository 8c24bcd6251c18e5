"""Perception back-ends behind the memory tools: detector, segmenter, identity features.

CPU default: colour blobs and colour histograms. Research setting: Grounding DINO, SAM 2 and DINOv2
from local checkpoint directories (see :mod:`memory.perception.config`)."""

from memory.perception.base import Detection, Detector, IdentityFeatures, PerceptionSetupError, Segmenter, cosine
from memory.perception.colour import ColourDetector, ColourHistogram
from memory.perception.config import Perception, PerceptionConfig, build_perception

__all__ = ["ColourDetector", "ColourHistogram", "Detection", "Detector", "IdentityFeatures", "Perception",
           "PerceptionConfig", "PerceptionSetupError", "Segmenter", "build_perception", "cosine"]
