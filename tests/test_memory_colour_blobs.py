"""The colour predicates, blob extraction and the colour tool's record lifecycle, on synthetic frames."""

from __future__ import annotations

import numpy as np
import pytest

from memory.contract.frames import Frame
from memory.layer import MemoryConfig, MemoryLayer
from memory.store.records import EntityRecord, EntityStatus
from memory.perception.blobs import colour_mask, find_blobs, hsv
from memory.tools.colour_blobs import ColourBlobTool
from subgoals.grammar import Point

TABLE = (196, 168, 128)  # light wood, weakly saturated


def canvas() -> np.ndarray:
    img = np.empty((256, 256, 3), np.uint8)
    img[:] = TABLE
    return img


def paint(img: np.ndarray, y: int, x: int, colour, half: int = 4) -> None:
    img[y - half : y + half + 1, x - half : x + half + 1] = colour


def test_hsv_of_pure_colours():
    px = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [128, 128, 128], [0, 0, 0]]], np.uint8)
    hue, sat, val = hsv(px)
    assert hue[0, :3].tolist() == [0.0, 120.0, 240.0]
    assert sat[0].tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert val[0].tolist() == [255, 255, 255, 128, 0]


def test_blobs_find_rendered_colours_and_ignore_look_alikes():
    img = canvas()
    paint(img, 40, 60, (185, 28, 30))  # lit red face
    img[44:49, 56:65] = (120, 14, 20)  # shaded lower part of the same cube
    paint(img, 100, 150, (35, 165, 45))  # green
    paint(img, 200, 30, (30, 45, 190))  # blue
    paint(img, 150, 200, (160, 32, 240))  # purple target ring: not blue
    paint(img, 60, 200, (236, 115, 87))  # salmon peg: not red
    paint(img, 220, 220, (230, 230, 230))  # white container
    img[10:12, 10:12] = (200, 10, 10)  # a 4 px speck: below min_area
    blobs = find_blobs(img)
    assert sorted(b.colour for b in blobs) == ["blue", "green", "red"]
    by = {b.colour: b for b in blobs}
    assert by["green"].point == Point(100, 150) and by["green"].area == 81
    assert by["blue"].point == Point(200, 30)
    assert abs(by["red"].y - 42) < 3 and abs(by["red"].x - 60) < 1 and by["red"].area == 81 + 36
    assert by["red"].bbox == (36, 56, 48, 64)
    assert not colour_mask(img, "blue")[150, 200] and not colour_mask(img, "red")[60, 200]
    assert len(find_blobs(img, ["red"], min_area=1)) == 2
    assert find_blobs(img, ["red"], max_area=50) == []
    with pytest.raises(ValueError, match="purple"):
        colour_mask(img, "purple")


def frame(step: int, green_at: tuple[int, int] | None, source: str = "live") -> Frame:
    img = canvas()
    if green_at is not None:
        paint(img, *green_at, (40, 170, 50))
    return Frame(step=step, rgb=img, source=source)  # type: ignore[arg-type]


GOAL = "pick up the green cube and place it on the target, repeating this action three times"


def test_record_lifecycle_candidate_verified_uncertain_reacquired():
    layer = MemoryLayer(MemoryConfig(), [ColourBlobTool()])
    layer.reset(GOAL, [frame(0, (100, 100), "video"), frame(1, (101, 100), "video")])
    path = [(110, 100), None, None, None, None, None, (150, 150), (151, 150)]
    for step, where in enumerate(path, start=2):
        layer.observe(frame(step, where))

    def status(step: int) -> tuple[str, list[int]]:
        rec = layer.snapshot(step)["records"]["entity"]["entity:green cube"]
        return rec["status"], rec["position"]

    assert status(0) == ("candidate", [100, 100])
    assert status(1) == ("verified", [101, 100])
    assert status(2) == ("verified", [110, 100])
    assert status(6)[0] == "verified"  # four misses are tolerated
    assert status(7) == ("uncertain", [110, 100])  # identity kept, position stale
    assert status(8)[0] == "uncertain"  # one sighting is not enough
    assert status(9) == ("reacquired", [151, 150])
    sources = [e.after.source.value for e in layer.store.history("entity:green cube")]
    assert sources[:2] == ["demonstration", "demonstration"] and sources[-1] == "live"


def test_plain_colour_words_are_not_read_but_agent_decided_access_reads_them():
    proposed = "pick up the green cube at <0, 0> for the first time"
    frames = [frame(0, (100, 100)), frame(1, (100, 100))]
    structured = MemoryLayer(MemoryConfig(), [ColourBlobTool()])
    structured.reset(GOAL, [])
    for f in frames:
        structured.observe(f)
    assert structured.revise(proposed, frame(2, (104, 100))).text == proposed
    assert structured.traces == []

    agent = MemoryLayer(MemoryConfig(agent_decided_access=True, record_position_fallback=False), [ColourBlobTool()])
    agent.reset(GOAL, [])
    for f in frames:
        agent.observe(f)
    rev = agent.revise(proposed, frame(2, (104, 100)))
    assert rev.text == "pick up the green cube at <104, 100> for the first time"
    assert rev.trace.record_status == "verified"
    # the green cube is now out of view: re-grounding fails and, without the stored-position
    # fallback, the layer abstains
    rev = agent.revise(proposed, frame(3, None))
    assert not rev.rewritten and rev.trace.reason_code == "no-grounding"
    # by default the record's stored position answers: where the memory last saw the cube (the
    # observed frames put it at <100, 100>; a read's re-grounding does not move the record)
    default = MemoryLayer(MemoryConfig(agent_decided_access=True), [ColourBlobTool()])
    default.reset(GOAL, [])
    for f in frames:
        default.observe(f)
    rev = default.revise(proposed, frame(3, None))
    assert rev.text == "pick up the green cube at <100, 100> for the first time"
    assert "stored position" in rev.trace.reason


def test_reground_rules():
    tool = ColourBlobTool(reground_radius=30)
    img = canvas()
    paint(img, 50, 50, (40, 170, 50))
    paint(img, 200, 200, (40, 170, 50))
    f = Frame(step=0, rgb=img)
    near = EntityRecord("green cube", "cube", position=(60, 55), status=EntityStatus.VERIFIED)
    assert tool.reground(near, f) == Point(50, 50)
    assert tool.reground(near.evolve(position=(120, 120)), f) is None  # nothing close enough
    assert tool.reground(near.evolve(position=None), f) is None  # two candidates, no way to choose
    assert tool.reground(near.evolve(identity="container"), f) is None  # no colour to go by
    assert tool.reground(near, Frame(step=1)) is None  # unrendered step


def test_stride_skips_frames():
    tool = ColourBlobTool(stride=3)
    layer = MemoryLayer(MemoryConfig(), [tool])
    layer.reset(GOAL, [])
    for step in range(7):
        layer.observe(frame(step, (100, 100)))
    assert tool.diagnostics()["frames"] == 3  # steps 0, 3, 6
    with pytest.raises(ValueError):
        ColourBlobTool(stride=0)
