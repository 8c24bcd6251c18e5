"""SAM 2 masks from a box: the object's own pixels inside a detector's loose box.

Loads a local SAM 2 checkpoint in transformers format (e.g. facebook/sam2.1-hiera-tiny); the frame
is resized to the model's input size, the box prompt scaled with it, and the low-resolution mask
logits brought back to the frame's size."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.perception.hf_loading import load_model, local_dir, to_pixels

__all__ = ["Sam2Segmenter"]


class Sam2Segmenter:
    name = "sam2"

    def __init__(self, path: str | Path, *, device: str = "cpu"):
        self.path = local_dir(path, "SAM 2 segmenter")
        self.device = device
        self.model = load_model("Sam2Model", str(self.path), device, "sam2")
        size = self.model.config.vision_config.backbone_config.image_size
        self.input_size = (int(size[0]), int(size[1])) if isinstance(size, (list, tuple)) else (int(size), int(size))

    def segment(self, rgb: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
        import torch
        import torch.nn.functional as F

        h, w = rgb.shape[:2]
        sy, sx = self.input_size[0] / h, self.input_size[1] / w
        y0, x0, y1, x1 = box
        prompt = torch.tensor([[[x0 * sx, y0 * sy, (x1 + 1) * sx, (y1 + 1) * sy]]], dtype=torch.float32, device=self.device)
        with torch.no_grad():
            out = self.model(pixel_values=to_pixels(rgb, self.input_size, self.device), input_boxes=prompt, multimask_output=False)
        logits = out.pred_masks[0, 0, :1]  # (1, h', w')
        full = F.interpolate(logits[None].float(), size=(h, w), mode="bilinear", align_corners=False)[0, 0]
        return (full > 0).cpu().numpy()
