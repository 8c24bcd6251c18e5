"""The ManiSkill 3 base class of all 16 tasks.

What a task adds on top: ``sample_layout`` (every random choice of the episode, drawn from the
episode seed), ``build_scene`` (create the actors for that layout), ``place_scene`` (pose them),
``build_subgoals`` (the ordered subgoal list) and optionally ``animate`` (scripted scene events
driven by the absolute step clock) and ``task_failure``.

Rendering is on demand: the env runs with ``obs_mode="none"`` so a step costs physics only, and
``render_front`` / ``render_wrist`` capture one camera when a consumer asks for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable, Hashable
from typing import Any

import gymnasium as gym
import numpy as np
import sapien
import torch
from mani_skill.envs.sapien_env import BaseEnv
from mani_skill.sensors.camera import CameraConfig
from mani_skill.utils import sapien_utils
from mani_skill.utils.scene_builder.table import TableSceneBuilder

from envs.core.checker import SequentialChecker, SubgoalEntry
from envs.core.hand_camera import HAND_CAMERA, with_hand_camera
from envs.core.render_lod import DEFAULT_RENDER_LOD, check_render_lod, lod_agent_class
from envs.ood import OodTier, ood_tier, parse_difficulty

REST_QPOS = np.array([0.0, 0.0, 0.0, -np.pi / 2, 0.0, np.pi / 2, np.pi / 4])
FRONT_EYE = [0.3, 0.0, 0.4]
FRONT_TARGET = [0.0, 0.0, -0.2]
IMAGE_SIZE = 256


@dataclass(frozen=True)
class HistorySlot:
    """A decision only the past can settle: ``name`` (e.g. "which container") and the options."""

    name: str
    alternatives: tuple[str, ...]
    choice_of: Callable[[Any], Hashable] | None = None
    """What the decision is about, for the object a subgoal acts on: two subgoals whose objects map
    to the same choice are the same decision for the audit ("which colour next": any cube of that
    colour; "which highlighted cube": any one not picked yet). ``None``: the object itself."""
    accepts: Callable[[tuple[str, Hashable] | None], bool] | None = None
    """Which decisions are right, judged on the world rather than on the oracle's next subgoal: given
    what a subgoal does (its option and ``choice_of`` its object), whether it is a right next step.
    For a goal that sets no order (any colour still owed), the oracle's fixed order falls out of step
    once the memory picked another right colour, so its next subgoal is no longer the measure.
    ``None``: right means doing what the oracle's subgoal does."""


class RoboMMETask(BaseEnv):
    SUPPORTED_ROBOTS = ["panda_wristcam", "panda_stick"]
    TASK: str = ""
    ROBOT: str = "panda_wristcam"
    HAS_VIDEO: bool = False
    ood: OodTier | None = None
    """The tier's sampler options on an ood episode, else None; a class default too, so a sampler
    called on a task object that was never reset (a layout-only check) samples in distribution."""

    def __init__(self, *args, robot_uids: str | None = None, render_lod: str | None = None, **kwargs):
        """``render_lod``: ``"simplified"`` (decimated robot visual meshes, the default when rendering
        on the CPU) or ``"full"`` (the packaged meshes, the default on a GPU); see envs/core/render_lod.py."""
        kwargs.setdefault("obs_mode", "none")
        kwargs.setdefault("control_mode", "pd_joint_pos")
        kwargs.setdefault("sim_backend", "cpu")
        kwargs.setdefault("render_backend", "cpu")
        kwargs.setdefault("reward_mode", "none")
        self.layout: Any = None
        self.difficulty = "easy"
        self.ood: OodTier | None = None  # the tier's sampler options on an ood episode, else None
        self.clock = 0
        self.checker: SequentialChecker | None = None
        self._latched: dict[int, str] = {}
        if render_lod is None:
            render_lod = DEFAULT_RENDER_LOD if str(kwargs["render_backend"]).lower() in ("cpu", "sapien_cpu") else "full"
        self.render_lod = check_render_lod(render_lod)
        super().__init__(*args, robot_uids=robot_uids or self.ROBOT, **kwargs)

    # ------------------------------------------------------------------ task hooks
    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> Any:
        raise NotImplementedError

    def build_scene(self) -> None:
        raise NotImplementedError

    def ood_option(self, name: str, default=None):
        """The value of sampler option ``name`` this episode's ood tier sets, else ``default``
        (every in-distribution episode: its draws stay exactly as they were)."""
        return default if self.ood is None else self.ood.get(name, default)

    def place_scene(self) -> None:
        raise NotImplementedError

    def build_subgoals(self) -> list[SubgoalEntry]:
        raise NotImplementedError

    def animate(self, clock: int) -> None:
        """Scripted scene events at absolute step ``clock`` (after the physics of that step)."""

    def task_failure(self) -> bool:
        return False

    def goal_texts(self) -> list[str]:
        raise NotImplementedError

    def goal_values(self) -> dict[str, object]:
        """The episode's values a reworded goal fills in (``envs/tasks/goal_rewordings.json``, see
        :mod:`envs.core.rewording`): colours, counts, ordinals, and the keys that pick a variant.
        Empty for a goal that names none."""
        return {}

    def goal_text(self, style: str = "template", seed: int = 0) -> str:
        """The goal this episode is given: the template (``goal_texts()[0]``) or one rewording of it
        drawn with ``seed`` (the episode's goal stream)."""
        if style == "template":
            return self.goal_texts()[0]
        from envs.core.rewording import GOAL_STYLES, STYLE_POOLS, draw_rewording

        if style in STYLE_POOLS:
            return draw_rewording(self.TASK, self.goal_values(), seed, pool=STYLE_POOLS[style])
        raise ValueError(f"unknown goal style {style!r} ({', '.join(GOAL_STYLES)})")

    def history_slot(self) -> "HistorySlot | None":
        """The history-dependent decision of the current subgoal, if any.

        Returns the slot's name and every grounded subgoal text a memoryless predictor could
        equally propose from the current view (the correct one included). The HistoryBlind
        composer draws among them; tasks document their slots in the README's slot table.
        """
        return None

    def decision_judge(self) -> "Callable[[tuple[str, Hashable] | None], bool] | None":
        """Which decisions taken now are right, judged on the world, where the oracle's next subgoal
        is not the measure (see ``HistorySlot.accepts``); asked by the audit at every decision
        outside a history slot (inside one, the slot's ``accepts`` is the measure; a memory may
        rewrite a subgoal before the slot opens). None: right means doing what the oracle's subgoal does."""
        return None

    def truth(self) -> dict[str, Any]:
        """Privileged ground truth for audits and the oracle arm; never for the memory."""
        return {}

    def candidates(self, option: str) -> list[tuple[str, Any]]:
        """Objects the executor may act on for ``option``: (label, actor) pairs."""
        return []

    # verb patterns of subgoal text -> executor option, first match wins (tasks extend this)
    OPTION_PATTERNS: tuple[tuple[str, str], ...] = (
        (r"^press\b", "press"),
        (r"^pick up\b", "pick"),
        (r"^(place|put|drop)\b.*\b(onto|on|into)\b", "place"),
        (r"^move\b.*\btop of\b", "move_over"),
        (r"^(wait|remain|stay)\b", "wait"),
    )

    def motion(self, option: str, target: Any, executor, params: dict | None = None):
        """The scripted motion (a generator of actions) that achieves ``option`` on ``target``."""
        from envs.core.options import common_motion

        return common_motion(self, option, target, executor, params or {})

    # ------------------------------------------------------------------ ManiSkill plumbing
    @property
    def _default_sensor_configs(self):
        pose = sapien_utils.look_at(eye=FRONT_EYE, target=FRONT_TARGET)
        return [CameraConfig("base_camera", pose=pose, width=IMAGE_SIZE, height=IMAGE_SIZE, fov=np.pi / 2, near=0.01, far=100)]

    @property
    def _default_human_render_camera_configs(self):
        pose = sapien_utils.look_at(eye=FRONT_EYE, target=FRONT_TARGET)
        return CameraConfig("render_camera", pose=pose, width=512, height=512, fov=np.pi / 2, near=0.01, far=100)

    def _load_agent(self, options: dict):
        uids = self.robot_uids
        if isinstance(uids, str):
            from mani_skill.agents.registration import REGISTERED_AGENTS

            # the benchmark's 256x256 hand camera, on the stick robot too (envs/core/hand_camera.py)
            agent_cls = with_hand_camera(REGISTERED_AGENTS[uids].agent_cls)
            # the same agent (uid, controllers, sensors, URDF text, collision meshes) loaded from the
            # cached copy of its asset directory whose visual meshes are decimated
            self.robot_uids = lod_agent_class(agent_cls, self.render_lod)
        try:
            super()._load_agent(options, sapien.Pose(p=[-0.615, 0, 0]))
        finally:
            self.robot_uids = uids

    def _load_scene(self, options: dict):
        self.table_scene = TableSceneBuilder(env=self, robot_init_qpos_noise=0.0)
        self.table_scene.build()
        self.build_scene()

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict):
        self.table_scene.initialize(env_idx)
        qpos = self.agent.robot.get_qpos()[0].cpu().numpy().copy()
        qpos[:7] = REST_QPOS
        if qpos.shape[0] > 7:
            qpos[7:] = 0.04
        self.agent.reset(qpos)
        self.agent.robot.set_pose(sapien.Pose(p=[-0.615, 0, 0]))
        self.clock = 0
        self._latched = {}
        self.place_scene()
        self.checker = SequentialChecker(self.build_subgoals())

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Reset to the episode named by ``seed`` (and ``options["episode"]``, an EpisodeSpec).

        The scene is rebuilt on every reset because object counts depend on the seed.
        """
        options = dict(options or {})
        spec = options.get("episode")
        if seed is None and spec is not None:
            seed = spec.env_seed
        if isinstance(seed, (list, tuple)):  # ManiSkill's constructor resets with [2022]
            seed = int(seed[0])
        if seed is None:
            # gymnasium's convention: an unseeded reset continues the env's generator (seeded by
            # the last seeded reset, else from fresh entropy); the harness always names the episode
            seed = int(self.np_random.integers(2**31 - 1))
        else:
            # gymnasium's own generator follows the episode seed (ManiSkill's BaseEnv.reset keeps its
            # own generators and never seeds it); no sampler draws from it
            gym.Env.reset(self, seed=seed)
        difficulty = options.get("difficulty") or (spec.difficulty if spec is not None else ("easy", "medium", "hard")[seed % 3])
        # an ood tier samples as hard with its tier's sampler options (envs/ood.py)
        difficulty, tier = parse_difficulty(difficulty)
        if difficulty not in ("easy", "medium", "hard"):
            raise ValueError(f"unknown difficulty {difficulty!r} (easy, medium, hard, ood<tier>)")
        self.difficulty = difficulty
        self.ood = ood_tier(self.TASK, tier) if tier else None
        self.layout = self.sample_layout(np.random.default_rng(seed), difficulty)
        options["reconfigure"] = True
        options.pop("episode", None)
        options.pop("difficulty", None)
        return super().reset(seed=seed, options=options)

    def _after_control_step(self):
        super()._after_control_step()
        self.clock += 1
        self.animate(self.clock)
        if self.checker is not None:
            self.checker.update(self.clock, self.task_failure)

    def evaluate(self):
        done = self.checker is not None and self.checker.success
        failed = self.checker is not None and self.checker.failed
        return {"success": torch.tensor([done]), "fail": torch.tensor([failed])}

    # ------------------------------------------------------------------ state helpers
    @staticmethod
    def pos(actor) -> np.ndarray:
        return actor.pose.p[0].cpu().numpy().astype(float)

    def pos_of(self, obj) -> np.ndarray:
        """World position of an actor or (for articulations such as the button) its root."""
        if hasattr(obj, "links_map"):
            return obj.pose.p[0].cpu().numpy().astype(float)
        return self.pos(obj)

    def tcp(self) -> np.ndarray:
        return self.agent.tcp.pose.p[0].cpu().numpy().astype(float)

    def qpos(self) -> np.ndarray:
        return self.agent.robot.get_qpos()[0].cpu().numpy().astype(np.float32)

    def is_grasping(self, actor) -> bool:
        if not hasattr(self.agent, "is_grasping"):
            return False
        return bool(self.agent.is_grasping(actor)[0])

    def lifted(self, actor, z: float = 0.05) -> bool:
        return self.pos(actor)[2] > z

    @staticmethod
    def set_xyz(actor, xyz, q=None) -> None:
        pose = sapien.Pose(p=list(map(float, xyz)), q=list(q) if q is not None else [1, 0, 0, 0])
        actor.set_pose(pose)
        if hasattr(actor, "set_linear_velocity") and not getattr(actor, "_kinematic", False):
            try:
                actor.set_linear_velocity(torch.zeros(3))
                actor.set_angular_velocity(torch.zeros(3))
            except Exception:  # kinematic actors have no velocity to clear
                pass

    # ------------------------------------------------------------------ cameras
    def _capture(self, name: str, segmentation: bool) -> dict[str, np.ndarray]:
        self.scene.update_render(update_sensors=True, update_human_render_cameras=False)
        cam = self._sensors[name]
        cam.capture()
        data = cam.get_obs(rgb=True, depth=False, position=False, segmentation=segmentation)
        out = {"rgb": data["rgb"][0].cpu().numpy().astype(np.uint8)}
        if segmentation:
            out["segmentation"] = data["segmentation"][0, ..., 0].cpu().numpy().astype(np.int32)
        return out

    def render_front(self, segmentation: bool = False) -> dict[str, np.ndarray]:
        return self._capture("base_camera", segmentation)

    def render_wrist(self) -> np.ndarray | None:
        """The hand camera's RGB frame (256x256 on both robots), or None for a robot without one."""
        if HAND_CAMERA not in self._sensors:
            return None
        return self._capture(HAND_CAMERA, False)["rgb"]

    def project(self, xyz: np.ndarray) -> tuple[float, float]:
        """World point -> (row, col) pixel in the front image (no rendering needed)."""
        params = self._sensors["base_camera"].get_params()
        ext = params["extrinsic_cv"][0].cpu().numpy()
        intr = params["intrinsic_cv"][0].cpu().numpy()
        cam = ext[:3, :3] @ np.asarray(xyz, dtype=float) + ext[:3, 3]
        uvw = intr @ cam
        return float(uvw[1] / uvw[2]), float(uvw[0] / uvw[2])

    # ------------------------------------------------------------------ language
    @property
    def current_entry(self) -> SubgoalEntry | None:
        return None if self.checker is None else self.checker.current

    def simple_subgoal(self) -> str:
        e = self.current_entry
        return "" if e is None else e.name

    def point_of(self, obj) -> str:
        """``<y, x>`` of an object's projected centre (cheap grounding for alternatives)."""
        y, x = self.project(self.pos_of(obj))
        return f"<{int(np.clip(y, 0, 255))}, {int(np.clip(x, 0, 255))}>"

    def ground_template(self, template: str, *objs) -> str:
        for o in objs:
            template = template.replace("<>", self.point_of(o), 1)
        return template

    @staticmethod
    def seg_id(obj) -> int:
        return int(obj.per_scene_id[0]) if hasattr(obj.per_scene_id, "__getitem__") else int(obj.per_scene_id)

    def grounded_subgoal(self, seg: np.ndarray | None = None) -> str:
        """The current subgoal with each ``<>`` replaced by the ``<y, x>`` segmentation centroid.

        Latched on the first frame where every grounded object is visible, until the subgoal
        changes. An object that stands in the scene but is occluded (e.g. by the arm parked over
        the bin) is grounded at its projected centre, unlatched, so the policy can act on it and
        clear the view; one that is not in the scene yet falls back to the simple text.
        """
        e = self.current_entry
        if e is None:
            return ""
        idx = self.checker.index
        if idx in self._latched:
            return self._latched[idx]
        if not e.ground:
            self._latched[idx] = e.template
            return e.template
        if seg is None:
            seg = self.render_front(segmentation=True)["segmentation"]
        text, occluded = e.template, False
        for obj in e.ground:
            ys, xs = np.nonzero(seg == self.seg_id(obj))
            if len(ys) == 0:
                y, x = self.project(self.pos_of(obj))
                if self.pos_of(obj)[2] < -0.5 or not (0 <= y < IMAGE_SIZE and 0 <= x < IMAGE_SIZE):
                    return e.name
                occluded = True
                text = text.replace("<>", f"<{int(y)}, {int(x)}>", 1)
            else:
                text = text.replace("<>", f"<{int(ys.mean())}, {int(xs.mean())}>", 1)
        if not occluded:
            self._latched[idx] = text
        return text
