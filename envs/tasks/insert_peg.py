"""InsertPeg: watch a peg being picked by one end and pushed into a box, then do the same.

Scene: three identical pegs, each a bar of two 0.05 links (0.1 m, cross-section 0.02) with a head
of a random colour and a tail of the complementary colour (the same colours on all three), and a
fixed yellow box (#FFD289) with a square through-hole (half-width 0.017; outer half-width 0.04;
0.1 deep) centred at (U(-0.1, 0.1), U(-0.1, 0.1), 0.04) with a yaw of 90° ± 20°, so the hole runs
roughly along y. The pegs lie in [-0.2, 0.2] x [-0.3, 0.3], at least 0.075 apart and clear of the
box, with a yaw of U(-45°, 45°); on the ood split four pegs, at any yaw. Peg 0 is the one used.

Random choices: which end is grasped (head or tail, called the "near" or "far" end by which one
is closer in x to the robot base) and from which side the peg goes in (left = +y, right = -y).

Timeline: the conditioning video shows the robot grasping the chosen end of peg 0, lifting it and
pushing its other end into the hole from the chosen side (the box flashes red for 20 steps after a
correct insertion). A hidden reset then puts every peg back where it started and holds still for
100 steps: the policy sees the same initial scene as the video did.

Subgoals: "pick up the peg at <end> by grasping the {near|far} end", then "insert the peg from the
{left|right} side".

Success: the free end is within 0.05 of the box centre and nearer to it than the grasped end, with
the gripper on the chosen side of the box (along y), for 3 consecutive steps. Failure: the wrong
end lifted (above z 0.1 and nearer the gripper), the wrong end inserted or the right end from the
wrong side, or any other peg lifted.

Only memory answers: which of three identical pegs, which end, and which side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core import primitives as P
from envs.core import solvers as S
from envs.core.base_task import REST_QPOS, HistorySlot, RoboMMETask
from envs.core.bases.imitation import Counted, Phases, SegGroundMixin
from envs.core.builders.peg import build_box_core, build_holed_box, build_peg, peg_links, pose_peg
from envs.core.checker import SubgoalEntry
from envs.core.motion.bars import pick_bar, wrap
from envs.core.motion.trace import commanded_tip, follow, go_joints, line_points
from envs.core.probes import ProbeQuestion
from envs.core.sampling import Footprint, SceneSamplingError, TablePlacer
from subgoals.record_names import RecordName

BOX_RGB = (0xFF / 255, 0xD2 / 255, 0x89 / 255)
HOLE_HALF = 0.017
BOX_HALF = 0.04
BOX_HALF_DEPTH = 0.05
BOX_Z = 0.04
PEG_LINK = 0.05
PEG_HALF = 0.01
N_PEGS = 3
INSERTED = 0.05
CORE_STEPS = 20
SUCCESS_HOLD = 3


@dataclass(frozen=True)
class PegPose:
    x: float  # centre of the bar (between its two links)
    y: float
    yaw: float


@dataclass(frozen=True)
class InsertPegLayout:
    box_xy: tuple[float, float]
    box_yaw: float  # the hole runs along this direction
    pegs: tuple[PegPose, ...]
    head_rgb: tuple[float, float, float]
    end: str  # "head" or "tail": the end of peg 0 that is grasped
    side: str  # "left" (+y) or "right" (-y): where the gripper stays while inserting


class InsertPeg(SegGroundMixin, RoboMMETask):
    TASK = "InsertPeg"
    HAS_VIDEO = True

    OPTION_PATTERNS = (
        (r"^insert the peg\b.*\bleft side\b", "insert_left"),
        (r"^insert the peg\b.*\bright side\b", "insert_right"),
    ) + RoboMMETask.OPTION_PATTERNS

    # ------------------------------------------------------------------ layout
    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> InsertPegLayout:
        bx, by = rng.uniform(-0.1, 0.1, size=2)
        byaw = float(np.pi / 2 + rng.uniform(-np.pi / 9, np.pi / 9))
        box = Footprint(float(bx), float(by), BOX_HALF_DEPTH, BOX_HALF, byaw)
        placer = TablePlacer(rng, [box.padded(0.04)])
        pegs: list[PegPose] = []
        # the ood split: a fourth peg, and pegs at any yaw
        n_pegs = self.ood_option("pegs", N_PEGS)
        yaws = (-np.pi, np.pi) if self.ood_option("full_yaw", False) else (-np.pi / 4, np.pi / 4)
        for k in range(n_pegs):
            for _ in range(64):
                fp = placer.place((0.0, 0.0), (0.2, 0.3), PEG_LINK, PEG_HALF, yaw_range=yaws, min_gap=0.02, what=f"peg {k}")
                if all(np.hypot(fp.x - q.x, fp.y - q.y) >= 0.075 for q in pegs):
                    pegs.append(PegPose(fp.x, fp.y, fp.yaw))
                    break
                placer.placed.pop()
            else:
                raise SceneSamplingError(f"no room for peg {k}")
        head = tuple(float(v) for v in rng.uniform(0, 1, size=3))
        end = "head" if rng.random() < 0.5 else "tail"
        side = "left" if rng.random() < 0.5 else "right"
        return InsertPegLayout((float(bx), float(by)), byaw, tuple(pegs), head, end, side)

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        L = self.layout
        tail = tuple(1.0 - v for v in L.head_rgb)
        self.pegs = [build_peg(self.scene, f"peg{k}", PEG_LINK, PEG_HALF, L.head_rgb, tail) for k in range(len(L.pegs))]
        self.ends = [peg_links(p, f"peg{k}") for k, p in enumerate(self.pegs)]  # (head, tail)
        self.box = build_holed_box(self.scene, "box", HOLE_HALF, BOX_HALF, BOX_HALF_DEPTH, BOX_RGB)
        self.core = build_box_core(self.scene, "box_core", HOLE_HALF, BOX_HALF, BOX_HALF_DEPTH)

    def place_scene(self) -> None:
        L = self.layout
        self.pose_pegs()
        self.box_quat = P.yaw_quat(L.box_yaw)
        self.set_xyz(self.box, [*L.box_xy, BOX_Z], self.box_quat)
        self.set_xyz(self.core, [0, 0, -2.0])
        self.core_until = -1
        self.phases = Phases()
        self._inserted_steps = 0
        self._inserted_once = False

    def pose_pegs(self) -> None:
        for peg, pp in zip(self.pegs, self.layout.pegs):
            pose_peg(peg, pp.x, pp.y, PEG_HALF, pp.yaw, PEG_LINK)

    def goal_texts(self) -> list[str]:
        return [
            "watch the video carefully, then grasp the same end of the same peg you've picked before and insert it into the same side of the box",
            "after watching the video, pick the same peg by the same end and push it into the box from the same side as shown",
        ]

    # ------------------------------------------------------------------ geometry
    @property
    def box_centre(self) -> np.ndarray:
        return np.array([*self.layout.box_xy, BOX_Z])

    @property
    def grasp_link(self):
        head, tail = self.ends[0]
        return head if self.layout.end == "head" else tail

    @property
    def free_link(self):
        head, tail = self.ends[0]
        return tail if self.layout.end == "head" else head

    def end_word(self, peg: int, end: str) -> str:
        """'near' if ``end`` of peg ``peg`` is (initially) closer in x to the robot base, else 'far'."""
        head_near = np.cos(self.layout.pegs[peg].yaw) < 0  # the head lies along the bar's +x
        return "near" if head_near == (end == "head") else "far"

    @property
    def side_sign(self) -> float:
        return 1.0 if self.layout.side == "left" else -1.0

    # ------------------------------------------------------------------ predicates
    def _inserted(self, inner, outer) -> bool:
        c = self.box_centre
        di, do = np.linalg.norm(self.pos(inner) - c), np.linalg.norm(self.pos(outer) - c)
        return bool(di < INSERTED and di < do)

    def correct_insertion(self) -> bool:
        on_side = (self.tcp()[1] - self.layout.box_xy[1]) * self.side_sign > 0
        return self._inserted(self.free_link, self.grasp_link) and on_side

    def wrong_insertion(self) -> bool:
        if self._inserted(self.grasp_link, self.free_link):
            return True
        on_side = (self.tcp()[1] - self.layout.box_xy[1]) * self.side_sign > 0
        return self._inserted(self.free_link, self.grasp_link) and not on_side

    def wrong_end_lifted(self) -> bool:
        tcp = self.tcp()
        wrong, right = self.free_link, self.grasp_link
        return bool(self.pos(wrong)[2] > 0.1 and np.linalg.norm(self.pos(wrong) - tcp) < np.linalg.norm(self.pos(right) - tcp))

    def other_peg_lifted(self) -> bool:
        return any(max(self.pos(h)[2], self.pos(t)[2]) > 0.05 for h, t in self.ends[1:])

    def picked(self) -> bool:
        return self.is_grasping(self.grasp_link) and self.pos(self.grasp_link)[2] > 0.06

    def inserted_done(self) -> bool:
        return self._inserted_steps >= SUCCESS_HOLD

    def any_failure(self) -> bool:
        return self.wrong_end_lifted() or self.wrong_insertion() or self.other_peg_lifted()

    def animate(self, clock: int) -> None:
        if self.correct_insertion():
            self._inserted_steps += 1
            if not self._inserted_once:  # the box core flashes red once per insertion
                self._inserted_once = True
                self.core_until = clock + CORE_STEPS
                self.set_xyz(self.core, [*self.layout.box_xy, BOX_Z], self.box_quat)
        else:
            self._inserted_steps = 0
        if self.core_until >= 0 and clock >= self.core_until:
            self.core_until = -1
            self.set_xyz(self.core, [0, 0, -2.0])

    # ------------------------------------------------------------------ subgoals
    def pick_text(self, peg: int = 0, end: str | None = None) -> str:
        end = end or self.layout.end
        return f"pick up the peg at <> by grasping the {self.end_word(peg, end)} end"

    def build_subgoals(self) -> list[SubgoalEntry]:
        word = self.end_word(0, self.layout.end)
        side = self.layout.side
        entries = []
        for demo in (True, False):
            fail = None if demo else self.any_failure
            entries.append(SubgoalEntry(
                name=f"pick up the peg by grasping the {word} end", template=f"pick up the peg at <> by grasping the {word} end",
                success=self.picked, option="pick", ground=(self.grasp_link,), target=self.grasp_link,
                fail=fail, demonstration=demo,
            ))
            entries.append(SubgoalEntry(
                name=f"insert the peg from the {side} side", template=f"insert the peg from the {side} side",
                success=self.inserted_done, option=f"insert_{side}", target=self.box, fail=fail, demonstration=demo,
            ))
            if demo:
                entries.append(SubgoalEntry(
                    name="put the pegs back", template="put the pegs back", success=self.phases.is_done("reset"),
                    option="peg_reset", demonstration=True, record=False,
                ))
        return entries

    # ------------------------------------------------------------------ options
    def candidates(self, option: str):
        if option == "pick":
            return [(f"peg {k} {e}", link) for k, ends in enumerate(self.ends) for e, link in zip(("head", "tail"), ends)]
        if option.startswith("insert_"):
            return [("box", self.box)]
        return []

    def motion(self, option, target, executor, params=None):
        params = params or {}
        if option == "pick":
            return pick_bar(executor, target, lift_to=0.12, grasp_z=PEG_HALF + 0.003)
        if option.startswith("insert_"):
            return self._insert(executor, option[len("insert_"):])
        if option == "peg_reset":
            return self._reset_pegs(executor)
        return super().motion(option, target, executor, params)

    def held_peg(self):
        """(grasped link, free link) of the peg in the gripper, or None."""
        for head, tail in self.ends:
            if self.is_grasping(head):
                return head, tail
            if self.is_grasping(tail):
                return tail, head
        return None

    def _insert(self, ex, side: str):
        """Turn the held peg along the hole, line its free end up on ``side``, push it in."""
        cnt = Counted(self, ex)
        tcp = self.tcp()
        if tcp[2] < 0.11:  # finish the lift (the pick may have been cut short) and let the peg settle
            yield from cnt.run(ex.move_to(S.down_pose([tcp[0], tcp[1], 0.12], ex.tcp_yaw()), settle=0))
        yield from cnt.barrier(min_hold=8)
        held = self.held_peg()
        if held is None:
            return
        grasped, free = held
        s = 1.0 if side == "left" else -1.0
        axis = np.array([np.cos(self.layout.box_yaw), np.sin(self.layout.box_yaw)])
        entry = axis if axis[1] * s > 0 else -axis  # from the box centre toward the gripper's side
        tcp = self.tcp()
        f = self.pos(free)
        o = f - tcp  # TCP -> free end centre
        want = np.arctan2(-entry[1], -entry[0])  # the free end must point into the box
        delta = wrap(want - np.arctan2(o[1], o[0]))
        c, sn = np.cos(delta), np.sin(delta)
        o_rot = np.array([c * o[0] - sn * o[1], sn * o[0] + c * o[1], o[2]])
        yaw = ex.tcp_yaw() + delta
        centre = self.box_centre
        pre = centre + np.append(entry, 0.0) * (BOX_HALF_DEPTH + PEG_LINK / 2 + 0.025) - o_rot
        deep = centre + np.append(entry, 0.0) * 0.022 - o_rot
        above = pre + np.array([0.0, 0.0, 0.08])
        yield from ex.move_to(S.down_pose(above, yaw), settle=2)
        yield from follow(ex, line_points(above, pre, 0.006), yaw, settle=6)
        yield from follow(ex, line_points(pre, deep, 0.004), yaw, settle=10)

    def _reset_pegs(self, ex):
        """Hidden: release, back off, pegs to their initial poses, arm home, 100 still steps."""
        yield from ex.set_gripper(S.OPEN, 8)
        tip = commanded_tip(ex)
        yield from ex.move_to(S.down_pose([tip[0], tip[1], tip[2] + 0.1], ex.tcp_yaw()), settle=0)
        yield from go_joints(ex, REST_QPOS, settle=2)
        self.pose_pegs()
        self._inserted_once = False
        yield from ex.hold(100)
        self.phases.mark("reset")

    # ------------------------------------------------------------------ memory
    def history_slot(self):
        e = self.current_entry
        if e is None or e.demonstration:
            return None
        if e.option == "pick":
            alts = tuple(
                self.ground_seg(self.pick_text(k, end), link)
                for k, ends in enumerate(self.ends) for end, link in zip(("head", "tail"), ends)
            )
            return HistorySlot("peg and end", alts)
        return HistorySlot("side", tuple(f"insert the peg from the {s} side" for s in ("left", "right")))

    def probe_questions(self):
        """Which end of which peg did the video grasp (as a point among all six ends at their initial
        places), and which end word and side did it use?"""
        L = self.layout
        points = {}
        for k, pp in enumerate(L.pegs):
            c, s = np.cos(pp.yaw), np.sin(pp.yaw)
            for end, sign in (("head", 1.0), ("tail", -1.0)):
                yx = self.project([pp.x + sign * c * PEG_LINK / 2, pp.y + sign * s * PEG_LINK / 2, PEG_HALF])
                points[(k, end)] = (round(yx[0], 1), round(yx[1], 1))
        return [
            ProbeQuestion("binding", "which end of which peg did the video grasp?", RecordName.PEG_END_GRASPED,
                          points[(0, L.end)], tuple(points.values())),
            ProbeQuestion("route", "which end was grasped and from which side was the peg inserted?", RecordName.DEMONSTRATED_INSERTION,
                          (f"grasp the {self.end_word(0, L.end)} end", f"insert from the {L.side} side")),
        ]

    def truth(self) -> dict:
        L = self.layout
        return {"peg": 0, "end": L.end, "end_word": self.end_word(0, L.end), "side": L.side,
                "box": [*L.box_xy, float(np.degrees(L.box_yaw))]}
