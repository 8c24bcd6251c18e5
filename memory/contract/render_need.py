"""What a memory part needs rendered: declared by the part, read by the render schedule.

A frame of software Vulkan costs as much as dozens of physics steps, so the harness renders only
what some consumer reads (``experiments/loop/render_schedule.py``). Each tool says what it reads here,
on the tool itself (``Tool.render``), so adding a tool never means editing a table elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_RENDER", "RenderNeed"]


@dataclass(frozen=True)
class RenderNeed:
    """Frames one tool reads.

    Attributes:
        stride: the coarsest stride (env steps) of live front frames at which the tool still works;
            ``None``: no periodic live frames (the query views at each decision only).
        until: the need holds only for the first ``until`` live steps (``None``: all episode long).
        video: the tool reads the conditioning video's frames.
        video_stride: the coarsest video stride (clock ticks between rendered demonstration frames)
            at which the tool's answers are unchanged, measured by ``benchmarks/bench_video_stride.py``.
    """

    stride: int | None = 4
    until: int | None = None
    video: bool = True
    video_stride: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.video_stride, bool) or not isinstance(self.video_stride, int) or self.video_stride < 1:
            raise ValueError(f"render need video_stride must be an int >= 1, got {self.video_stride!r}")
        for name, v in (("stride", self.stride), ("until", self.until)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ValueError(f"render need {name} must be None or an int >= 1, got {v!r}")


DEFAULT_RENDER = RenderNeed(stride=4)
"""What a part that declares nothing gets: a front frame every 4 env steps and the whole video."""
