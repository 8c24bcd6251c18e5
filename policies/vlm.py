"""A real vision-language model as the subgoal composer (Qwen3-VL class).

:class:`VLMComposer` asks a chat VLM for the next grounded subgoal with RoboMME's
prompt and coordinate conventions (see :mod:`policies.vlm_prompt`): the goal, its own
numbered earlier subgoals with points masked, the current front image; points come
back on a 0–1000 grid and are rescaled to the 256-pixel image. The answer must parse
with :mod:`subgoals.grammar`; an answer that does not, or a backend that fails
(server down, timeout, HTTP error), is logged in :attr:`VLMComposer.bad_answers` and
the composer returns None ("no proposal"); it never raises during an episode.

Two backends behind :class:`ChatBackend` (``complete(messages, seed) -> str``):

* :class:`OpenAIChatBackend`: any OpenAI-compatible ``/v1/chat/completions``
  endpoint (vLLM, SGLang, ...), images sent inline as base64 PNG data URLs, standard
  library only. Example: ``vllm serve Qwen/Qwen3-VL-4B-Instruct --limit-mm-per-prompt
  '{"image": 11}'`` then ``VLMComposer.from_url("http://127.0.0.1:8000")``.
* :class:`TransformersBackend`: in-process ``transformers`` from a local weights
  directory (no model hub). Needs ``pip install -c constraints.txt transformers``
  (the ``vision`` extra). Construction fails with a clear message when the path or
  the package is missing.
"""

from __future__ import annotations

import abc
import base64
import json
import logging
import struct
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from policies.base import Composer
from policies.vlm_prompt import (
    POINT_PLACEHOLDER,
    AnswerFormatError,
    SYSTEM_PROMPT,
    build_messages,
    normalize_answer,
    sample_frames,
)
from subgoals.grammar import format_subgoal, parse_subgoal

log = logging.getLogger(__name__)

__all__ = [
    "SUBGOAL_VERBS",
    "ChatBackend",
    "OpenAIChatBackend",
    "TransformersBackend",
    "VLMBackendError",
    "VLMComposer",
    "VLMSetupError",
    "encode_png",
    "png_data_url",
]

TRANSFORMERS_INSTALL_HINT = (
    "the in-process VLM backend needs Hugging Face transformers: "
    "`.venv/bin/pip install -c constraints.txt transformers` (or `pip install -e '.[vision]'`)"
)


class VLMBackendError(RuntimeError):
    """A backend could not produce an answer (unreachable, timeout, bad reply)."""


class VLMSetupError(RuntimeError):
    """A backend cannot be built (missing weights path or missing package)."""


# =========================================================================== images
def encode_png(image: np.ndarray) -> bytes:
    """Encode an (H, W, 3) uint8 RGB image as PNG with the standard library only."""
    arr = np.asarray(image)
    if arr.ndim != 3 or arr.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) RGB image, got shape {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    h, w = arr.shape[:2]
    # each scanline starts with filter byte 0 ("None")
    raw = np.concatenate([np.zeros((h, 1), np.uint8), arr.reshape(h, w * 3)], axis=1).tobytes()

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8-bit, colour type 2 (RGB)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")


def png_data_url(image: np.ndarray) -> str:
    return "data:image/png;base64," + base64.b64encode(encode_png(image)).decode("ascii")


# =========================================================================== backends
class ChatBackend(abc.ABC):
    """Answers a chat (backend-neutral messages, see vlm_prompt) with one text reply."""

    @abc.abstractmethod
    def complete(self, messages: list[dict], seed: int | None = None) -> str:
        """Return the assistant's text; raise :class:`VLMBackendError` on failure."""

    def describe(self) -> str:
        return type(self).__name__


class OpenAIChatBackend(ChatBackend):
    """POST ``/v1/chat/completions`` on an OpenAI-compatible server (vLLM, SGLang).

    ``url`` may be the server root (``http://host:8000``), its ``/v1`` prefix or the
    full completions URL. Decoding is greedy (temperature 0) with ``max_tokens``
    (RoboMME uses 128), and the episode seed is passed as ``seed``.
    """

    def __init__(
        self,
        url: str,
        model: str = "default",
        *,
        timeout_s: float = 60.0,
        max_tokens: int = 128,
        temperature: float = 0.0,
        api_key: str | None = None,
        extra_body: dict | None = None,
    ) -> None:
        url = url.rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"OpenAIChatBackend: url must start with http:// or https://, got {url!r}")
        if not url.endswith("/chat/completions"):
            url = (url if url.endswith("/v1") else url + "/v1") + "/chat/completions"
        self.url = url
        self.model = model
        self.timeout_s = float(timeout_s)
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self.api_key = api_key
        self.extra_body = dict(extra_body or {})

    def describe(self) -> str:
        return f"OpenAI-compatible endpoint {self.url} (model {self.model!r})"

    @staticmethod
    def to_openai_messages(messages: list[dict]) -> list[dict]:
        out = []
        for msg in messages:
            parts = []
            for part in msg["content"]:
                if part["type"] == "text":
                    parts.append({"type": "text", "text": part["text"]})
                elif part["type"] == "image":
                    parts.append({"type": "image_url", "image_url": {"url": png_data_url(part["image"])}})
                else:
                    raise ValueError(f"unknown message part type {part['type']!r}")
            out.append({"role": msg["role"], "content": parts})
        return out

    def build_request(self, messages: list[dict], seed: int | None = None) -> dict:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": self.to_openai_messages(messages),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        if seed is not None:
            body["seed"] = int(seed)
        body.update(self.extra_body)
        return body

    def complete(self, messages: list[dict], seed: int | None = None) -> str:
        data = json.dumps(self.build_request(messages, seed)).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", "replace") if exc.fp else ""
            raise VLMBackendError(f"{self.url}: HTTP {exc.code} {exc.reason}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise VLMBackendError(f"{self.url}: request failed ({reason!r}, timeout {self.timeout_s:g} s)") from exc
        try:
            reply = json.loads(payload)
            content = reply["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise VLMBackendError(f"{self.url}: unexpected reply {payload[:300]!r}") from exc
        if isinstance(content, list):  # some servers return content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        if not isinstance(content, str):
            raise VLMBackendError(f"{self.url}: reply content is {type(content).__name__}, not text")
        return content


class TransformersBackend(ChatBackend):
    """A local VLM run in-process with Hugging Face transformers (greedy decoding).

    ``model_path`` must be a local directory (config, weights, processor files); the
    model hub is never contacted. Fails at construction, naming what is missing.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        device: str = "cpu",
        max_new_tokens: int = 128,
        torch_dtype: str = "auto",
    ) -> None:
        path = Path(model_path).expanduser()
        if not path.is_dir():
            raise VLMSetupError(
                f"VLM weights directory {str(path)!r} does not exist: pass model_path= a local copy of the model "
                "(e.g. Qwen3-VL-4B-Instruct with its processor files), or use VLMComposer.from_url(...) with a "
                "vLLM/SGLang server"
            )
        try:
            import transformers
        except ImportError as exc:
            raise VLMSetupError(f"{TRANSFORMERS_INSTALL_HINT} (import failed: {exc})") from exc
        self.path = path
        self.device = device
        self.max_new_tokens = int(max_new_tokens)
        model_cls = getattr(transformers, "AutoModelForImageTextToText", None) or transformers.AutoModelForVision2Seq
        try:
            self.processor = transformers.AutoProcessor.from_pretrained(str(path), local_files_only=True)
            self.model = model_cls.from_pretrained(str(path), torch_dtype=torch_dtype, local_files_only=True)
        except Exception as exc:
            raise VLMSetupError(f"cannot load a VLM from {str(path)!r}: {exc}") from exc
        self.model.to(device)
        self.model.eval()

    def describe(self) -> str:
        return f"transformers model at {str(self.path)!r} on {self.device}"

    @staticmethod
    def to_hf_messages(messages: list[dict]) -> list[dict]:
        from PIL import Image

        out = []
        for msg in messages:
            parts = []
            for part in msg["content"]:
                if part["type"] == "image":
                    parts.append({"type": "image", "image": Image.fromarray(np.asarray(part["image"], np.uint8))})
                else:
                    parts.append(dict(part))
            out.append({"role": msg["role"], "content": parts})
        return out

    def complete(self, messages: list[dict], seed: int | None = None) -> str:
        import torch

        try:
            inputs = self.processor.apply_chat_template(
                self.to_hf_messages(messages),
                tokenize=True,
                add_generation_prompt=True,
                return_dict=True,
                return_tensors="pt",
            ).to(self.model.device)
            with torch.inference_mode():
                out = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
            new_tokens = out[:, inputs["input_ids"].shape[1]:]
            return self.processor.batch_decode(new_tokens, skip_special_tokens=False)[0]
        except Exception as exc:
            raise VLMBackendError(f"{self.describe()}: generation failed: {exc!r}") from exc


# =========================================================================== composer
# First words of RoboMME's subgoal templates (pick up, place, press, move, put, drop,
# hook, insert, close, ...) plus a few near synonyms a VLM may use.
SUBGOAL_VERBS = frozenset(
    "pick place put press move drop hook insert close push grasp lift swing remain stop release open "
    "stack rotate turn reach go".split()
)


class VLMComposer(Composer):
    """Asks a VLM for the next grounded subgoal every time :meth:`propose` is called.

    Args:
        backend: a :class:`ChatBackend`; or use :meth:`from_url` / :meth:`from_local`.
        max_demo_frames: demo video frames put in the prompt (RoboMME: 10; 0 = none).
        grid: the coordinate grid the model answers on (Qwen: 1000).
        image_size: pixels of the front image the points refer to (256).
        point_order: ``"yx"`` if the model writes (row, col), ``"xy"`` for (col, row).
        allowed_verbs: first words a subgoal may start with (RoboMME's verbs by default;
            None accepts any). The grammar is lenient about words, so this is what
            turns chatty prose ("I think the robot should...") into a bad answer.
        max_words: longer answers are rejected as prose.

    Attributes:
        history: the subgoals this composer proposed this episode (consecutive
            repeats kept once); shown back to the model with points masked.
        bad_answers: one dict per failed query: ``step``, ``kind`` (``backend`` or
            ``parse``), ``answer`` (raw text or None) and ``error``.
        calls: one dict per query: ``step``, ``latency_ms``, ``answer``, ``subgoal``.
    """

    def __init__(
        self,
        backend: ChatBackend,
        *,
        max_demo_frames: int = 10,
        grid: float = 1000.0,
        image_size: int = 256,
        point_order: str = "yx",
        system_prompt: str = SYSTEM_PROMPT,
        placeholder: str = POINT_PLACEHOLDER,
        allowed_verbs: Iterable[str] | None = SUBGOAL_VERBS,
        max_words: int = 40,
    ) -> None:
        if not isinstance(backend, ChatBackend):
            raise TypeError(f"backend must be a ChatBackend, got {type(backend).__name__}")
        if point_order not in ("yx", "xy"):
            raise ValueError(f"point_order must be 'yx' or 'xy', got {point_order!r}")
        self.backend = backend
        self.max_demo_frames = int(max_demo_frames)
        self.grid = float(grid)
        self.image_size = int(image_size)
        self.point_order = point_order
        self.system_prompt = system_prompt
        self.placeholder = placeholder
        self.allowed_verbs = None if allowed_verbs is None else frozenset(v.lower() for v in allowed_verbs)
        self.max_words = int(max_words)
        self.goal = ""
        self.seed: int | None = None
        self.demo_frames: list[np.ndarray] = []
        self.history: list[str] = []
        self.bad_answers: list[dict] = []
        self.calls: list[dict] = []

    @classmethod
    def from_url(cls, url: str, model: str = "default", *, timeout_s: float = 60.0, api_key: str | None = None,
                 **kwargs: Any) -> "VLMComposer":
        """Composer over an OpenAI-compatible chat endpoint (vLLM, SGLang)."""
        return cls(OpenAIChatBackend(url, model, timeout_s=timeout_s, api_key=api_key), **kwargs)

    @classmethod
    def from_local(cls, model_path: str | Path, *, device: str = "cpu", **kwargs: Any) -> "VLMComposer":
        """Composer over a local transformers model directory."""
        return cls(TransformersBackend(model_path, device=device), **kwargs)

    def __repr__(self) -> str:
        return f"VLMComposer({self.backend.describe()})"

    # ------------------------------------------------------------------ Composer API
    def reset(self, goal: str, seed: int, demo_frames: list[np.ndarray]) -> None:
        self.goal = str(goal)
        self.seed = int(seed)
        self.demo_frames = sample_frames(demo_frames or [], self.max_demo_frames)
        self.history = []
        self.bad_answers = []
        self.calls = []

    def build_messages(self, obs: dict) -> list[dict]:
        return build_messages(
            self.goal or str(obs.get("goal", "")),
            self.history,
            obs["front_rgb"],
            self.demo_frames,
            system_prompt=self.system_prompt,
            placeholder=self.placeholder,
        )

    def propose(self, obs: dict, info: dict) -> str | None:
        step = obs.get("step")
        t0 = time.monotonic()
        answer: str | None = None
        try:
            answer = self.backend.complete(self.build_messages(obs), seed=self.seed)
        except Exception as exc:  # a composer must never crash the episode
            return self._bad(step, "backend", None, exc, t0)
        try:
            subgoal = self._parse(answer)
        except Exception as exc:
            return self._bad(step, "parse", answer, exc, t0)
        if not self.history or self.history[-1] != subgoal:
            self.history.append(subgoal)
        self.calls.append({"step": step, "latency_ms": (time.monotonic() - t0) * 1000.0, "answer": answer,
                           "subgoal": subgoal})
        return subgoal

    # ------------------------------------------------------------------ helpers
    def _parse(self, answer: str) -> str:
        text = normalize_answer(answer, grid=self.grid, image_size=self.image_size, order=self.point_order)
        words = text.split()
        if len(words) > self.max_words:
            raise AnswerFormatError(f"answer has {len(words)} words, more than a subgoal's {self.max_words}")
        if self.allowed_verbs is not None and words[0].lower() not in self.allowed_verbs:
            raise AnswerFormatError(
                f"answer starts with {words[0]!r}, not a subgoal verb ({', '.join(sorted(self.allowed_verbs))})"
            )
        return format_subgoal(parse_subgoal(text))  # SubgoalParseError names the problem

    def _bad(self, step: Any, kind: str, answer: str | None, exc: BaseException, t0: float) -> None:
        error = f"{type(exc).__name__}: {exc}"
        self.bad_answers.append({"step": step, "kind": kind, "answer": answer, "error": error})
        self.calls.append({"step": step, "latency_ms": (time.monotonic() - t0) * 1000.0, "answer": answer,
                           "subgoal": None})
        log.warning("VLM composer (%s) step %s: %s answer rejected: %s; answer=%r", self.backend.describe(), step,
                    kind, error, answer)
        return None

