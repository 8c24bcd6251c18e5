"""Containers and the reveal / cover / swap timeline shared by the four Permanence tasks.

A *container* is an open box turned upside down (inner side 0.05, walls 0.005 thick and 0.05
high, a 0.004 top plate) with a 4 cm cube knob centred on its top as a handle. It is dynamic, has
the default untextured material and its origin is the centre of its rim, so ``pos(container)[2]``
is how high it is lifted (0 when it rests on the table). All containers look exactly alike:
which one hides which cube can only be remembered, never seen.

Hidden cubes (half-size 0.02/1.2) sit under the first three containers.

The timeline runs on the absolute step clock, in the video and live alike:

* steps 0-31: the containers are parked far away, so the cubes are in plain view;
* step 32: every container drops back exactly onto its pose, covering its cube;
* (swap tasks) swap ``s`` runs over steps ``64 + 50 (s-1)`` .. ``64 + 50 s``: the two containers
  trade places along two lanes (straight line plus a sideways bulge ``0.07 sin(pi a)``, opposite
  for the two, with smoothstep timing ``a`` and blended yaw); every other container is held in
  place. From step 64 to the end of the last swap the cubes are parked away; when the last swap
  ends each reappears under its (moved) container.

The partner of a swap is the container nearest to the mover when the swap starts. The first
mover is a cube container, the second another cube container, the third any container not yet
used as a mover.

Solvers: :func:`lift_container` grasps the knob and lifts the container; :func:`put_down_container`
lowers the held container back onto the table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sapien

from envs.core import primitives as P
from envs.core import solvers as S
from envs.core.base_task import HistorySlot, RoboMMETask
from envs.core.checker import SubgoalEntry
from envs.core.probes import ProbeQuestion
from envs.core.sampling import SceneSamplingError, TablePlacer
from envs.core.scene_parts import Placed

# ---------------------------------------------------------------------- geometry
INNER = 0.05
WALL = 0.005
WALL_HEIGHT = 0.05
PLATE = 0.004
KNOB_HALF = 0.02
OUTER_HALF = INNER / 2 + WALL  # 0.03
KNOB_Z = WALL_HEIGHT + PLATE + KNOB_HALF  # knob centre above the rim: 0.074
TOP_Z = WALL_HEIGHT + PLATE + 2 * KNOB_HALF  # 0.094
HIDDEN_CUBE_HALF = 0.02 / 1.2

# ---------------------------------------------------------------------- timeline
REVEAL_END = 32
SWAP_START = 64
SWAP_STEPS = 50
BULGE = 0.07

# ---------------------------------------------------------------------- predicates
PICKED_Z = 0.15
PUT_DOWN_Z = 0.07

PARK = np.array([6.0, 6.0, 0.0])  # far outside every view, below the "lifted" height; re-set each step


def build_container(scene, name: str):
    """An upside-down open box with a cube knob on top; origin at the centre of the rim."""
    b = scene.create_actor_builder()
    h = WALL_HEIGHT / 2
    off = INNER / 2 + WALL / 2
    parts = [
        ((off, 0, h), (WALL / 2, OUTER_HALF, h)),
        ((-off, 0, h), (WALL / 2, OUTER_HALF, h)),
        ((0, off, h), (INNER / 2, WALL / 2, h)),
        ((0, -off, h), (INNER / 2, WALL / 2, h)),
        ((0, 0, WALL_HEIGHT + PLATE / 2), (OUTER_HALF, OUTER_HALF, PLATE / 2)),
        ((0, 0, KNOB_Z), (KNOB_HALF, KNOB_HALF, KNOB_HALF)),
    ]
    for p, half in parts:
        b.add_box_collision(pose=sapien.Pose(p=list(p)), half_size=list(half))
        b.add_box_visual(pose=sapien.Pose(p=list(p)), half_size=list(half))  # default material
    b.initial_pose = sapien.Pose(p=[0, 0, 0])
    return b.build(name=name)


# ---------------------------------------------------------------------- layout
@dataclass(frozen=True)
class UnmaskLayout:
    """Every random choice of a Permanence episode.

    ``containers[i]`` is the pose of container i at step 0; containers 0-2 hide the cubes whose
    colours are ``cube_colours``; ``pick_colours`` are the cubes to uncover, in order; ``swaps``
    are (mover, partner) container indices, in order; ``buttons`` the button positions.
    """

    containers: tuple[Placed, ...]
    cube_colours: tuple[str, ...]
    pick_colours: tuple[str, ...]
    swaps: tuple[tuple[int, int], ...] = ()
    buttons: tuple[Placed, ...] = ()


def sample_in_region(placer: TablePlacer, center, half, count: int, min_gap: float = 0.04) -> list[Placed]:
    """Up to ``count`` containers in a square region; stops when the region is full."""
    out = []
    for i in range(count):
        try:
            fp = placer.place(center, half, OUTER_HALF, yaw_range=(0.0, np.pi / 2), min_gap=min_gap, what=f"container {i}")
        except SceneSamplingError:
            if len(out) < 3:
                raise
            break
        out.append(Placed("container", fp.x, fp.y, fp.yaw))
    return out


def sample_at_anchors(placer: TablePlacer, anchors, jitter: float = 0.07, min_gap: float = 0.02) -> list[Placed]:
    """One container within ``jitter`` of each anchor point."""
    out = []
    for i, a in enumerate(anchors):
        fp = placer.place((float(a[0]), float(a[1])), jitter, OUTER_HALF, yaw_range=(0.0, np.pi / 2), min_gap=min_gap, what=f"container {i}")
        out.append(Placed("container", fp.x, fp.y, fp.yaw))
    return out


def sample_colours(rng: np.random.Generator, picks: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(colour of the cube under containers 0-2, colours to uncover in order)."""
    under = [str(c) for c in rng.permutation(["red", "green", "blue"])]
    wanted = [str(c) for c in rng.permutation(["red", "green", "blue"])][:picks]
    return tuple(under), tuple(wanted)


def square_delta(a: float, b: float) -> float:
    """Smallest rotation taking yaw ``a`` to yaw ``b`` for a square (90-degree symmetry)."""
    q = np.pi / 2
    return float((b - a + q / 2) % q - q / 2)


def plan_swaps(rng: np.random.Generator, containers, n_swaps: int, n_cubes: int = 3) -> tuple[tuple[int, int], ...]:
    xy = [np.array([c.x, c.y]) for c in containers]
    movers: list[int] = []
    order = [int(i) for i in rng.permutation(n_cubes)]
    swaps = []
    for s in range(n_swaps):
        if s < 2:
            a = order[s]
        else:
            rest = [i for i in range(len(xy)) if i not in movers]
            a = int(rng.choice(rest))
        movers.append(a)
        d = [np.inf if j == a else float(np.linalg.norm(xy[j] - xy[a])) for j in range(len(xy))]
        b = int(np.argmin(d))
        xy[a], xy[b] = xy[b], xy[a]
        swaps.append((a, b))
    return tuple(swaps)


def rest_poses_after(containers, swaps) -> list[list[tuple[float, float, float]]]:
    """Resting (x, y, yaw) of every container before swap 1, after swap 1, ..., after the last."""
    poses = [(c.x, c.y, c.yaw) for c in containers]
    out = [list(poses)]
    for a, b in swaps:
        pa, pb = poses[a], poses[b]
        poses[a] = (pb[0], pb[1], pa[2] + square_delta(pa[2], pb[2]))
        poses[b] = (pa[0], pa[1], pb[2] + square_delta(pb[2], pa[2]))
        out.append(list(poses))
    return out


def smoothstep(t: float) -> float:
    t = min(max(t, 0.0), 1.0)
    return t * t * (3 - 2 * t)


def lane_pose(start, end, t: float, side: float = 1.0) -> tuple[float, float, float]:
    """(x, y, yaw) of a swapping container at progress ``t`` in [0, 1] going ``start`` -> ``end``.

    The bulge is to the left of the direction of travel (``side=+1``), so the two containers of
    a swap, travelling in opposite directions, keep to two lanes on opposite sides of the line.
    """
    a = smoothstep(t)
    p0, p1 = np.array(start[:2]), np.array(end[:2])
    d = p1 - p0
    n = np.array([-d[1], d[0]]) / max(np.linalg.norm(d), 1e-9)
    p = p0 + a * d + side * BULGE * np.sin(np.pi * a) * n
    yaw = start[2] + a * (end[2] - start[2])
    return float(p[0]), float(p[1]), float(yaw)


# ---------------------------------------------------------------------- solvers
def lift_container(ex: S.Executor, container, lift_tcp_z: float = 0.27) -> S.Actions:
    """Grasp the knob of ``container`` from above and lift it (its rim then well above 0.15)."""
    env = ex.env
    tcp = env.tcp()
    p = env.pos(container)
    yaw = S.nearest_yaw(S.yaw_of(container), ex.tcp_yaw())
    knob = p[2] + KNOB_Z + 0.003
    if tcp[2] < knob + 0.06:  # e.g. just let go of another container: rise straight up first
        yield from ex.move_to(S.down_pose([tcp[0], tcp[1], knob + 0.08], ex.tcp_yaw()))
    if ex.gripper != S.OPEN:
        yield from ex.set_gripper(S.OPEN, 6)
    yield from ex.move_to(S.down_pose([p[0], p[1], knob + 0.07], yaw))
    yield from ex.move_to(S.down_pose([p[0], p[1], knob], yaw))
    yield from ex.set_gripper(S.CLOSED, 10)
    # straight up until it clears its neighbours' knobs, then on up; at the far corners of the
    # workspace those poses are out of reach, so the container is drawn toward the robot a bit
    inward = np.array([-0.615, 0.0]) - p[:2]
    inward /= np.linalg.norm(inward)
    for z in (knob + 0.12, lift_tcp_z):
        yield from first_reachable(ex, [S.down_pose([*(p[:2] + d * inward), z], yaw) for d in (0.0, 0.04, 0.08, 0.12)])


def first_reachable(ex: S.Executor, poses) -> S.Actions:
    """Move to the first of ``poses`` the planner can reach (raise if none)."""
    for k, pose in enumerate(poses):
        try:
            motion = ex.move_to(pose)
            first = next(motion)  # planning happens before the first action
        except S.PlanningFailed:
            if k == len(poses) - 1:
                raise
            continue
        yield first
        yield from motion
        return


def put_down_container(ex: S.Executor, container, xy) -> S.Actions:
    """Carry the held container over ``xy``, lower it onto the table, let go and back off."""
    env = ex.env
    tcp, p = env.tcp(), env.pos(container)
    off = tcp[:2] - p[:2]
    dz = tcp[2] - p[2]
    yaw = ex.tcp_yaw()
    x, y = float(xy[0] + off[0]), float(xy[1] + off[1])
    yield from ex.move_to(S.down_pose([x, y, max(tcp[2], 0.2)], yaw))
    yield from ex.move_to(S.down_pose([x, y, dz + 0.004], yaw))
    yield from ex.set_gripper(S.OPEN, 6)
    yield from ex.move_to(S.down_pose([x, y, dz + 0.1], yaw))


# ---------------------------------------------------------------------- the shared task body
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

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        L = self.layout
        self.containers = [build_container(self.scene, f"container_{i}") for i in range(len(L.containers))]
        self.hidden_cubes = [
            P.build_cube(self.scene, f"cube_{c}", P.COLOURS[c], half=HIDDEN_CUBE_HALF) for c in L.cube_colours
        ]
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
        self.set_xyz(cube, [x, y, HIDDEN_CUBE_HALF], P.yaw_quat(yaw))

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
        return f"pick up the container at <> that hides the {colour} cube"

    def container_entries(self) -> list[SubgoalEntry]:
        entries = []
        for k, colour in enumerate(self.layout.pick_colours):
            i = self.container_of(colour)
            c = self.containers[i]
            if k > 0:
                prev = self.container_of(self.layout.pick_colours[k - 1])
                entries.append(SubgoalEntry(
                    name="put down the container", template="put down the container",
                    success=lambda j=prev: self.put_down(j), fail=lambda j=prev: self.other_lifted(j),
                    option="put_down", target=self.containers[prev], params={"container": prev},
                ))
            entries.append(SubgoalEntry(
                name=f"pick up the container that hides the {colour} cube",
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
        text = f"pick up the container hiding the {cs[0]} cube"
        if len(cs) > 1:
            text += f", finally pick up another container hiding the {cs[1]} cube"
        return text

    def candidates(self, option: str):
        if option == "pick":
            return [("container", c) for c in self.containers]
        if option == "put_down":
            held = self.held_container()
            return [("container", held)] if held is not None else [("container", c) for c in self.containers]
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
        template = self.pick_template(e.params["colour"])
        alts = tuple(self.ground_template(template, c) for i, c in enumerate(self.containers) if self.on_table(i))
        return HistorySlot("which container", alts or (e.name,))

    def probe_questions(self):
        """Binding questions for the memory assessment: where is the container hiding each named cube?

        Asked only once the scene is at rest (containers down, swaps over), about the cubes the
        goal names, while their container stands on the table (a lifted one shows its cube). The
        answer is the true container's projected centre; the candidates are every container's.
        The record text is the memory's binding wording (``memory.vocabulary.cover_binding``).
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
                "binding", f"where is the container hiding the {colour} cube?", f"cover hiding the {colour} cube",
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
