"""Render only what is consumed on the official envs (bridged at run time, the benchmark's code untouched).

The benchmark builds its envs with ``obs_mode="rgb+depth+segmentation"``, so every physics step
renders both cameras with three textures each, although this harness reads the front RGB only at
the render schedule's strides (and the hand camera only for a policy that reads it). On the CPU that
is most of an official episode's time (see ``docs/official_envs.md`` for the measured ratio).

:class:`RenderGate` replaces ``_get_obs_sensor_data`` on one official env *instance* (ManiSkill 3's
per-step sensor read): at the steps a consumer asked for (the env clock a multiple of ``every``, a
forced frame, the first step of a new subgoal) it captures the front camera and, only when ``wrist``
is set, the hand camera; at every other step it returns the last captured data unchanged. Depth and
segmentation are downloaded only where a consumer reads them: at a new subgoal's first frame (the
benchmark fills the oracle's subgoal points from its segmentation) and a forced frame; a stride
frame downloads RGB alone and keeps the last depth and segmentation. Physics never depends on rendering, so the
same actions give the same states (``tests/test_official_render_gate.py`` compares the frames a
consumer reads, and the outcome, with and without the gate).

Frames of skipped steps in the benchmark's observation lists repeat the last rendered frame; the
official env wrapper keeps only the frames at its strides and takes the view after each option from
:meth:`front_at` (the frame rendered inside that step, or one rendered now when it ended between
strides).
"""

from __future__ import annotations

from typing import Any, Callable

FRONT, HAND = "base_camera", "hand_camera"


class RenderGate:
    """Gates sensor rendering of one official ManiSkill env instance (module docstring)."""

    def __init__(self, unwrapped, every: "int | Callable[[], int]" = 1, wrist: bool = False):
        self.u = unwrapped
        self._every = every if callable(every) else int(every)
        self.wrist = bool(wrist)
        self.force = False
        self.renders = 0
        self.skipped = 0
        self._cache: dict[str, Any] | None = None
        self._cache_clock: int | None = None
        self._key = None
        self._orig = unwrapped._get_obs_sensor_data
        unwrapped._get_obs_sensor_data = self._sensor_data

    @property
    def every(self) -> int:
        """The stride. Given as a function (the conditioning video's stride, which depends on the
        goal), it is asked at the first frame the gate sees, when the env has built its scene and so
        its goal, before the demonstration plays; its answer is then kept."""
        if callable(self._every):
            self._every = int(self._every())
        return self._every

    @every.setter
    def every(self, value: int) -> None:
        self._every = int(value)

    def uninstall(self) -> None:
        self.u._get_obs_sensor_data = self._orig

    @property
    def clock(self) -> int:
        e = self.u.elapsed_steps
        return int(e.reshape(-1)[0]) if hasattr(e, "reshape") else int(e)

    def _subgoal_key(self):
        u = self.u
        return getattr(u, "current_task_index", None), getattr(u, "current_subgoal_segment", None)

    def wants(self) -> bool:
        """A consumer's stride, a forced frame, or a new subgoal: the benchmark fills the oracle's
        subgoal points from the first frame of each subgoal (then latches them), so that frame is
        always real and the oracle's texts are the same as without the gate."""
        return self.wants_all() or (self.every > 0 and self.clock % self.every == 0)

    def wants_all(self) -> bool:
        """Every texture (depth, segmentation too): the first frame, a forced one, or a new subgoal's
        first frame, the only one the benchmark reads segmentation from (to ground the oracle's
        subgoal text). A stride frame is read by our consumers for its RGB alone. The subgoals of the
        demonstration the env plays inside ``reset`` are grounded for the benchmark's own recordings
        only (nothing here reads them: the video is RGB, the oracle speaks after the demonstration),
        so their first frames are not rendered for it."""
        if self.force or self._cache is None:
            return True
        return self._subgoal_key() != self._key and not self.in_demonstration

    @property
    def in_demonstration(self) -> bool:
        """The env is playing its conditioning demonstration (the benchmark's own flag)."""
        return bool(getattr(self.u, "current_task_demonstration", False))

    def _sensor_data(self, apply_texture_transforms: bool = True) -> dict:
        if not self.wants():
            self.skipped += 1
            return self._cache
        return self._render(apply_texture_transforms, rgb_only=not self.wants_all())

    def _render(self, apply_texture_transforms: bool = True, rgb_only: bool = False) -> dict:
        """Capture the front camera (and the hand camera when asked). ``rgb_only``: download the RGB
        texture alone and keep the last depth / segmentation (stale, as on a skipped step; on the
        CPU renderer each texture read costs about as much as the render)."""
        u = self.u
        for obj in u._hidden_objects:
            obj.hide_visual()
        u.scene.update_render(update_sensors=True, update_human_render_cameras=False)
        visual = u.obs_mode_struct.visual
        names = [FRONT] + ([HAND] if self.wrist or self._cache is None else [])
        data = dict(self._cache or {})
        for name in names:
            sensor = u.scene.sensors.get(name)
            if sensor is None:
                continue
            sensor.capture()
            if rgb_only and name in data:
                data[name] = {**data[name], **sensor.get_obs(rgb=True, depth=False, position=False, segmentation=False,
                                                             normal=False, albedo=False,
                                                             apply_texture_transforms=apply_texture_transforms)}
                continue
            data[name] = sensor.get_obs(rgb=visual.rgb, depth=visual.depth, position=visual.position,
                                        segmentation=visual.segmentation, normal=visual.normal, albedo=visual.albedo,
                                        apply_texture_transforms=apply_texture_transforms)
        self._cache = data
        self._cache_clock = self.clock
        self._key = self._subgoal_key()
        self.renders += 1
        return data

    def front_at(self, clock: int):
        """The front RGB of the step at ``clock``: the frame rendered inside that step when the gate
        rendered it (exactly the benchmark's observation), else rendered now. The two differ only
        where an env moves objects after its observation (StopCube moves its cube after
        ``super().step``): the frame rendered now shows that later scene."""
        if self._cache is not None and self._cache_clock == int(clock):
            return _rgb(self._cache[FRONT]["rgb"])
        return self.fresh_front()

    def fresh_front(self):
        """The front camera's RGB now (``(H, W, 3)`` uint8), rendered for this call (every texture only
        where :meth:`wants_all` says the benchmark may read them)."""
        data = self._render(rgb_only=not self.wants_all())
        rgb = data[FRONT]["rgb"]
        rgb = rgb.cpu().numpy() if hasattr(rgb, "cpu") else rgb
        return rgb[0] if rgb.ndim == 4 else rgb

    def fresh_wrist(self):
        """The hand camera's RGB now, rendered for this call (None without a hand camera)."""
        was, self.wrist = self.wrist, True
        try:
            data = self._render()
        finally:
            self.wrist = was
        if HAND not in data:
            return None
        rgb = data[HAND]["rgb"]
        rgb = rgb.cpu().numpy() if hasattr(rgb, "cpu") else rgb
        return rgb[0] if rgb.ndim == 4 else rgb


def _rgb(rgb):
    """One camera's RGB as ``(H, W, 3)`` (the sensor gives a batch of one, maybe a tensor)."""
    rgb = rgb.cpu().numpy() if hasattr(rgb, "cpu") else rgb
    return rgb[0] if rgb.ndim == 4 else rgb
