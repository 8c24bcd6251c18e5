"""VLMComposer against a real local OpenAI-compatible HTTP endpoint.

A ThreadingHTTPServer on 127.0.0.1 implements POST /v1/chat/completions with scripted
answers and records every request body, so the tests check what actually goes over
the wire (images, goal, numbered history) and how answers are read back.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from policies.vlm import OpenAIChatBackend, VLMComposer, VLMSetupError, encode_png
from policies.vlm_prompt import AnswerFormatError, mask_points, normalize_answer, sample_frames

pytestmark = pytest.mark.timeout(30)

GOAL = "pick up the red cube and place it on the target, repeating this action two times, then press the button to stop"


class FakeChatServer:
    """Answers each chat request with the next scripted reply (the last one repeats)."""

    def __init__(self, answers, delay_s: float = 0.0, status: int = 200):
        self.answers = list(answers)
        self.delay_s = delay_s
        self.status = status
        self.requests: list[dict] = []
        self.paths: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                owner.paths.append(self.path)
                owner.requests.append(json.loads(body))
                if owner.delay_s:
                    time.sleep(owner.delay_s)
                if owner.status != 200:
                    payload = b'{"error": "model overloaded"}'
                else:
                    i = min(len(owner.requests), len(owner.answers)) - 1
                    payload = json.dumps(
                        {"id": "x", "object": "chat.completion",
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": owner.answers[i]},
                                      "finish_reason": "stop"}]}
                    ).encode()
                try:
                    self.send_response(owner.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client timed out and left

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def decode_png(data: bytes) -> np.ndarray:
    """Decoder for the unfiltered 8-bit RGB PNGs encode_png writes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", None, None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        tag, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if tag == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert (depth, colour) == (8, 2)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + length
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * 3)
    assert not rows[:, 0].any()
    return rows[:, 1:].reshape(height, width, 3)


def images_of(request: dict) -> list[np.ndarray]:
    out = []
    for part in request["messages"][-1]["content"]:
        if part["type"] == "image_url":
            url = part["image_url"]["url"]
            assert url.startswith("data:image/png;base64,")
            out.append(decode_png(base64.b64decode(url.split(",", 1)[1])))
    return out


def text_of(request: dict) -> str:
    return "\n".join(p["text"] for m in request["messages"] for p in m["content"] if p["type"] == "text")


def make_obs(step=0, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "front_rgb": rng.integers(0, 256, (256, 256, 3), dtype=np.uint8),
        "wrist_rgb": None,
        "joint_state": np.zeros(7, np.float32),
        "gripper_state": np.full(2, 0.04, np.float32),
        "goal": GOAL,
        "subgoal": "",
        "step": step,
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------- over HTTP
def test_request_format_goal_images_and_numbered_history():
    answers = [
        "pick up the red cube at <|box_start|>(532,379)<|box_end|> for the first time",
        "place the red cube onto the target at <|box_start|>(500,500)<|box_end|>",
        "pick up the red cube at <|box_start|>(540,380)<|box_end|> for the second time",
    ]
    demo = [np.full((256, 256, 3), i * 20, np.uint8) for i in range(12)]
    with FakeChatServer(answers) as server:
        composer = VLMComposer.from_url(server.url, model="qwen3-vl", timeout_s=5, max_demo_frames=4)
        composer.reset(GOAL, seed=11, demo_frames=demo)
        obs = [make_obs(step=16 * i, seed=i) for i in range(3)]
        got = [composer.propose(o, {}) for o in obs]

    assert got == [
        "pick up the red cube at <136, 97> for the first time",
        "place the red cube onto the target at <128, 128>",
        "pick up the red cube at <138, 97> for the second time",
    ]
    assert composer.bad_answers == []
    assert server.paths == ["/v1/chat/completions"] * 3
    first, _, third = server.requests
    assert first["model"] == "qwen3-vl" and first["temperature"] == 0.0
    assert first["max_tokens"] == 128 and first["seed"] == 11
    assert [m["role"] for m in first["messages"]] == ["system", "user"]

    # images: 4 evenly spaced demo frames (first and last kept), then the current view
    imgs = images_of(first)
    assert len(imgs) == 5
    assert [int(im[0, 0, 0]) for im in imgs[:4]] == [0, 80, 140, 220]
    np.testing.assert_array_equal(imgs[-1], obs[0]["front_rgb"])
    np.testing.assert_array_equal(images_of(third)[-1], obs[2]["front_rgb"])

    # goal everywhere; history: none at first, then numbered with points masked
    assert GOAL in text_of(first) and "initial turn" in text_of(first)
    history = text_of(third)
    assert "1. pick up the red cube at <bbox> for the first time" in history
    assert "2. place the red cube onto the target at <bbox>" in history
    assert "136, 97" not in history  # stale points never go back to the model
    assert composer.history == got
    assert [c["step"] for c in composer.calls] == [0, 16, 32]


def test_repeated_subgoal_is_kept_once_in_history():
    answer = "pick up the red cube at <|box_start|>(532,379)<|box_end|> for the first time"
    with FakeChatServer([answer]) as server:
        composer = VLMComposer.from_url(server.url, timeout_s=5)
        composer.reset(GOAL, seed=0, demo_frames=[])
        assert composer.propose(make_obs(0), {}) == composer.propose(make_obs(16), {})
        assert len(composer.history) == 1
        assert "1. pick up the red cube at <bbox>" in text_of(server.requests[1])
        assert not images_of(server.requests[0])[:-1]  # no demo frames, only the current view


@pytest.mark.parametrize(
    "answer",
    [
        "I'm sorry, I cannot tell what the robot should do from this image.",  # prose, not a subgoal
        "pick up the red cube at <|box_start|>(532,",  # broken markup
        "pick up the red cube at <1200, 40>",  # off the 0-1000 grid
        "pick up the red cube at <12.5, 40.2, 7>",  # garbled point
        "",
    ],
)
def test_garbage_answer_returns_none_and_is_logged(answer):
    with FakeChatServer([answer]) as server:
        composer = VLMComposer.from_url(server.url, timeout_s=5)
        composer.reset(GOAL, seed=0, demo_frames=[])
        assert composer.propose(make_obs(step=32), {}) is None
    assert composer.history == []
    [bad] = composer.bad_answers
    assert bad["kind"] == "parse" and bad["answer"] == answer and bad["step"] == 32 and bad["error"]


def test_server_down_returns_none_and_is_logged():
    port = free_port()
    composer = VLMComposer.from_url(f"http://127.0.0.1:{port}", timeout_s=2)
    composer.reset(GOAL, seed=0, demo_frames=[])
    t0 = time.monotonic()
    assert composer.propose(make_obs(step=16), {}) is None
    assert time.monotonic() - t0 < 3
    [bad] = composer.bad_answers
    assert bad["kind"] == "backend" and bad["answer"] is None
    assert f"127.0.0.1:{port}/v1/chat/completions" in bad["error"]


def test_slow_server_times_out_to_none():
    with FakeChatServer(["press the button"], delay_s=1.0) as server:
        composer = VLMComposer.from_url(server.url, timeout_s=0.3)
        composer.reset(GOAL, seed=0, demo_frames=[])
        t0 = time.monotonic()
        assert composer.propose(make_obs(), {}) is None
        assert time.monotonic() - t0 < 0.9
    assert composer.bad_answers[0]["kind"] == "backend"
    assert "timed out" in composer.bad_answers[0]["error"] or "timeout" in composer.bad_answers[0]["error"]


def test_http_error_returns_none_and_is_logged():
    with FakeChatServer([""], status=503) as server:
        composer = VLMComposer.from_url(server.url + "/v1", timeout_s=5)
        composer.reset(GOAL, seed=0, demo_frames=[])
        assert composer.propose(make_obs(), {}) is None
    assert "503" in composer.bad_answers[0]["error"] and "overloaded" in composer.bad_answers[0]["error"]


def test_reset_clears_episode_state():
    with FakeChatServer(["garbage words", "press the button"]) as server:
        composer = VLMComposer.from_url(server.url, timeout_s=5)
        composer.reset(GOAL, seed=0, demo_frames=[])
        composer.propose(make_obs(), {})
        composer.propose(make_obs(16), {})
        assert composer.bad_answers and composer.history == ["press the button"]
        composer.reset("another goal", seed=1, demo_frames=[])
        assert composer.history == [] and composer.bad_answers == [] and composer.calls == []


# ---------------------------------------------------------------------------- local backend
def test_missing_local_weights_path_is_a_clear_error(tmp_path):
    missing = tmp_path / "Qwen3-VL-4B"
    with pytest.raises(VLMSetupError, match="Qwen3-VL-4B.*does not exist"):
        VLMComposer.from_local(missing)


def test_missing_transformers_names_the_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(VLMSetupError, match=r"pip install -c constraints.txt transformers"):
        VLMComposer.from_local(tmp_path)


# ---------------------------------------------------------------------------- conventions
def test_rescaling_from_1000_grid_to_256_pixels():
    assert normalize_answer("pick up the cube at <|box_start|>(0,0)<|box_end|>") == "pick up the cube at <0, 0>"
    assert normalize_answer("pick up the cube at <|box_start|>(1000,1000)<|box_end|>") == \
        "pick up the cube at <255, 255>"
    assert normalize_answer("pick up the cube at <500, 250>") == "pick up the cube at <128, 64>"
    # a two-corner box answers its centre; (x, y) models are supported by order="xy"
    assert normalize_answer("hook the cube at <|box_start|>(100,200),(300,400)<|box_end|> to the target at "
                            "<|box_start|>(0,1000)<|box_end|>", order="xy") == \
        "hook the cube at <77, 51> to the target at <255, 0>"
    # surrounding chatter that is easy to strip
    assert normalize_answer('Subgoal: "press the button."\nBecause the cube is on the target.') == \
        "press the button"
    with pytest.raises(AnswerFormatError, match="1001"):
        normalize_answer("press the button at <1001, 3>")


def test_mask_points_and_sample_frames():
    assert mask_points("hook the cube at <1, 2> to the target at <30,40>") == \
        "hook the cube at <bbox> to the target at <bbox>"
    frames = list(range(10))
    assert sample_frames(frames, 3) == [0, 4, 9] and sample_frames(frames, 0) == []
    assert sample_frames(frames[:2], 10) == [0, 1]


def test_png_roundtrip_and_openai_request_shape():
    img = np.random.default_rng(3).integers(0, 256, (256, 256, 3), dtype=np.uint8)
    np.testing.assert_array_equal(decode_png(encode_png(img)), img)
    backend = OpenAIChatBackend("http://127.0.0.1:9/v1/chat/completions", "m")
    assert backend.url == "http://127.0.0.1:9/v1/chat/completions"
    body = backend.build_request([{"role": "user", "content": [{"type": "image", "image": img}]}], seed=None)
    assert "seed" not in body and body["messages"][0]["content"][0]["type"] == "image_url"
    with pytest.raises(ValueError, match="ftp://x"):
        OpenAIChatBackend("ftp://x")


def test_composer_is_a_composer():
    from policies.base import Composer

    composer = VLMComposer(OpenAIChatBackend("http://127.0.0.1:9"))
    assert isinstance(composer, Composer)
    assert "127.0.0.1:9/v1/chat/completions" in repr(composer)
