"""Grounding DINO: boxes for a noun phrase ("green cube", "container") in a frame.

Loads a local checkpoint in transformers format (e.g. IDEA-Research/grounding-dino-tiny, with its
tokenizer files). A query's score is its highest token probability for the phrase; queries above
``box_threshold`` are kept, best first, overlapping duplicates dropped. With a segmenter, each box
also gets the object's pixels."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.perception.base import Detection, PerceptionSetupError, Segmenter
from memory.perception.hf_loading import load_model, local_dir, to_pixels, transformers_module

__all__ = ["GroundingDinoDetector"]


def _iou(a, b) -> float:
    y0, x0 = max(a[0], b[0]), max(a[1], b[1])
    y1, x1 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0, y1 - y0 + 1) * max(0, x1 - x0 + 1)
    area = lambda r: (r[2] - r[0] + 1) * (r[3] - r[1] + 1)  # noqa: E731
    return inter / float(area(a) + area(b) - inter)


class GroundingDinoDetector:
    name = "grounding-dino"

    def __init__(self, path: str | Path, *, device: str = "cpu", input_size: int = 800, box_threshold: float = 0.35,
                 max_detections: int = 10, segmenter: Segmenter | None = None):
        self.path = local_dir(path, "Grounding DINO detector")
        self.device = device
        self.input_size = int(input_size)
        self.box_threshold = float(box_threshold)
        self.max_detections = int(max_detections)
        self.segmenter = segmenter
        self.model = load_model("GroundingDinoForObjectDetection", str(self.path), device, "grounding-dino")
        try:
            self.tokenizer = transformers_module().AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        except Exception as exc:
            raise PerceptionSetupError(f"Grounding DINO detector: no tokenizer files in {str(self.path)!r}: {exc}") from exc

    @staticmethod
    def caption(phrase: str) -> str:
        """The model's caption form: lower case, ending with a period."""
        text = phrase.strip().lower()
        return text if text.endswith(".") else text + " ."

    def detect(self, rgb: np.ndarray, phrase: str) -> list[Detection]:
        import torch

        h, w = rgb.shape[:2]
        enc = self.tokenizer([self.caption(phrase)], return_tensors="pt")
        # the phrase's tokens only: not [CLS], [SEP] or the closing period
        special = {self.tokenizer.cls_token_id, self.tokenizer.sep_token_id, self.tokenizer.pad_token_id}
        period = self.tokenizer.convert_tokens_to_ids(".")
        if period != self.tokenizer.unk_token_id:  # a vocabulary without "." must not drop the unknown words
            special.add(period)
        tokens = [i for i, t in enumerate(enc["input_ids"][0].tolist()) if t not in special]
        if not tokens:  # an empty phrase names nothing
            return []
        enc = {k: v.to(self.device) for k, v in enc.items()}
        with torch.no_grad():
            out = self.model(pixel_values=to_pixels(rgb, (self.input_size, self.input_size), self.device), **enc)
        scores = out.logits[0].sigmoid()[:, tokens].max(dim=1).values.cpu().numpy()
        boxes = out.pred_boxes[0].cpu().numpy()  # (cx, cy, w, h), 0..1
        found: list[Detection] = []
        for q in np.argsort(-scores):
            if scores[q] < self.box_threshold or len(found) >= self.max_detections:
                break
            cx, cy, bw, bh = boxes[q]
            box = (int(np.clip((cy - bh / 2) * h, 0, h - 1)), int(np.clip((cx - bw / 2) * w, 0, w - 1)),
                   int(np.clip((cy + bh / 2) * h, 0, h - 1)), int(np.clip((cx + bw / 2) * w, 0, w - 1)))
            if any(_iou(box, d.box) > 0.7 for d in found):
                continue
            mask = self.segmenter.segment(rgb, box) if self.segmenter is not None else None
            found.append(Detection(phrase, box, float(scores[q]), mask))
        return found
