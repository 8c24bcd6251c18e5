"""The official RoboMME envs behind this project's subgoal-level interface (``--backend robomme``).

:class:`OfficialSubgoalEnv` builds the benchmark's own env for an episode (``BenchmarkEnvBuilder``
with the ``multi_choice`` action space: the benchmark's planner executes each subgoal) and gives
the harness what our ``SubgoalExecution(RoboMMEEnv)`` stack gives it:

* ``reset(options={"episode": spec})``: obs ``front_rgb`` / ``joint_state`` / ``clock``, info
  ``goal`` / ``task_goal`` / ``subgoal`` / ``status`` / ``steps`` and the conditioning video
  (:class:`envs.robomme_env.DemoVideo`) that the official ``reset()`` played;
* ``step(subgoal_text)``: the text becomes a multi_choice command (option label + ``<y, x>``
  point), the planner runs it, and every env step it took comes back in ``info["frames"]`` as a
  :class:`subgoals.frames.Frame` (front RGB at the render schedule's strides,
  joint state, the 8-D joint action the planner sent, captured at the env step);
* ``oracle_subgoal()``: the benchmark's ``grounded_subgoal_online``;
* ``unwrapped.history_slot()`` (see ``envs/official/slots.py``) and ``resolve()`` for the audit;
* ``timings`` as ``SubgoalExecution`` reports them (the official wrappers render every camera at
  every step, inside ``env_s``);
* the same Gym spaces as ``SubgoalExecution`` (``envs/spaces.py``): ``Text`` subgoals, and
  observations with both camera images and their ``*_rendered`` flags (the official env has no
  wrist image here: ``wrist_rendered`` is always 0).

The simulator stays on this side: the memory above sees only frames and text (memory/control/boundary.py).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping

import gymnasium as gym
import numpy as np

from envs.core.rewording import GOAL_STYLES, STYLE_POOLS, draw_rewording
from envs.episode_timings import TIMING_KEYS, read_timings, start_timings
from envs.episodes import EpisodeSpec
from envs.official import mapping as M
from envs.official.goal_values import goal_values_from_text
from envs.official.fast_grasp_check import install_fast_grasp_check
from envs.official.render_gate import RenderGate
from envs.core.solvers import seed_planner_randomness
from envs.official.slots import (OfferedOption, PlanStep, choice_of, choice_slot, history_slot, nearest, plan_phrases,
                                 slot_name)
from envs.robomme_env import DemoVideo
from envs.spaces import subgoal_action_space, subgoal_observation, subgoal_observation_space
from subgoals.frames import Frame


_IMPORTS_FROZEN = False


def _freeze_imports() -> None:
    """Move everything alive after the heavy imports (torch, ManiSkill, the benchmark) out of the
    garbage collector's sight, once per process, after a full collection (so no garbage is kept).
    ManiSkill runs a full ``gc.collect()`` each time an env is cleared, twice per official episode
    (the benchmark builds a new env per episode); over a heap of imported objects each took about
    0.15 s, a quarter of a short episode's reset. Later objects are collected as before."""
    global _IMPORTS_FROZEN
    if not _IMPORTS_FROZEN:
        gc.collect()
        gc.freeze()
        _IMPORTS_FROZEN = True


def find_wrapper(env, name: str, why: str = ""):
    """The wrapper of class ``name`` in an official env stack (followed through each ``.env``), or a
    RuntimeError naming it (and ``why`` it is needed)."""
    e = env
    while e is not None and type(e).__name__ != name:
        e = e.__dict__.get("env")
    if e is None:
        raise RuntimeError(f"no {name} in the official env stack{': ' + why if why else ''}")
    return e


class _ActionTap(gym.Wrapper):
    """Sits under the benchmark's ``DemonstrationWrapper`` and records, for every step that yields an
    entry of the benchmark's observation lists, the action the planner sent and the env clock after it.

    The lists are not one entry per env step: once an episode has terminated, the
    ``DemonstrationWrapper`` runs an extra inner step after each step (``_doing_extra_step``) whose
    observation it drops, so the clock advances by two per entry (PickXtimes: after the final press).
    Counting entries back from the last clock then mislabels every earlier frame; these records give
    each entry its true clock, and extra steps are not recorded."""

    def __init__(self, env, demo, actions: list, clocks: list):
        super().__init__(env)
        self.demo, self.actions, self.clocks = demo, actions, clocks
        self.gate: RenderGate | None = None
        self.faults = None
        """An executor profile's failures (policies/official_faults.py): every planner action passes
        through it before the simulator; None: the planner's own actions."""
        self.terminal_state = None
        """With a render gate: the scene's state (``get_state_dict``) right after the latest step that
        terminated the episode, before the wrapper's extra step moves the scene on (the view the
        benchmark's entry shows). Kept, not rendered: an option can run dozens of steps after the
        episode has terminated, and only the last one's view is read (:meth:`terminal_front`)."""

    def step(self, action):
        extra = bool(self.demo.__dict__.get("_doing_extra_step", False))
        if self.faults is not None and not extra:
            action = self.faults.action(action, self._hold)
        out = self.env.step(action)
        if not extra:
            self.actions.append(np.asarray(action.cpu() if hasattr(action, "cpu") else action,
                                           dtype=np.float32).reshape(-1).copy())
            self.clocks.append(M.elapsed_steps({"elapsed_steps": self.env.unwrapped.elapsed_steps}))
            terminated = out[2]
            if self.gate is not None and bool(np.asarray(terminated.cpu() if hasattr(terminated, "cpu") else terminated).any()):
                self.terminal_state = self.env.unwrapped.get_state_dict()
        return out

    def _hold(self, action, n: int) -> None:
        """``n`` steps of ``action`` beneath the benchmark's recording (a late start: the arm holds,
        the clock runs, no entry is added to the benchmark's lists)."""
        for _ in range(n):
            self.env.step(action)

    def terminal_front(self):
        """The front view of :attr:`terminal_state` (None without one): that state set, rendered, and
        the scene put back as it was."""
        if self.terminal_state is None or self.gate is None:
            return None
        u = self.env.unwrapped
        now = u.get_state_dict()
        u.set_state_dict(self.terminal_state)
        try:
            return self.gate.fresh_front()
        finally:
            u.set_state_dict(now)


def _position(actor):
    """An official actor's world position (None where the benchmark cannot say)."""
    from robomme.robomme_env.utils.choice_action_mapping import extract_actor_position_xyz

    return extract_actor_position_xyz(actor)


class OfficialSubgoalEnv(gym.Env):
    """One official task; every reset builds the benchmark's env for that episode (as its eval does)."""

    metadata = {"render_modes": []}

    def __init__(self, task: str, split: str = "test", max_steps: int = 1300, frame_stride: int = 0,
                 video_stride: "int | Callable[[str], int]" = 1, noop_steps: int = 16, render_lod: str = "full",
                 timers: Mapping[str, Callable[[], float]] | None = None):
        from envs.official.bridges import apply_bridges
        from envs.official.install import require_robomme

        require_robomme()
        self.action_space = subgoal_action_space()
        self.observation_space = subgoal_observation_space()
        self.bridges = apply_bridges()
        from envs.official.lod import apply_render_lod

        self.render_lod = render_lod
        self.robot_urdfs = apply_render_lod(render_lod)
        from robomme.env_record_wrapper import BenchmarkEnvBuilder

        _freeze_imports()
        if max_steps <= 0:
            raise ValueError(f"max_steps must be positive, got {max_steps!r}")
        self.task_name = task
        self.max_steps = max_steps
        self.frame_stride = int(frame_stride)
        self.video_stride = video_stride
        """Keep every k-th clock tick of the conditioning video (``RoboMMEEnv.video_stride``: an int, or
        a function of the goal text, the render schedule's answer once the goal is known)."""
        self.noop_steps = noop_steps
        self.timers = dict(timers or {})
        self.builder = BenchmarkEnvBuilder(env_id=task, dataset=split, action_space="multi_choice", max_steps=max_steps)
        self.env = None
        self._actions: list[np.ndarray] = []
        self._clocks: list[int] = []
        """The tap's records: per entry of the benchmark's lists, the action before it and its clock."""
        self._info: dict = {}
        self._t: dict[str, float] = dict.fromkeys(TIMING_KEYS, 0.0)
        self._timer0: dict[str, float] = {}
        self.status, self.error, self.clock, self.steps = "ongoing", None, 0, 0
        self._clock0 = 0
        self._noop = 0
        self.goal_style, self._goals = "template", [""]
        self._last_obs: dict = {"front_rgb": None, "wrist_rgb": None, "joint_state": np.zeros(7, np.float32),
                                "step": 0, "clock": 0}
        self.render_only_consumed = False
        """Render the cameras only at the steps a consumer reads (envs/official/render_gate.py, about 2x
        faster, the same frames: docs/official_envs.md); False: every camera at every step, as the
        benchmark's wrappers do. The harness turns it on (``--official-render-gate``, the default)."""
        self.gate: RenderGate | None = None
        self._seed, self._decisions = 0, 0
        self.faults = None
        """``--executor-profile``'s failures for the episode (:class:`policies.official_faults.OfficialFaults`,
        set before ``reset``); None: the benchmark's planner runs every option as it plans it."""
        self.raw_log: list[dict] | None = None
        """Set to a list to keep every raw official (obs, info) this env returns (the fixture recorder)."""
        self._decision: dict | None = None
        self._phrases: dict[str, str] = {}
        """The plan's phrase book (``slots.plan_phrases``), read once per episode: every official task
        writes its ``task_list`` when the episode is initialised and never changes it after."""

    # ------------------------------------------------------------------ the interface run_episode reads
    @property
    def low(self):
        return self

    @property
    def timings(self) -> dict[str, float]:
        out = read_timings(self._t, self.timers, self._timer0)
        if self.gate is not None:
            out["renders"] = out.get("renders", 0) + self.gate.renders  # the frames the gate let render
        return out

    @property
    def official(self):
        """The benchmark's env of this episode (outermost wrapper), for the oracle and the audit only."""
        if self.env is None:
            raise RuntimeError("the official env is built by reset(); call reset() first")
        return self.env

    def _oracle_wrapper(self):
        return find_wrapper(self.official, "OraclePlannerDemonstrationWrapper")

    def options(self) -> list[dict]:
        """The multi_choice options of the current decision (label, action text, the candidates)."""
        from robomme.robomme_env.utils.vqa_options import get_vqa_options

        dummy = {"obj": None, "name": None, "seg_id": None}
        return get_vqa_options(self._vqa_env(), None, dummy, self.task_name)

    def _vqa_env(self):
        """The env the benchmark's option table is built on (the one under its planner wrapper)."""
        return self._oracle_wrapper().env

    def _camera(self):
        """(intrinsic, extrinsic, image shape) of the official front camera, as the benchmark's planner
        wrapper caches them (OpenCV conventions), for projecting objects into the front image."""
        w = self._oracle_wrapper()
        return w._front_camera_intrinsic_cv, w._front_camera_extrinsic_cv, w._front_rgb_shape

    def candidate_points(self, option: Mapping) -> list[tuple[int, int] | None]:
        """``(y, x)`` of each candidate object of ``option`` in the front image, projected with the
        official env's own camera (None where it is out of view)."""
        from robomme.robomme_env.utils.choice_action_mapping import (
            _unique_candidates, extract_actor_position_xyz, project_world_to_pixel)

        k, e, shape = self._camera()
        out = []
        for actor in _unique_candidates(option.get("available")):
            pos = extract_actor_position_xyz(actor)
            xy = None if pos is None else project_world_to_pixel(pos, k, e, shape)
            out.append(None if xy is None else (int(xy[1]), int(xy[0])))
        return out

    def _candidates(self, option: Mapping) -> list:
        from robomme.robomme_env.utils.choice_action_mapping import _unique_candidates

        return _unique_candidates(option.get("available"))

    def oracle_action(self) -> str:
        """The official oracle's option action text for the current subgoal (``current_choice_label``)."""
        return str(getattr(self.official.unwrapped, "current_choice_label", "") or "")

    def _option_by_action(self, action: str) -> dict | None:
        return next((o for o in self.options() if o.get("action") == action), None)

    def oracle_subgoal(self) -> str:
        """The benchmark's grounded subgoal (``grounded_subgoal_online``). When the benchmark could not
        fill its point this frame but the option needs one, the point of the oracle's own target
        (``current_segment``) is filled in, projected with the official camera."""
        text = str(self._info.get("grounded_subgoal_online") or self._info.get("simple_subgoal_online") or "")
        opt = self._option_by_action(self.oracle_action())
        if opt is not None and "available" in opt and M.subgoal_point(text) is None:
            yx = self._segment_point()
            template = str(getattr(self.official.unwrapped, "current_subgoal_segment", "") or "")
            if yx is not None and "<>" in template:
                text = template.replace("<>", f"<{yx[0]}, {yx[1]}>", 1)
        return text

    def _project(self, actor) -> tuple[int, int] | None:
        """``(y, x)`` of an official actor in the front image, with the official camera (None: out of view)."""
        from robomme.robomme_env.utils.choice_action_mapping import extract_actor_position_xyz, project_world_to_pixel

        k, e, shape = self._camera()
        pos = extract_actor_position_xyz(actor) if actor is not None else None
        xy = None if pos is None else project_world_to_pixel(pos, k, e, shape)
        return None if xy is None else (int(xy[1]), int(xy[0]))

    def _segment_point(self) -> tuple[int, int] | None:
        seg = getattr(self.official.unwrapped, "current_segment", None)
        segs = seg if isinstance(seg, (list, tuple)) else [seg]
        return next((p for p in map(self._project, segs) if p is not None), None)

    def plan(self) -> list[PlanStep]:
        """The benchmark's task plan (``task_list``) with each step's objects projected, for the
        slots of choices between options (oracle and audit only: it is the env's own plan)."""
        out = []
        for entry in getattr(self.official.unwrapped, "task_list", None) or []:
            seg = entry.get("segment")
            segs = seg if isinstance(seg, (list, tuple)) else ([] if seg is None else [seg])
            out.append(PlanStep(str(entry.get("choice_label") or ""),
                                str(entry.get("subgoal_segment") or entry.get("name") or ""),
                                tuple(self._project(s) for s in segs), bool(entry.get("demonstration"))))
        return out

    # the composers and the audit call env.unwrapped.history_slot(); gym.Env.unwrapped is self
    def history_slot(self):
        action = self.oracle_action()
        if slot_name(self.task_name, action) is not None:
            opt = self._option_by_action(action)
            return None if opt is None else history_slot(self.task_name, action, self.oracle_subgoal(), self.candidate_points(opt))
        choice = choice_of(self.task_name, action)
        if choice is None:
            return None
        offered = [OfferedOption(str(o.get("action") or ""),
                                 tuple(self.candidate_points(o)) if "available" in o else None,
                                 tuple(str(getattr(a, "name", "") or "") for a in self._candidates(o)) if "available" in o else ())
                   for o in self.options()]
        index = int(getattr(self.official.unwrapped, "current_task_index", 0) or 0)
        return choice_slot(choice, action, self.oracle_subgoal(), index, self.plan(), offered)

    def command(self, text: str) -> M.Command | None:
        return M.command_for(text, self.options(), self.oracle_subgoal(), self._oracle_label(), self._phrases)

    def _oracle_label(self) -> str | None:
        opt = self._option_by_action(self.oracle_action())
        return None if opt is None else opt.get("label")

    def _snapshot(self) -> dict:
        """The scene as the current decision sees it: options, oracle, candidates and their points."""
        opts = self.options()
        cands = {o.get("label"): (self._candidates(o), self.candidate_points(o)) for o in opts if "available" in o}
        return {"options": [{"label": o.get("label"), "action": o.get("action"), "available": "available" in o}
                            for o in opts],
                "oracle": self.oracle_subgoal(), "oracle_label": self._oracle_label(), "candidates": cands,
                "phrases": self._phrases}

    def resolve(self, text: str):
        """Subgoal text -> (option label, the candidate object it would act on), as the benchmark's
        executor picks it (nearest projected candidate); for the audit (run_episode), never for the
        memory. One official step runs a whole option (a lifted container has moved away by the
        time the audit asks), so after a step the texts are resolved in the scene as it was when
        that decision was taken, the equivalent of our backend's resolution after a 16-step chunk."""
        snap = self._decision if self._decision is not None else self._snapshot()
        cmd = M.command_for(text, snap["options"], snap["oracle"], snap["oracle_label"], snap["phrases"]) if text else None
        if cmd is None:
            return None
        if cmd.choice not in snap["candidates"] or cmd.point is None:
            return cmd.choice, None
        objs, pts = snap["candidates"][cmd.choice]
        i = nearest(cmd.point, pts)
        return cmd.choice, (None if i is None else objs[i])

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed=None, options=None):
        spec = (options or {}).get("episode")
        if not isinstance(spec, EpisodeSpec):
            raise TypeError(f"options['episode'] must be an EpisodeSpec, got {type(spec).__name__}")
        if spec.task != self.task_name:
            raise ValueError(f"episode for task {spec.task!r} given to an official {self.task_name} env")
        super().reset(seed=seed)  # gymnasium's np_random; the episode alone decides the scene
        self._t, self._timer0 = start_timings(self.timers)
        t0 = time.perf_counter()
        self.close()
        seed_meta, _ = self.builder.resolve_episode(spec.episode_idx)
        if seed_meta is not None and int(seed_meta) != spec.env_seed:
            raise ValueError(f"{spec.task} episode {spec.episode_idx}: spec seed {spec.env_seed} differs from the "
                             f"official metadata's {seed_meta}")
        self.env = self.builder.make_env_for_episode(spec.episode_idx, include_available_multi_choices=True)
        self._install_tap()
        install_fast_grasp_check(self.env.unwrapped.agent)  # exact; the benchmark's checks ask it every step
        self._clear_records()
        self._decision = None
        k0 = self.video_stride if isinstance(self.video_stride, int) else (lambda: self._demo_video_stride(options))
        self.gate = RenderGate(self.env.unwrapped, every=k0) if self.render_only_consumed else None
        self._tap.gate = self.gate
        self._seed, self._decisions = int(spec.env_seed), 0
        seed_planner_randomness(self._seed)  # the demonstration's plans, too
        obs, info = self.env.reset()
        if self.gate is not None:
            k_demo = self.gate.every  # the stride the demonstration was rendered at
            self.gate.every = self.frame_stride
            obs["front_rgb_list"][-1] = self.gate.fresh_front()  # the current view, whatever the stride
        self._t["reset_s"] += time.perf_counter() - t0
        self._log_raw("reset", None, obs, info)
        self._info = dict(info)
        self._choose_goal(options)
        self._phrases = plan_phrases(self.plan())
        self.status, self.error, self._noop = M.status_of(info), None, 0
        self.clock = self._clock0 = M.elapsed_steps(info)
        self.steps = 0
        n = len(obs["front_rgb_list"])
        clocks, _ = self._entries(n)
        video = DemoVideo()
        k = self.video_stride(self._goals[0]) if callable(self.video_stride) else int(self.video_stride)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"video_stride gave {k!r}; it must be an int >= 1")
        if self.gate is not None and k % k_demo:
            raise RuntimeError(f"{spec.task} episode {spec.episode_idx}: the demonstration was rendered every {k_demo} "
                               f"frames for the goal known before it played, but the goal after reset asks for every "
                               f"{k} (goal {self._goals[0]!r})")
        fingers = list(obs.get("gripper_state_list", []))[:n - 1]
        for i, (c, rgb, q) in enumerate(zip(clocks[:-1], obs["front_rgb_list"][:-1], obs["joint_state_list"][:-1])):
            if c % k == 0:
                video.front.append(M.as_uint8_rgb(rgb))
                video.joint_state.append(M.as_joints(q))
                if len(fingers) == n - 1:
                    video.gripper.append(M.as_fingers(fingers[i]))
                video.clock.append(c)
        self._t["renders"] += n if self.gate is None else 0
        self._clear_records()
        ours = self._our_obs(obs["front_rgb_list"][-1], obs["joint_state_list"][-1])
        self._last_obs = ours
        out = self._our_info()
        out.update(video=video, episode=spec, retry_offset=0)
        return subgoal_observation(ours), out

    def _clear_records(self) -> None:
        self._actions.clear()
        self._clocks.clear()

    def _entries(self, n: int) -> tuple[list[int], list]:
        """(clocks, actions) of the last ``n`` entries of the benchmark's lists: the tap's records
        (``_ActionTap``) where it has them; entries before the first recorded step (the reset's own
        observation) counted back from it."""
        k = min(len(self._clocks), n)
        rec_c, rec_a = self._clocks[len(self._clocks) - k:], self._actions[len(self._actions) - k:]
        first = rec_c[0] - 1 if k else self.clock
        return M.batch_clocks(n - k, first) + rec_c, [None] * (n - k) + rec_a

    def _log_raw(self, kind: str, action, obs, info) -> None:
        if self.raw_log is not None:
            self.raw_log.append({"kind": kind, "action": action, "obs": obs, "info": info,
                                 "actions": list(self._actions)})

    def _install_tap(self) -> None:
        e = find_wrapper(self.env, "DemonstrationWrapper", "cannot capture actions")
        e.env = self._tap = _ActionTap(e.env, e, self._actions, self._clocks)
        self._tap.faults = self.faults

    def _our_obs(self, rgb, q) -> dict:
        return {"front_rgb": None if rgb is None else M.as_uint8_rgb(rgb), "wrist_rgb": None,
                "joint_state": M.as_joints(q), "step": self.steps, "clock": self.clock}

    def _demo_video_stride(self, options: dict | None) -> int:
        """The conditioning video's stride for this episode's goal, asked by the render gate at its
        second frame, after the env has built its scene and before the demonstration plays: the
        goal is the benchmark's own text for the scene (``task_goal.get_language_goal``, the function
        its wrapper fills ``info["task_goal"]`` with), through the same choice of goal style as
        :meth:`_choose_goal`. ``reset`` checks that the goal it ends with asks for a multiple of it."""
        from robomme.robomme_env.utils import task_goal

        wrapper = find_wrapper(self.env, "DemonstrationWrapper", "cannot read the goal")
        goals = self._goals_for(task_goal.get_language_goal(wrapper, self.task_name), options)
        return int(self.video_stride(goals[0]))

    def _choose_goal(self, options: dict | None) -> None:
        """The goal every consumer (composer, memory, policy) is given, kept until the next reset:
        the benchmark's own paraphrases (``--goal-style template``), or one of our rewordings of the
        task's goal (``reworded``), filled with the values read back from the benchmark's template
        text (``envs/official/goal_values.py``) and drawn with the episode's goal stream, as on ours."""
        self.goal_style = str((options or {}).get("goal_style", "template"))
        self._goals = self._goals_for(self._info.get("task_goal"), options)

    def _goals_for(self, task_goal, options: dict | None) -> list[str]:
        """The goals given for the benchmark's ``task_goal`` under the options' goal style."""
        options = options or {}
        style = str(options.get("goal_style", "template"))
        if style not in GOAL_STYLES:
            raise ValueError(f"unknown goal style {style!r} ({', '.join(GOAL_STYLES)})")
        template = M.goal_texts({"task_goal": task_goal}) if task_goal else [""]
        if style == "template":
            return template
        values = goal_values_from_text(template[0])
        return [draw_rewording(self.task_name, values, int(options.get("goal_seed", 0)), pool=STYLE_POOLS[style])]

    def goal_list(self) -> list[str]:
        """The goal as a list of paraphrases (the challenge's ``task_goal``): the benchmark's own, or
        the one rewording this episode is given under ``--goal-style reworded``."""
        return list(self._goals)

    def _our_info(self) -> dict:
        goals = self._goals
        return {"goal": goals[0], "task_goal": goals, "goal_style": self.goal_style,
                "subgoal": self._info.get("simple_subgoal_online"),
                "status": self.status, "clock": self.clock, "steps": self.steps,
                "subgoal_index": getattr(self.official.unwrapped, "current_task_index", None), "error": self.error}

    def step(self, subgoal: str):
        if not isinstance(subgoal, str):
            raise TypeError(f"a subgoal-level action must be a string, got {type(subgoal).__name__}")
        if self.status != "ongoing":
            raise RuntimeError(f"step() called on a finished episode (status {self.status!r}); call reset()")
        t0 = time.perf_counter()
        self._decision = self._snapshot()
        cmd = M.command_for(subgoal, self._decision["options"], self._decision["oracle"],
                            self._decision["oracle_label"], self._decision["phrases"]) if subgoal else None
        frames: list[Frame] = []
        if cmd is None:
            # no option executes this text: the robot holds still for one chunk of the budget (as
            # our scripted policy does with an unparsable subgoal), so the episode can time out
            self._t["env_s"] += time.perf_counter() - t0
            return self._held_still(None)
        self._clear_records()
        self._tap.terminal_state = None
        obs, info = self._run_options(subgoal, cmd)
        self._t["env_s"] += time.perf_counter() - t0
        info = dict(info or {})
        if obs is None:  # the benchmark's FailAwareWrapper caught a crash (IK, planner): an error
            self.status, self.error = "error", M.error_text(info)
            if self.faults is not None:  # a crash a failed motion caused is the executor's failure
                self.status, self.error = self.faults.crash_status(self.error)
            out = dict(self._our_info(), frames=frames, command=cmd.to_action())
            return subgoal_observation(self._last_obs), 0.0, True, False, out
        keep = {k: v for k, v in info.items() if k not in ("status",)}
        self._info.update(keep)
        rgbs, qs = list(obs.get("front_rgb_list", [])), obs.get("joint_state_list", [])
        fingers = list(obs.get("gripper_state_list", []))
        n = len(rgbs)
        if n == 0 and "status" not in info:
            # the option took no env step (a "remain static" whose last hold checkpoint has passed:
            # it holds until a step already behind): nothing happened and the clock did not move;
            # like a text no option executes, it costs one chunk of the budget
            return self._held_still(cmd.to_action())
        if self.gate is not None and n:  # the view after the option, whatever the stride
            last = self._tap.terminal_front()
            rgbs[-1] = last if last is not None else self.gate.front_at(self._clocks[-1] if self._clocks else self.clock)
        self._t["renders"] += n if self.gate is None else 0
        if n:
            self.clock = M.elapsed_steps(info) if "elapsed_steps" in info else self.clock + n
        clocks, acts = self._entries(n)
        for i, (c, rgb, q, a) in enumerate(zip(clocks, rgbs, qs, acts)):
            want = i == n - 1 or (self.frame_stride and c % self.frame_stride == 0)
            frames.append(Frame(c, M.as_uint8_rgb(rgb) if want else None, M.as_joints(q), a,
                                gripper=M.as_fingers(fingers[i]) if i < len(fingers) else None))
        self.steps = self.clock - self._clock0 + self._noop
        self.status = M.status_of(info)
        if self.status == "error":  # the benchmark reported an error with frames: keep its reason
            self.error = M.error_text(info)
        if self.status == "ongoing" and self.steps >= self.max_steps:
            self.status = "timeout"
        ours = self._our_obs(rgbs[-1] if n else None, qs[-1] if n else self._last_obs["joint_state"])
        self._last_obs = ours
        out = dict(self._our_info(), frames=frames, command=cmd.to_action())
        return subgoal_observation(ours), 0.0, self.status in ("success", "fail", "error"), self.status == "timeout", out

    def _run_options(self, subgoal: str, cmd: M.Command) -> tuple:
        """The planner runs the decision's option (twice, or another one, where the executor
        profile's failure says so: policies/official_faults.py); (obs, info) of the last run, with the
        benchmark's per-step lists of every run joined; obs None if a run crashed."""
        cands = self._decision["candidates"]

        def candidates(label: str) -> tuple[list, list]:
            objs, pts = cands.get(label, ((), ()))
            return [_position(a) for a in objs], list(pts)

        runs = [cmd] if self.faults is None else self.faults.runs(
            subgoal, cmd, self._decision["options"], candidates)
        lists: dict[str, list] = {}
        obs, info = None, {}
        for run in runs:
            if self.faults is not None:
                self.faults.arm(run)
            # mplib's IK restarts draw from the C library's rand(): seeded per option run from the
            # episode, a plan depends on the episode and the decision alone, not on what ran before it
            seed_planner_randomness(self._seed * 1000 + self._decisions)
            self._decisions += 1
            obs, _, _, _, info = self.env.step(run.to_action())
            self._log_raw("step", run.to_action(), obs, info)
            if obs is None:
                break
            for key in ("front_rgb_list", "joint_state_list", "gripper_state_list"):
                lists.setdefault(key, []).extend(list(obs.get(key, [])))
            if M.status_of(info) != "ongoing":
                break
        if self.faults is not None:
            self.faults.arm(None)
        if obs is not None and len(runs) > 1:
            obs = dict(obs, **{k: v for k, v in lists.items() if k in obs})
        return obs, info

    def _held_still(self, command) -> tuple:
        """The step's return when the robot did not move: one no-op chunk of the budget is spent
        (so an episode that only ever holds still times out) and the last observation stands."""
        self._noop += self.noop_steps
        self.steps = self.clock - self._clock0 + self._noop
        if self.steps >= self.max_steps:
            self.status = "timeout"
        info = dict(self._our_info(), frames=[], command=command)
        return subgoal_observation(self._last_obs), 0.0, False, self.status == "timeout", info

    def close(self):
        if self.env is not None:
            try:
                self.env.close()
            finally:
                self.env = None
