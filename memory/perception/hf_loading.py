"""Loading a transformers checkpoint from a local directory, and the image preparation the model
families here share.

No model hub is contacted (``local_files_only``): a missing directory, a missing package or a
checkpoint of the wrong kind fails at construction with a message that names it. Images are
prepared with torch alone (resize and ImageNet normalisation, what the published processors do),
so torchvision is not needed. A loaded model is kept per (kind, path, device) for the process: the
memory layer is rebuilt every episode, the weights are not reloaded.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from memory.perception.base import PerceptionSetupError

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
INSTALL_HINT = "install the model back-ends with: pip install -c constraints.txt -e '.[vision]'"


def local_dir(path: str | Path | None, what: str) -> Path:
    """``path`` as an existing directory, or a :class:`PerceptionSetupError` naming ``what`` it should hold."""
    if path is None or str(path) == "":
        raise PerceptionSetupError(f"{what}: no weights directory given (pass the local path of a downloaded checkpoint)")
    p = Path(path).expanduser()
    if not p.is_dir():
        raise PerceptionSetupError(f"{what}: weights directory {str(p)!r} does not exist")
    if not (p / "config.json").is_file():
        raise PerceptionSetupError(f"{what}: {str(p)!r} has no config.json (a transformers checkpoint directory is expected)")
    return p


def transformers_module():
    try:
        import transformers
    except ImportError as exc:  # pragma: no cover - the test install includes it
        raise PerceptionSetupError(f"{INSTALL_HINT} (import failed: {exc})") from exc
    return transformers


@lru_cache(maxsize=8)
def load_model(class_name: str, path: str, device: str, expected_type: str):
    """``transformers.<class_name>.from_pretrained(path)`` in eval mode on ``device``; the checkpoint's
    ``model_type`` must be ``expected_type``."""
    transformers = transformers_module()
    import json

    model_type = json.loads((Path(path) / "config.json").read_text()).get("model_type")
    if model_type != expected_type:
        raise PerceptionSetupError(f"{path!r} holds a {model_type!r} checkpoint, not {expected_type!r}")
    try:
        model = getattr(transformers, class_name).from_pretrained(path, local_files_only=True)
    except Exception as exc:
        raise PerceptionSetupError(f"cannot load {class_name} from {path!r}: {exc}") from exc
    return model.to(device).eval()


def to_pixels(rgb: np.ndarray, size: tuple[int, int], device: str = "cpu"):
    """(1, 3, H, W) float tensor: ``rgb`` resized to ``size`` (bilinear) and ImageNet-normalised."""
    import torch
    import torch.nn.functional as F

    x = torch.from_numpy(np.ascontiguousarray(rgb, dtype=np.float32) / 255.0).permute(2, 0, 1)[None]
    x = F.interpolate(x, size=size, mode="bilinear", align_corners=False, antialias=True)
    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    return ((x - mean) / std).to(device)
