"""Which camera frames an episode renders, and for whom: the render schedule.

On these machines a 256x256 frame from SAPIEN's software Vulkan renderer costs about 30 physics
steps (``benchmarks/loop.md``), so an episode renders only what one of its consumers reads:

==========================  ==========================================================================
consumer                    frames
==========================  ==========================================================================
memory tools                the front camera every ``s`` env steps, ``s`` the finest stride any active
                            tool needs (its ``render_stride``), never coarser than the run's
                            ``--render-stride``; tools that read only the first frames (the scene
                            layout) add an early window instead of a finer stride for the whole episode
memory / VLM composer       the current view at each composer query (every ``horizon`` steps): the
                            memory re-grounds recalled entities in it, the VLM composer looks at it
image policies              front and wrist views at each query (openpi π0.5, LeRobot); the wrist
                            camera is rendered for nobody else
recorder (``--video``)      the front camera every ``--render-stride`` steps
conditioning video          the demonstration's frames only when someone reads them (memory with
                            ``use_video``, a VLM composer, the recorder); otherwise the demonstration's
                            physics runs without a single frame
==========================  ==========================================================================

The oracle and history-blind composers read the simulator's ground truth, not pixels, so the
oracle and no-memory conditions render nothing periodic at all, whatever ``--render-stride`` says.

Each tool declares its need on itself, ``Tool.render`` (:class:`memory.contract.render_need.RenderNeed`:
live stride, an early window, whether it reads the video and at which coarsest video stride its
answers hold). The video is rendered at the finest stride among the readers the episode's goal
enables (``MemoryLayer.tools_for``), so one tool that needs every frame gets every frame. A memory
without tools (``memory/contract/interface.py``) declares the same four fields as ``render_stride``,
``render_until``, ``render_video`` and ``render_video_stride`` attributes.

>>> sched = render_schedule(cfg, memory=layer)          # doctest: +SKIP
>>> SubgoalExecution(low, policy, horizon=cfg.env.horizon, **sched.wrapper_kwargs())   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from memory.contract.render_need import DEFAULT_RENDER, RenderNeed
from memory.tools.base import Tool

__all__ = [
    "DEFAULT_RENDER",
    "NO_VIDEO",
    "RenderNeed",
    "RenderSchedule",
    "render_schedule",
    "tool_need",
]

NO_VIDEO = 10**6
"""``RoboMMEEnv.video_stride`` that records no frame of the demonstration (its physics is unchanged)."""


_MISSING = object()


def tool_need(tool: Any) -> RenderNeed:
    """The render need of ``tool``: a :class:`~memory.tools.base.Tool` declares it (``Tool.render``); a
    memory without tools (``memory/contract/interface.py``) may declare ``render_stride`` / ``render_until`` /
    ``render_video`` / ``render_video_stride`` attributes, the rest from :data:`DEFAULT_RENDER`."""
    if isinstance(tool, Tool):
        return tool.render
    declared = {field_name: getattr(tool, attr) for field_name, attr in _DECLARED.items() if getattr(tool, attr, _MISSING) is not _MISSING}
    if "video" in declared:
        declared["video"] = bool(declared["video"])
    return replace(DEFAULT_RENDER, **declared)


_DECLARED = {"stride": "render_stride", "until": "render_until", "video": "render_video", "video_stride": "render_video_stride"}


@dataclass(frozen=True)
class RenderSchedule:
    """The frames one episode renders; :meth:`wrapper_kwargs` feeds it to ``SubgoalExecution``.

    Attributes:
        front_stride: front frame whenever the absolute clock is a multiple of this (0: never).
        early_stride, early_until: also one every ``early_stride`` live steps up to ``early_until``.
        query: the current view at every composer query.
        policy_front, policy_wrist: the views an image policy reads at every query.
        video: render the conditioning video's frames.
        video_every: ...one every this many clock ticks (the finest stride a reader declares).
        reasons: who asked for what, for logs and the benchmark.
    """

    front_stride: int = 0
    early_stride: int = 0
    early_until: int = 0
    query: bool = False
    policy_front: bool = False
    policy_wrist: bool = False
    video: bool = False
    video_every: int = 1
    video_readers: tuple[tuple[str, int], ...] = ()
    video_floor: int | None = None
    goal_tools: Callable[[str], Iterable[str]] | None = field(default=None, compare=False, repr=False)
    reasons: tuple[str, ...] = field(default=(), compare=False)

    def video_stride_for(self, goal: str) -> int:
        """The video stride for an episode whose goal is ``goal``: the finest stride among the readers
        this goal enables (``goal_tools``: the names of the tools the memory switches on for it) and
        the non-memory consumers (``video_floor``); no frame at all when none of them reads the video."""
        if self.goal_tools is None:
            return self.video_stride
        enabled = set(self.goal_tools(goal))
        strides = [k for name, k in self.video_readers if name in enabled]
        if self.video_floor is not None:
            strides.append(self.video_floor)
        return min(strides) if strides else NO_VIDEO

    @property
    def env_video_stride(self) -> int | Callable[[str], int]:
        """What to give ``RoboMMEEnv.video_stride``: :meth:`video_stride_for`, asked by the env once the
        goal is sampled, when the memory can say which tools a goal enables; else the fixed stride."""
        return self.video_stride_for if (self.goal_tools is not None and self.video) else self.video_stride

    @property
    def video_stride(self) -> int:
        """``RoboMMEEnv.video_stride`` for this schedule: every ``video_every``-th frame, or none."""
        return self.video_every if self.video else NO_VIDEO

    def wrapper_kwargs(self) -> dict[str, Any]:
        return dict(
            frame_stride=self.front_stride,
            early_stride=self.early_stride,
            early_until=self.early_until,
            render_query=self.query,
            policy_needs_images=self.policy_front,
            policy_needs_wrist=self.policy_wrist,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "front_stride": self.front_stride,
            "early_stride": self.early_stride,
            "early_until": self.early_until,
            "query": self.query,
            "policy_front": self.policy_front,
            "policy_wrist": self.policy_wrist,
            "video": self.video,
            "video_every": self.video_every,
            "video_readers": [list(r) for r in self.video_readers],
            "video_floor": self.video_floor,
            "per_goal_video": self.goal_tools is not None,
            "reasons": list(self.reasons),
        }


def _active_tools(memory: Any) -> tuple[Any, ...]:
    if memory is None:
        return ()
    config = getattr(memory, "config", None)
    if config is not None and not getattr(config, "enabled", True):
        return ()  # a disabled layer runs no tool
    tools = getattr(memory, "tools", None)
    # a memory without tools (memory/contract/interface.py) declares its render need itself, like one tool
    return (memory,) if tools is None else tuple(tools)


def render_schedule(
    cfg: Any,
    *,
    memory: Any = None,
    composer: str | None = None,
    policy_images: bool = False,
    policy_wrist: bool | None = None,
    record: bool = False,
    tools: Iterable[Any] | None = None,
) -> RenderSchedule:
    """The render schedule of one episode.

    Args:
        cfg: the experiment config (``render.render_stride`` is the coarsest stride any periodic
            consumer gets; ``composer.kind`` is used when ``composer`` is not given).
        memory: the episode's :class:`memory.layer.MemoryLayer` (``None``: no memory).
        composer: the composer this episode uses (``oracle``, ``history-blind``, ``vlm``).
        policy_images: the low-level policy reads the front image.
        policy_wrist: it reads the wrist image too (default: same as ``policy_images``).
        record: the episode is recorded to mp4.
        tools: the active tools, instead of ``memory.tools``.
    """
    cap = int(cfg.render.render_stride)
    if cap < 1:
        raise ValueError(f"render_stride must be >= 1, got {cap!r}")
    composer = composer if composer is not None else cfg.composer.kind
    active = tuple(tools) if tools is not None else _active_tools(memory)
    use_video = bool(getattr(getattr(memory, "config", None), "use_video", True))
    reasons: list[str] = []

    periodic: list[int] = []
    early: list[tuple[int, int]] = []
    video_strides: list[int] = []
    readers: list[tuple[str, int]] = []
    floor: int | None = None
    for tool in active:
        need = tool_need(tool)
        name = getattr(tool, "name", type(tool).__name__)
        if need.stride is not None:
            if need.until is None:
                periodic.append(need.stride)
                reasons.append(f"{name}: front every {need.stride} steps")
            else:
                early.append((need.stride, need.until))
                reasons.append(f"{name}: front every {need.stride} steps for the first {need.until} live steps")
        if need.video and use_video:
            video_strides.append(need.video_stride)
            readers.append((name, need.video_stride))
            reasons.append(f"{name}: conditioning video every {need.video_stride} frames")
    if record:
        periodic.append(cap)
        video_strides.append(1)
        floor = 1
        reasons.append(f"recorder: front every {cap} steps and the conditioning video")
    front = min([cap, *periodic]) if periodic else 0

    early_stride = early_until = 0
    if early:
        stride = min(s for s, _ in early)
        if front == 0 or front > stride:  # the periodic frames do not already cover the early window
            early_stride, early_until = min(stride, cap), max(u for _, u in early)

    query = bool(active) or composer == "vlm"
    if active:
        reasons.append("memory: current view at each query (re-grounding)")
    if composer == "vlm":
        video_strides.append(1)
        floor = 1
        reasons.append("vlm composer: current view at each query and the conditioning video")
    wrist = policy_images if policy_wrist is None else bool(policy_wrist)
    if policy_images:
        reasons.append("policy: front view at each query" + (" and wrist view" if wrist else ""))
    return RenderSchedule(
        front_stride=front,
        early_stride=early_stride,
        early_until=early_until,
        query=query,
        policy_front=bool(policy_images),
        policy_wrist=bool(policy_images and wrist),
        video=bool(video_strides),
        video_every=min(video_strides, default=1),
        video_readers=tuple(readers),
        video_floor=floor,
        goal_tools=_goal_tools(memory) if tools is None and active else None,
        reasons=tuple(reasons),
    )


def _goal_tools(memory: Any) -> Callable[[str], Iterable[str]] | None:
    """The names of the tools ``memory`` switches on for a goal, when it can say so before the episode
    (``MemoryLayer.tools_for``); ``None`` for a memory that cannot (then every reader counts)."""
    tools_for = getattr(memory, "tools_for", None)
    if not callable(tools_for):
        return None
    return lambda goal: [t.name for t in tools_for(goal)]
