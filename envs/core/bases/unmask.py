"""The task base of the four Permanence tasks (VideoUnmask, ButtonUnmask, VideoUnmaskSwap,
ButtonUnmaskSwap): :class:`UnmaskTask`, the containers, hidden cubes, the timeline
(``envs/core/animation/container_swaps.py``), the container subgoals and their solvers
(``envs/core/motion/containers.py``)."""

from __future__ import annotations

import numpy as np

from subgoals.record_names import cover_binding
from envs.core import primitives as P
from envs.core.animation.container_swaps import REVEAL_END, SWAP_START, SWAP_STEPS, lane_pose, rest_poses_after
from envs.core.base_task import HistorySlot, RoboMMETask
from envs.core.builders.container import HIDDEN_CUBE_HALF, INNER, TOP_Z, build_container
from envs.core.checker import SubgoalEntry
from envs.core.motion.containers import lift_container, put_down_container
from envs.core.probes import ProbeQuestion

PICKED_Z = 0.15
PUT_DOWN_Z = 0.07
PARK = np.array([6.0, 6.0, 0.0])  # far outside every view, below the "lifted" height; re-set each step


class UnmaskTask(RoboMMETask):
    """Containers, hidden cubes, the timeline, the container subgoals and their solvers.

    Subclasses sample the layout (:class:`UnmaskLayout`), add their own objects (buttons) and
    put their own first entries (a demonstration hold, or button presses) before
    :meth:`container_entries`.
    """

    OPTION_PATTERNS = (
        (r"^put down\b", "put_down"),
        *RoboMMETask.OPTION_PATTERNS,
    )

    OBJECT_NOUN = "cube"
    """What the goal, the subgoals and the probes call a hidden object ("the red cube")."""
    COVER_NOUN = "container"
    """What they call a cover ("the container hiding the red cube")."""
    HIDDEN_REST_Z = HIDDEN_CUBE_HALF
    """Height of a hidden object's centre when it rests on the table."""

    def build_hidden(self, colour: str):
        """One hidden object of ``colour``: a cube of half-size ``HIDDEN_CUBE_HALF``."""
        return P.build_cube(self.scene, f"cube_{colour}", P.COLOURS[colour], half=HIDDEN_CUBE_HALF)

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        L = self.layout
        self.containers = [build_container(self.scene, f"container_{i}") for i in range(len(L.containers))]
        self.hidden_cubes = [self.build_hidden(c) for c in L.cube_colours]
        self._rest = rest_poses_after(L.containers, L.swaps)

    def place_scene(self) -> None:
        for i, cube in enumerate(self.hidden_cubes):
            self._cube_under(cube, self._rest[0][i])
        self._park_containers()

    @property
    def settle_clock(self) -> int:
        """The first step at which the scene is at rest for good (containers down, swaps over)."""
        n = len(self.layout.swaps)
        return SWAP_START + SWAP_STEPS * n if n else REVEAL_END

    def swaps_done(self, clock: int | None = None) -> int:
        clock = self.clock if clock is None else clock
        return sum(1 for s in range(len(self.layout.swaps)) if clock >= SWAP_START + SWAP_STEPS * (s + 1))

    def _pose_container(self, i: int, x: float, y: float, yaw: float) -> None:
        self.set_xyz(self.containers[i], [x, y, 0.0], P.yaw_quat(yaw))

    def _cube_under(self, cube, pose) -> None:
        x, y, yaw = pose
        self.set_xyz(cube, [x, y, self.HIDDEN_REST_Z], P.yaw_quat(yaw))

    def _park(self, actor, k: int) -> None:
        self.set_xyz(actor, PARK + [0.3 * k, 0.0, 0.0])

    def _park_containers(self) -> None:
        for i, c in enumerate(self.containers):
            self._park(c, i)

    def is_parked(self, actor) -> bool:
        return float(np.linalg.norm(self.pos(actor)[:2])) > 2.0  # the table is ~1 m across

    def animate(self, clock: int) -> None:
        if clock < REVEAL_END:
            self._park_containers()
            return
        if clock == REVEAL_END:
            for i, (x, y, yaw) in enumerate(self._rest[0]):
                self._pose_container(i, x, y, yaw)
        swaps = self.layout.swaps
        for s, (a, b) in enumerate(swaps):
            start = SWAP_START + SWAP_STEPS * s
            if not start < clock <= start + SWAP_STEPS:
                continue
            t = (clock - start) / SWAP_STEPS
            before, after = self._rest[s], self._rest[s + 1]
            for i, pose in enumerate(before):
                if i in (a, b) or self.pos(self.containers[i])[2] > 0.01:  # movers, or in the gripper
                    continue
                self._pose_container(i, *pose)  # everything else is held where it rests
            self._pose_container(a, *lane_pose(before[a], after[a], t))
            self._pose_container(b, *lane_pose(before[b], after[b], t))
        if swaps and SWAP_START <= clock < self.settle_clock:
            for k, cube in enumerate(self.hidden_cubes):
                self._park(cube, 10 + k)
        if swaps and clock == self.settle_clock:
            for i, cube in enumerate(self.hidden_cubes):
                self._cube_under(cube, self._rest[-1][i])

    # ------------------------------------------------------------------ reading the scene
    def pos_of(self, obj):
        """Containers are located by their middle (what the camera sees), not by their rim."""
        if any(obj is c for c in getattr(self, "containers", ())):
            return self.pos(obj) + [0.0, 0.0, TOP_Z / 2]
        return super().pos_of(obj)

    def container_of(self, colour: str) -> int:
        return self.layout.cube_colours.index(colour)

    def lifted_container(self, i: int) -> bool:
        return self.pos(self.containers[i])[2] > PICKED_Z

    def other_lifted(self, allowed: int | None) -> bool:
        return any(self.lifted_container(i) for i in range(len(self.containers)) if i != allowed)

    def put_down(self, i: int) -> bool:
        c = self.containers[i]
        return self.pos(c)[2] <= PUT_DOWN_Z and not self.is_grasping(c) and self.tcp()[2] > 0.05

    def held_container(self):
        for c in self.containers:
            if self.is_grasping(c):
                return c
        return None

    # ------------------------------------------------------------------ subgoals
    def pick_template(self, colour: str) -> str:
        return f"pick up the {self.COVER_NOUN} at <> that hides the {colour} {self.OBJECT_NOUN}"

    def container_entries(self) -> list[SubgoalEntry]:
        entries = []
        for k, colour in enumerate(self.layout.pick_colours):
            i = self.container_of(colour)
            c = self.containers[i]
            if k > 0:
                prev = self.container_of(self.layout.pick_colours[k - 1])
                entries.append(SubgoalEntry(
                    name=f"put down the {self.COVER_NOUN}", template=f"put down the {self.COVER_NOUN}",
                    success=lambda j=prev: self.put_down(j), fail=lambda j=prev: self.other_lifted(j),
                    option="put_down", target=self.containers[prev], params={"container": prev},
                ))
            entries.append(SubgoalEntry(
                name=f"pick up the {self.COVER_NOUN} that hides the {colour} {self.OBJECT_NOUN}",
                template=self.pick_template(colour),
                success=lambda j=i: self.lifted_container(j), fail=lambda j=i: self.other_lifted(j),
                option="pick", ground=(c,), target=c, params={"colour": colour, "container": i, "pick": k + 1},
            ))
        return entries

    def goal_values(self) -> dict[str, object]:
        cs = self.layout.pick_colours
        return {"picks": len(cs), "colour": cs[0], **({"colour2": cs[1]} if len(cs) > 1 else {})}

    def goal_suffix(self) -> str:
        cs = self.layout.pick_colours
        cover, obj = self.COVER_NOUN, self.OBJECT_NOUN
        text = f"pick up the {cover} hiding the {cs[0]} {obj}"
        for c in cs[1:-1]:  # the ood split's third pick: a middle clause, the last one stays "finally"
            text += f", then pick up another {cover} hiding the {c} {obj}"
        if len(cs) > 1:
            text += f", finally pick up another {cover} hiding the {cs[-1]} {obj}"
        return text

    def candidates(self, option: str):
        if option == "pick":
            return [(self.COVER_NOUN, c) for c in self.containers]
        if option == "put_down":
            held = self.held_container()
            return [(self.COVER_NOUN, held)] if held is not None else [(self.COVER_NOUN, c) for c in self.containers]
        return []

    def grounded_subgoal(self, seg=None) -> str:
        """Container points are grounded only once the scene is at rest (after the last swap).

        While containers are parked or still swapping a point would be stale within steps, so
        the simple text is returned and nothing is latched.
        """
        e = self.current_entry
        if e is not None and e.option == "pick" and self.clock < self.settle_clock:
            return e.name
        return super().grounded_subgoal(seg)

    # ------------------------------------------------------------------ motions
    def motion(self, option: str, target, executor, params: dict | None = None):
        if option == "pick" and any(target is c for c in self.containers):
            return self._lift_after_settle(target, executor)
        if option == "put_down":
            return self._put_down(target, executor)
        return super().motion(option, target, executor, params)

    def _lift_after_settle(self, container, ex):
        while self.clock < self.settle_clock:  # the scene is still being revealed or swapped
            yield ex.action()
        yield from lift_container(ex, container)

    def _put_down(self, target, ex):
        held = self.held_container() or target
        i = next(k for k, c in enumerate(self.containers) if c is held)
        xy = self._rest[self.swaps_done()][i][:2]  # back where it rested
        yield from put_down_container(ex, held, xy)

    # ------------------------------------------------------------------ memory interface
    def on_table(self, i: int) -> bool:
        c = self.containers[i]
        if self.is_parked(c):
            return False
        y, x = self.project(self.pos_of(c))
        return 0 <= y < 256 and 0 <= x < 256

    def history_slot(self):
        """Which container hides the named cube: any container on the table is equally likely."""
        e = self.current_entry
        if e is None or e.option != "pick":
            return None
        colour = e.params["colour"]
        template = self.pick_template(colour)
        alts = tuple(self.ground_template(template, c) for i, c in enumerate(self.containers) if self.on_table(i))

        def index_of(obj) -> object:
            return next((i for i, c in enumerate(self.containers) if c is obj), obj)

        def accepts(does) -> bool:
            # judged on the world: the oracle's own text names no container while a swap is still
            # running (its point is grounded once the last swap is over), so it cannot be the measure
            return does is not None and does[0] == "pick" and does[1] == self.container_of(colour)

        return HistorySlot("which container", alts or (e.name,), choice_of=index_of, accepts=accepts)

    def probe_questions(self):
        """Binding questions for the memory assessment: where is the container hiding each named cube?

        Asked only once the scene is at rest (containers down, swaps over), about the cubes the
        goal names, while their container stands on the table (a lifted one shows its cube). The
        answer is the true container's projected centre; the candidates are every container's.
        The record text is the memory's binding wording (``memory.language.words.cover_binding``).
        """
        if self.clock < self.settle_clock:
            return []
        points = {
            i: tuple(float(v) for v in self.project(self.pos_of(c)))
            for i, c in enumerate(self.containers)
            if self.on_table(i) and self.pos(c)[2] < 0.02
        }
        out = []
        for colour in self.layout.pick_colours:
            i = self.container_of(colour)
            if i not in points:
                continue
            out.append(ProbeQuestion(
                "binding", f"where is the {self.COVER_NOUN} hiding the {colour} {self.OBJECT_NOUN}?",
                cover_binding(f"{colour} {self.OBJECT_NOUN}"),
                points[i], tuple(points.values()),
            ))
        return out

    def truth(self) -> dict:
        L = self.layout
        done = self.swaps_done()
        rest = self._rest[done]
        slot_now = [next(k for k, p in enumerate(self._rest[0]) if np.allclose(p[:2], rest[i][:2])) for i in range(len(rest))]
        under_now = {}
        for colour, cube in zip(L.cube_colours, self.hidden_cubes):
            cp = self.pos(cube)
            covering = [
                i for i, c in enumerate(self.containers)
                if np.linalg.norm(self.pos(c)[:2] - cp[:2]) < INNER / 2 and self.pos(c)[2] < 0.02
            ]
            under_now[colour] = covering[0] if covering else None
        return {
            "hides": {c: self.container_of(c) for c in L.cube_colours},  # container index, all episode
            "covered_by": under_now,  # container physically over the cube now (None: cube in view/parked)
            "slot_of_container": slot_now,  # which step-0 position each container occupies now
            "container_xy": [tuple(map(float, self.pos(c)[:2])) for c in self.containers],
            "swaps": [(a, b, SWAP_START + SWAP_STEPS * s) for s, (a, b) in enumerate(L.swaps)],
            "swaps_done": done,
            "pick_colours": list(L.pick_colours),
            "pick_containers": [self.container_of(c) for c in L.pick_colours],
        }
