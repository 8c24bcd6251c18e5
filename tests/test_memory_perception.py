"""Perception back-ends behind the memory tools.

The colour default is checked against the blob finder it wraps. Grounding DINO, SAM 2 and DINOv2
cannot run here with real weights (no model hub); their loading and inference code runs for real on
tiny randomly initialised checkpoints of the same transformers classes, saved to a directory and
loaded back the way a user's downloaded checkpoint is. Random weights make the outputs meaningless,
so those tests check what the code promises: shapes, ranges, order, determinism, and errors that
name the bad path.
"""

from __future__ import annotations

import numpy as np
import pytest

from memory.contract.frames import Frame
from memory.perception import (ColourDetector, ColourHistogram, Perception, PerceptionConfig, PerceptionSetupError,
                               build_perception, cosine)
from memory.store.records import EntityRecord
from memory.language.spec import specify
from memory.store.memory_store import MemoryStore
from memory.perception.blobs import find_blobs
from memory.tools.colour_blobs import ColourBlobTool

transformers = pytest.importorskip("transformers")


def _hsv_square(img, y, x, hue_deg, size=10):
    import cv2

    hsv = np.array([[[hue_deg / 2.0, 230, 220]]], dtype=np.uint8)  # OpenCV hue is 0..180
    img[y: y + size, x: x + size] = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)[0, 0]


def _table():
    img = np.zeros((256, 256, 3), np.uint8)
    img[:] = (150, 120, 90)  # wood-ish, low saturation
    return img


# --------------------------------------------------------------------------- colour default

def test_colour_detector_is_the_blob_finder():
    img = _table()
    _hsv_square(img, 50, 60, 5)
    _hsv_square(img, 120, 140, 5, size=14)
    _hsv_square(img, 200, 30, 120)
    found = ColourDetector().detect(img, "red cube")
    blobs = find_blobs(img, ["red"])
    assert [d.box for d in found] == [b.bbox for b in blobs] and len(found) == 2
    assert found[0].area >= found[1].area and abs(sum(d.score for d in found) - 1.0) < 1e-9
    assert ColourDetector().detect(img, "container") == []  # no colour word, nothing to find


def test_colour_histograms_tell_colours_apart_not_instances():
    img = _table()
    _hsv_square(img, 20, 20, 5)
    _hsv_square(img, 20, 60, 5)
    _hsv_square(img, 20, 100, 120)
    _hsv_square(img, 20, 140, 345)  # still "red" to the predicate, another hue bin
    h = ColourHistogram()
    a, b, g, r2 = (h.embed(img, (20, x, 29, x + 9)) for x in (20, 60, 100, 140))
    assert cosine(a, b) > 0.99
    assert cosine(a, g) < 0.05 and cosine(a, r2) < 0.05
    assert abs(np.linalg.norm(a) - 1.0) < 1e-9
    grey = np.full((20, 20, 3), 128, np.uint8)
    assert not h.embed(grey, (0, 0, 9, 9)).any()  # no coloured pixel: the zero vector


def _verified_red(tool, store, hue=5):
    img = _table()
    _hsv_square(img, 100, 100, hue)
    for step in range(3):
        tool.observe(Frame(step=step, rgb=img, source="live"), store)
    rec = store.get(ColourBlobTool.key("red cube"))
    assert isinstance(rec, EntityRecord) and rec.status.readable
    return rec


@pytest.mark.parametrize("floor, grounded", [(None, True), (0.9, False)])
def test_regrounding_gates_on_identity_features_when_a_floor_is_set(floor, grounded):
    """The red cube was verified with one hue; at re-grounding only a red object of another hue
    stands there. The colour predicate accepts it; identity features at a 0.9 floor do not."""
    tool = ColourBlobTool()
    tool.use_perception(Perception(ColourDetector(), ColourHistogram(), floor))
    store = MemoryStore()
    tool.reset(specify("pick up the red cube"), store)
    rec = _verified_red(tool, store)
    other = _table()
    _hsv_square(other, 104, 102, 345)
    point = tool.reground(rec, Frame(step=10, rgb=other, source="live"))
    assert (point is not None) is grounded
    log = tool.diagnostics()["reground_identity"]
    assert log and log[-1]["similarities"][0] < 0.05 and log[-1]["kept"] == int(grounded)


def test_the_default_perception_grounds_as_before():
    tool = ColourBlobTool()
    store = MemoryStore()
    tool.reset(specify("pick up the red cube"), store)
    rec = _verified_red(tool, store)
    same = _table()
    _hsv_square(same, 104, 102, 5)
    assert tool.reground(rec, Frame(step=10, rgb=same, source="live")) is not None
    assert tool.diagnostics()["detector"] == "colour" and tool.diagnostics()["identity"] == "colour-histogram"


# --------------------------------------------------------------------------- model back-ends on tiny checkpoints

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Tiny random checkpoints of the three model classes, saved the way real ones are."""
    import torch

    T = transformers
    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("weights")
    dino = T.Dinov2Model(T.Dinov2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                         patch_size=14, image_size=56))
    dino.save_pretrained(root / "dinov2")
    bb = T.Sam2HieraDetConfig(embed_dim_per_stage=[8, 16, 32, 64], blocks_per_stage=[1, 1, 2, 1],
                              num_attention_heads_per_stage=[1, 1, 1, 1], global_attention_blocks=[3], image_size=[256, 256],
                              hidden_size=8, window_positional_embedding_background_size=[4, 4], window_size_per_stage=[8, 4, 4, 4])
    sam = T.Sam2Model(T.Sam2Config(
        vision_config=T.Sam2VisionConfig(backbone_config=bb, backbone_channel_list=[64, 32, 16, 8], fpn_hidden_size=32,
                                         backbone_feature_sizes=[[64, 64], [32, 32], [16, 16]]),
        prompt_encoder_config=T.Sam2PromptEncoderConfig(hidden_size=32, image_size=256, patch_size=16),
        mask_decoder_config=T.Sam2MaskDecoderConfig(hidden_size=32, num_multimask_outputs=3, iou_head_hidden_dim=32,
                                                    mlp_dim=64, num_attention_heads=2)))
    sam.save_pretrained(root / "sam2")
    gd = T.GroundingDinoForObjectDetection(T.GroundingDinoConfig(
        backbone_config=T.SwinConfig(embed_dim=16, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], window_size=4, image_size=256,
                                     out_features=["stage2", "stage3", "stage4"]),
        text_config=T.BertConfig(vocab_size=40, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=64, max_position_embeddings=64),
        d_model=32, encoder_layers=1, decoder_layers=2, encoder_ffn_dim=64, decoder_ffn_dim=64, encoder_attention_heads=2,
        decoder_attention_heads=2, num_queries=20, num_feature_levels=4, encoder_n_points=2, decoder_n_points=2,
        max_text_len=32, use_timm_backbone=False))
    gd.save_pretrained(root / "gdino")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "red", "green", "blue", "cube", "container", "target"]
    T.BertTokenizerFast(vocab={w: i for i, w in enumerate(words)}).save_pretrained(root / "gdino")
    return root


def _frame():
    img = _table()
    _hsv_square(img, 50, 60, 5, size=16)
    _hsv_square(img, 150, 170, 120, size=16)
    return img


def test_dinov2_features_load_from_a_local_directory(tiny):
    from memory.perception.dinov2 import DinoV2Features

    f = DinoV2Features(tiny / "dinov2", input_size=56)
    img = _frame()
    a = f.embed(img, (50, 60, 65, 75))
    assert a.shape == (32,) and abs(np.linalg.norm(a) - 1.0) < 1e-6
    assert np.allclose(a, f.embed(img, (50, 60, 65, 75)))  # deterministic
    assert cosine(a, f.embed(img, (150, 170, 165, 185))) < 0.9999  # another object, another vector
    masked = np.zeros(img.shape[:2], bool)
    masked[52:60, 62:70] = True
    assert not np.allclose(a, f.embed(img, (50, 60, 65, 75), masked))  # the mask is honoured


def test_sam2_masks_come_back_at_the_frame_size(tiny):
    from memory.perception.sam2 import Sam2Segmenter

    seg = Sam2Segmenter(tiny / "sam2")
    assert seg.input_size == (256, 256)
    small = _frame()[::2, ::2]  # any frame size: the box is scaled to the model's input and back
    m = seg.segment(np.ascontiguousarray(small), (25, 30, 33, 38))
    assert m.shape == small.shape[:2] and m.dtype == bool


def test_grounding_dino_detects_boxes_in_the_frame_best_first(tiny):
    from memory.perception.grounding_dino import GroundingDinoDetector
    from memory.perception.sam2 import Sam2Segmenter

    det = GroundingDinoDetector(tiny / "gdino", input_size=256, box_threshold=0.0, max_detections=5,
                                segmenter=Sam2Segmenter(tiny / "sam2"))
    assert det.caption("Red Cube") == "red cube ."
    assert det.tokenizer.convert_ids_to_tokens(det.tokenizer("red cube .")["input_ids"]) == ["[CLS]", "red", "cube", ".", "[SEP]"]
    img = _frame()
    found = det.detect(img, "red cube")
    assert 1 <= len(found) <= 5
    assert [d.score for d in found] == sorted((d.score for d in found), reverse=True)
    for d in found:
        y0, x0, y1, x1 = d.box
        assert 0 <= y0 <= y1 < 256 and 0 <= x0 <= x1 < 256 and 0.0 <= d.score <= 1.0
        assert d.mask is not None and d.mask.shape == (256, 256)
    again = det.detect(img, "red cube")
    assert [d.box for d in again] == [d.box for d in found]
    assert det.detect(img, "red cube") and GroundingDinoDetector(tiny / "gdino", input_size=256, box_threshold=1.01).detect(img, "red cube") == []


def test_the_colour_tool_runs_on_model_back_ends(tiny):
    """Plumbing: the tool takes detections of its watched phrase from the configured detector."""
    perception = build_perception(PerceptionConfig(detector="grounding-dino", detector_path=str(tiny / "gdino"),
                                                   identity="dinov2", identity_path=str(tiny / "dinov2")))
    tool = ColourBlobTool()
    tool.use_perception(perception)
    store = MemoryStore()
    tool.reset(specify("pick up the red cube"), store)
    tool.observe(Frame(step=0, rgb=_frame(), source="live"), store)
    d = tool.diagnostics()
    assert d["detector"] == "grounding-dino" and d["identity"] == "dinov2" and d["frames"] == 1


def test_setup_errors_name_what_is_wrong(tiny, tmp_path):
    from memory.perception.dinov2 import DinoV2Features

    with pytest.raises(PerceptionSetupError, match="does not exist"):
        DinoV2Features(tmp_path / "missing")
    with pytest.raises(PerceptionSetupError, match="no config.json"):
        DinoV2Features(tmp_path)
    with pytest.raises(PerceptionSetupError, match="'sam2' checkpoint, not 'dinov2'"):
        DinoV2Features(tiny / "sam2")
    with pytest.raises(PerceptionSetupError, match="no weights directory"):
        build_perception(PerceptionConfig(detector="grounding-dino"))
    with pytest.raises(ValueError, match="perception.identity 'clip'"):
        PerceptionConfig(identity="clip")


def test_a_run_with_a_missing_checkpoint_stops_before_any_episode(tmp_path, capsys):
    from experiments.run import main

    rc = main(["--tasks", "VideoUnmask", "--conditions", "memory", "--out", str(tmp_path / "run"),
               "--wandb", "disabled", "--perception.identity", "dinov2", "--perception.identity-path", str(tmp_path / "none")])
    assert rc == 2 and "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "run" / "episodes.jsonl").exists()
