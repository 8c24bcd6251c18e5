"""DINOv2 identity features: the class token of the object's crop, unit length.

Colour tells a red cube from a green one; telling two red cubes apart after a swap, or a
container from its look-alike, needs appearance features. This back-end embeds the object's box
(with ``margin`` pixels of context) with a local DINOv2 checkpoint (e.g. facebook/dinov2-small,
downloaded beforehand) at ``input_size`` pixels."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.perception.hf_loading import IMAGENET_MEAN, load_model, local_dir, to_pixels

__all__ = ["DinoV2Features"]


class DinoV2Features:
    name = "dinov2"

    def __init__(self, path: str | Path, *, device: str = "cpu", input_size: int = 224, margin: int = 4):
        self.path = local_dir(path, "DINOv2 identity features")
        self.device = device
        self.input_size = int(input_size)
        self.margin = int(margin)
        self.model = load_model("Dinov2Model", str(self.path), device, "dinov2")

    def embed(self, rgb: np.ndarray, box: tuple[int, int, int, int], mask: np.ndarray | None = None) -> np.ndarray:
        import torch

        h, w = rgb.shape[:2]
        y0, x0, y1, x1 = (int(v) for v in box)
        y0, x0 = max(0, y0 - self.margin), max(0, x0 - self.margin)
        y1, x1 = min(h - 1, y1 + self.margin), min(w - 1, x1 + self.margin)
        crop = np.array(rgb[y0: y1 + 1, x0: x1 + 1])
        if mask is not None:  # the object alone: everything else the mean colour (zero after normalising)
            keep = mask[y0: y1 + 1, x0: x1 + 1]
            crop[~keep] = (np.array(IMAGENET_MEAN) * 255).astype(np.uint8)
        with torch.no_grad():
            out = self.model(pixel_values=to_pixels(crop, (self.input_size, self.input_size), self.device))
        v = out.pooler_output[0].detach().cpu().numpy().astype(np.float64)
        n = float(np.linalg.norm(v))
        return v / n if n > 0 else v
