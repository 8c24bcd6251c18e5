"""Results campaigns: resumable plans of runs, each pinned to one commit.

``v1`` (the default) is Results v1, the paper's protocol on our envs; ``memory-v2`` is the general
memory's checks (issue 35: test and ood, oracle / memory, and held-out wordings), ``profile-v2`` the
executor profile's (issue 36), ``results-v2`` the protocol on the benchmark's own envs (issue 37);
each is pinned on its own.

    python -m experiments.campaign --status              # planned vs done, per stage
    python -m experiments.campaign --campaign memory-v2 --next 1   # the other plan
    python -m experiments.campaign --next 2              # run the next two unfinished stages
    python -m experiments.campaign --stage headline-s7   # run one stage (resumes it)
    python -m experiments.campaign --publish             # copy every run dir to benchmarks/results/

A session that continues the campaign works in a clone at the pinned commit and names the main
checkout's results with ``--results DIR``: stages resume from the rows published there (copied into
the clone's ``runs/`` when it has none) and ``--publish`` writes back there, so the rows of every
session end up in one committed place.

Why a campaign and not one command: the protocol is about 25 CPU-hours on a 2-core machine, far
more than one session, and a table is only honest if every row in it ran at the same code. So the
plan is data (:data:`V1`), each stage is one ``python -m experiments.run`` invocation that resumes
where it stopped, and the campaign refuses to add rows at a commit other than the one its rows
already name (:func:`check_pin`). Stages are ordered by what the README needs first: the headline
arms on seed 7, then the other seeds, rewording, recent-N, the ablations, the oracle ladder and
the ood split. Stages that share a split and a goal wording share a run directory, so the report
pairs their rows by episode.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from envs.episodes import ALL_TASKS
from experiments.loop.config import PAPER_CONDITIONS
from experiments.reporting.publish import PUBLISHED, commits_of, publish
from experiments.loop.results import CONFIG_FILE, RESULTS_FILE, read_rows

ROOT = Path(__file__).resolve().parents[2]  # the checkout: experiments/reporting/ is two below it
RUNS = ROOT / "runs"

LADDER = ("memory-true-state", "memory-oracle-access", "memory-oracle-grounding")
RECENT = ("recent4", "recent16", "recent32")
ABLATIONS = tuple(c for c in PAPER_CONDITIONS if c.startswith("memory-") and c not in LADDER)
TASKS = len(ALL_TASKS)


@dataclass(frozen=True)
class Stage:
    """One ``experiments.run`` invocation of the campaign (paper preset: its policy noise)."""

    name: str
    run_dir: str
    """Directory under ``runs/`` (and name under ``benchmarks/results/``) the rows go to."""
    conditions: tuple[str, ...]
    episodes: str
    seeds: tuple[int, ...] = (7,)
    split: str = "test"
    goal_style: str = "template"
    executor_profile: str = "clean"
    """``clean``: the ``paper`` preset's policy noise; a profile (issue 36) replaces it: the run takes
    no preset's noise, only the profile's failures, as the profile's fit did."""
    backend: str = "robomem"
    """``robomem`` (our envs) or ``robomme`` (the benchmark's own, ``--backend robomme``: its planner
    executes each option, so the ``paper`` preset's policy noise has nothing to act on and no preset
    is taken; a profile perturbs the planner, policies/official_faults.py)."""

    @property
    def episode_range(self) -> tuple[int, int]:
        """``episodes`` as numbers: the half-open range ``(lo, hi)``."""
        lo, hi = self.episodes.split(":")
        return int(lo), int(hi)

    @property
    def planned(self) -> int:
        lo, hi = self.episode_range
        return TASKS * (hi - lo) * len(self.seeds) * len(self.conditions)

    def argv(self, workers: int) -> list[str]:
        failures = (["--executor-profile", self.executor_profile] if self.executor_profile != "clean"
                    else ["--preset", "paper"] if self.backend == "robomem" else [])
        backend = ["--backend", self.backend] if self.backend != "robomem" else []
        return [
            *failures, *backend, "--tasks", "all", "--split", self.split, "--episodes", self.episodes,
            "--seeds", *map(str, self.seeds), "--conditions", *self.conditions,
            "--goal-style", self.goal_style, "--workers", str(workers), "--out", str(RUNS / self.run_dir),
        ]

    def selects(self, row: dict) -> bool:
        """Whether ``row`` is one of this stage's planned units (the README's ``stage=`` filter)."""
        lo, hi = self.episode_range
        return (row.get("condition") in self.conditions and row.get("seed") in self.seeds
                and lo <= row.get("episode", -1) < hi and row.get("split", self.split) == self.split
                and row.get("goal_style", self.goal_style) == self.goal_style
                and row.get("executor_profile", "clean") == self.executor_profile
                and row.get("backend", "robomem") == self.backend)

    def done(self, rows: list[dict] | None = None) -> int:
        """Rows of this stage among ``rows`` (default: its run directory's), any status."""
        if rows is None:
            rows = local_rows((self,))[self.run_dir]
        return sum(1 for r in rows if self.selects(r))


HEADLINE = ("oracle", "no-memory", "memory")
V1: tuple[Stage, ...] = (
    Stage("headline-s7", "results_v1_test", HEADLINE, "0:50", (7,)),
    Stage("recent", "results_v1_test", RECENT, "0:20"),
    Stage("ablations", "results_v1_test", ABLATIONS, "0:20"),
    Stage("reworded", "results_v1_reworded", ("no-memory", "memory"), "0:50", goal_style="reworded"),
    Stage("headline-s11", "results_v1_test", HEADLINE, "0:50", (11,)),
    Stage("headline-s23", "results_v1_test", HEADLINE, "0:50", (23,)),
    Stage("ladder", "results_v1_test", LADDER, "0:20"),
    Stage("ood", "results_v1_ood", HEADLINE, "0:50", split="ood"),
)

MEMORY_V2: tuple[Stage, ...] = (
    Stage("test-s7", "memory_v2_campaign_test", ("oracle", "memory"), "0:50"),
    Stage("ood", "memory_v2_campaign_ood", ("oracle", "memory"), "0:50", split="ood"),
    Stage("held-out", "memory_v2_campaign_held_out", ("memory",), "0:50", goal_style="reworded-held-out"),
)
"""The general memory's checks at one commit (issue 35): the test split's headline arms on seed 7,
the ood split's, and goals worded only from the held-out pool (set beside ``test-s7``'s template
memory rows, the same episodes at the same commit)."""


def memory_checks(prefix: str) -> tuple[Stage, ...]:
    """Issue 35's checks at a later pin: ``memory-v2``'s three stages, in run dirs named ``<prefix>_test``,
    ``<prefix>_ood`` and ``<prefix>_held_out`` (a run dir holds the rows of one commit only)."""
    return (
        Stage("test-s7", f"{prefix}_test", ("oracle", "memory"), "0:50"),
        Stage("ood", f"{prefix}_ood", ("oracle", "memory"), "0:50", split="ood"),
        Stage("held-out", f"{prefix}_held_out", ("memory",), "0:50", goal_style="reworded-held-out"),
    )


MEMORY_V3: tuple[Stage, ...] = memory_checks("memory_v3")
"""Issue 35's checks again, at the commit where the audit no longer misreads a continuing motion,
the flash counter counts a lit frame for the decision at hand, touching cubes are read apart and a
covered lit node is not a new touch (``memory-v2``'s commit predates all four). The same stages as
``memory-v2``; read accuracy at one commit comes from ``test-s7`` here."""

MEMORY_V4: tuple[Stage, ...] = memory_checks("memory_v4")
"""Issue 35's checks a third time, at the commit where the cover follower keeps up with containers
that trade places while the arm travels over them and settles a track a swap left beside its still
container (``memory-v3``'s commit holds both tracks still, and its ``test-s7`` stopped at 1172 rows).
The same stages as ``memory-v2``."""

MEMORY_V5: tuple[Stage, ...] = memory_checks("memory_v5")
"""Issue 35's checks a fourth time, at the commit where the demonstration readers keep a target at
rest home while a swapped disc slides over it, follow the demonstrated cube from the put-down the
joint angles saw, and treat a pick still in the hand as the pick under way (``memory-v4``'s commit
has none of the three; its ``ood`` stage stopped part-way). The same stages as ``memory-v2``."""

MEMORY_V6: tuple[Stage, ...] = memory_checks("memory_v6")
"""Issue 35's checks a fifth time, at the commit where the highlight reader and the deposit counter
read the hand's own log under the ``paper`` preset's executor noise (a grip that lifted nothing picks
no marked cube off; the place the lift started from names the carried colour when the emptied places
name several) and a read whose re-grounding fails answers with the record's stored position instead
of abstaining (``memory-v5``'s commit has none of the three; its ``ood`` and ``held-out`` stages were
not run). The same stages as ``memory-v2``."""

MEMORY_V7: tuple[Stage, ...] = memory_checks("memory_v7")
"""Issue 35's checks a sixth time, at the commit where the cover follower learns each bound
container's own gray levels (it kept the first container's only, and lost a container lit a few
levels darker among touching neighbours) and the arm's footprint grows as a link comes nearer the
camera (a raised hand hid containers its skeleton passed 30-40 px from). ``memory-v6``'s commit has
neither; its ``ood`` stage stopped at 287 rows and its ``held-out`` stage was not run."""

MEMORY_V8: tuple[Stage, ...] = memory_checks("memory_v8")
"""Issue 35's checks a seventh time, at the commit where a container half hidden by the working hand
holds in a scene whose containers never moved on their own (the hand's edge and what was left of
the container flowed together and walked the record onto a neighbour), a cube of a hue no colour
word names standing close to a named one is found (the named blob's widened box swallowed it), and
a demonstration's place by a disc near the camera counts as on it (the reach around a target grows
with the disc's apparent size). ``memory-v7``'s commit has none of the three; its ``ood`` stage
stopped at 638 rows, ``held-out`` was not run."""

MEMORY_V9: tuple[Stage, ...] = memory_checks("memory_v9")
"""Issue 35's checks an eighth time, at the commit where an arc route's arrival at its next node is
read from the arm's joints (the hand over where the demonstration's hand dwelt) instead of the
stick's tip in the picture, which a tip found on another part of the arm behind an obstacle moved
onto the next node mid-move. ``memory-v8``'s commit reads the tip; its ``test-s7`` stage completed
there. Run ``ood`` first (``--stage ood``): it is the check the route change is for."""

MEMORY_V10: tuple[Stage, ...] = memory_checks("memory_v10")
"""Issue 35's checks a ninth time, at the commit where the scripted executor tries a pick again when
its grip closed on nothing (both arms: the motion used to hold still until the subgoal changed, which
the env's checker never lets it do), beside ``memory-v9``'s route reader. ``memory-v9``'s ``ood``
stage showed BinFill at 0.75 of the oracle on its first 50 episodes, most of the gap single physical
misses and injected slips, and was stopped there. Run ``ood`` first (``--stage ood``)."""

MEMORY_V11: tuple[Stage, ...] = memory_checks("memory_v11")
"""Issue 35's checks a tenth time, at the commit where the count gate, with a count owed and no object
of that kind in view, picks at the place one was last seen standing if the arm's projection hides it
now, and otherwise holds still (it used to abstain, letting the history-blind press or a colour not
owed through); and where the deposit counter reads which colour was carried, a place the arm hides at
the release is unseen rather than emptied. ``memory-v10``'s ``ood`` stage held BinFill at 0.78 of the
oracle after 755 rows; on the development range (``ood`` 50-99, seed 11) four of its memory failures
were such abstentions and one a deposit counted as the colour behind the arm (29 -> 35 of 50, 0 wrong
reads of 999). Run ``ood`` first."""

MEMORY_V12: tuple[Stage, ...] = memory_checks("memory_v12")
"""Issue 35's checks an eleventh time, at the commit where the cover followers keep a swap's pair
apart: two followed containers sharing one image region (one behind the other) are split by how
their points move, each track following its own group; two tracks on one container (a swap the arm
hid, one track holding while the other followed its container onto that spot) part, the one that
stood still longer searching for the container no other track holds. Also carried: the lift's own
place names the carried colour in the deposit counter (6444836), and MoveCube's audit takes the peg
by either of its look-alike links for the manner decision. ``memory-v11``'s ``ood`` stage held every
task at 0.86 of the oracle or more, but ButtonUnmaskSwap's read accuracy at 94.0 % and MoveCube's at
93.8 %; on the development range (``ood`` 50-99, seed 7) ButtonUnmaskSwap went from 96.5 to 98.2 %
read accuracy (41 -> 44 of 50) and MoveCube from 31 wrong reads of 422 to none. Run ``ood`` first."""

PROFILE_V2: tuple[Stage, ...] = (
    Stage("test-s7", "pi05_like_v2_test", HEADLINE, "0:50", executor_profile="pi05-like"),
)
"""Issue 36's check at one commit: the headline arms on test 0-49, seed 7, under the fitted
``pi05-like`` executor profile (policies/profiles/pi05_like.json), beside the clean executor's."""

OFFICIAL = "robomme"
RESULTS_V2: tuple[Stage, ...] = (
    Stage("headline-s7", "results_v2_official_test", HEADLINE, "0:50", (7,), backend=OFFICIAL),
    Stage("best-memoryless-s7", "results_v2_official_test", ("best-memoryless",), "0:50", (7,), backend=OFFICIAL),
    Stage("profile-s7", "results_v2_official_pi05_like", HEADLINE, "0:50", (7,), executor_profile="pi05-like-official",
          backend=OFFICIAL),
    Stage("recent-s7", "results_v2_official_test", RECENT, "0:50", (7,), backend=OFFICIAL),
    Stage("reworded-s7", "results_v2_official_reworded", ("no-memory", "memory"), "0:50", (7,), goal_style="reworded",
          backend=OFFICIAL),
    Stage("headline-s11", "results_v2_official_test", HEADLINE, "0:50", (11,), backend=OFFICIAL),
    Stage("headline-s23", "results_v2_official_test", HEADLINE, "0:50", (23,), backend=OFFICIAL),
    Stage("best-memoryless-s11-s23", "results_v2_official_test", ("best-memoryless",), "0:50", (11, 23),
          backend=OFFICIAL),
)
"""Results v2 (issue 37): the paper's protocol on the benchmark's own envs. Seed 7 of the headline
first, then its fair memoryless arm, the seed-7 stages (the ``pi05-like`` profile perturbing the
benchmark's planner, recent-N windows, reworded goals), then seeds 11 and 23: 7200 headline cells in
all. Pinned to the commit where issues 35 and 36 have landed. ``profile-s7`` runs
``pi05-like-official``, the profile fitted on the official envs' train episodes
(``scripts/fit_executor_profile.py --backend robomme``, ``benchmarks/executor_fit_official.md``): the
benchmark's oracle re-asks a missed pick, so the rates fitted on ours fail far less there."""

CAMPAIGNS: dict[str, tuple[Stage, ...]] = {"v1": V1, "memory-v2": MEMORY_V2, "profile-v2": PROFILE_V2,
                                           "results-v2": RESULTS_V2, "memory-v3": MEMORY_V3, "memory-v4": MEMORY_V4,
                                           "memory-v5": MEMORY_V5, "memory-v6": MEMORY_V6, "memory-v7": MEMORY_V7,
                                           "memory-v8": MEMORY_V8, "memory-v9": MEMORY_V9,
                                           "memory-v10": MEMORY_V10, "memory-v11": MEMORY_V11,
                                           "memory-v12": MEMORY_V12}
"""``--campaign`` names; each is pinned to its own commit (its rows never mix commits)."""


def known_stages() -> tuple[Stage, ...]:
    """Every campaign's stages (read at call time, so a test can swap one plan)."""
    return V1 + MEMORY_V2 + PROFILE_V2 + RESULTS_V2 + MEMORY_V3 + MEMORY_V4 + MEMORY_V5 + MEMORY_V6 + MEMORY_V7 + MEMORY_V8 + MEMORY_V9 + MEMORY_V10 + MEMORY_V11 + MEMORY_V12


class CampaignError(RuntimeError):
    """The campaign cannot go on as asked (the message says why and what to do)."""


def head_commit() -> tuple[str, bool]:
    """HEAD's commit and whether the checkout has uncommitted changes to tracked files."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return commit, bool(dirty)


def resume_from(results: Path, stages: tuple[Stage, ...] = V1) -> list[Path]:
    """Copy each published run dir of ``results`` into ``runs/`` where ``runs/`` has none yet, so a
    new clone resumes the campaign instead of starting it again; returns the dirs it wrote."""
    written = []
    for run_dir in dict.fromkeys(s.run_dir for s in stages):
        src, dst = Path(results) / run_dir, RUNS / run_dir
        rows = src / (RESULTS_FILE + ".gz")
        if (dst / RESULTS_FILE).exists() or not rows.exists():
            continue
        dst.mkdir(parents=True, exist_ok=True)
        with gzip.open(rows, "rb") as fin, open(dst / RESULTS_FILE, "wb") as fout:
            shutil.copyfileobj(fin, fout)
        for config in [*src.glob("config.*.json"), src / CONFIG_FILE]:  # every earlier invocation's record too
            if config.exists():
                shutil.copy(config, dst / config.name)
        written.append(dst)
    return written


def stale_local_copies(results: Path, stages: tuple[Stage, ...] = V1) -> list[str]:
    """One line per run dir whose ``runs/`` copy holds fewer rows than the published one.

    :func:`resume_from` never overwrites local rows, so a checkout that ran (or resumed) the campaign
    once keeps that copy while later sessions publish more; ``--status`` and ``--next`` count the
    local rows, and without this note would report a finished stage as far from done.
    """
    lines = []
    for run_dir in dict.fromkeys(s.run_dir for s in stages):
        local, published = RUNS / run_dir, Path(results) / run_dir
        if not (local / RESULTS_FILE).exists() or not published.exists():
            continue
        n_local, n_published = len(read_rows(local, warn=False)), len(read_rows(published, warn=False))
        if n_local < n_published:
            lines.append(f"{local} has {n_local} rows, {published} has {n_published}: the counts below are the "
                         f"local copy's (remove {local} to resume from the published rows)")
    return lines


def pinned_commits(stages: tuple[Stage, ...] = V1) -> dict[str, int]:
    """Commits the campaign's existing rows ran at (local run dirs, else the published copies)."""
    found: dict[str, int] = {}
    for run_dir in dict.fromkeys(s.run_dir for s in stages):
        for root in (RUNS, PUBLISHED):
            if (root / run_dir).exists():
                for c, n in commits_of(read_rows(root / run_dir, warn=False)).items():
                    found[c] = found.get(c, 0) + n
                break
    return found


def check_pin(stages: tuple[Stage, ...] = V1) -> str:
    """The commit new rows may be written at; raises :class:`CampaignError` when HEAD is not it."""
    commit, dirty = head_commit()
    if dirty:
        raise CampaignError("the checkout has uncommitted changes; run the campaign from a clean clone")
    pinned = pinned_commits(stages)
    others = {c: n for c, n in pinned.items() if c != commit}
    if others:
        raise CampaignError(
            f"the campaign's rows ran at {others} but HEAD is {commit[:12]}: check out that commit "
            f"(git clone . /tmp/v1 && git -C /tmp/v1 checkout {next(iter(others))[:12]}) or start a new campaign"
        )
    return commit


def local_rows(stages: tuple[Stage, ...] = V1) -> dict[str, list[dict]]:
    """Each of the stages' run directories under ``runs/`` and its rows (none where it does not exist)."""
    return {d: read_rows(RUNS / d, warn=False) if (RUNS / d).exists() else []
            for d in dict.fromkeys(s.run_dir for s in stages)}


def seconds_per_row(rows_by_dir: dict[str, list[dict]]) -> dict[str, float]:
    """Mean episode wall time by condition over the campaign's rows so far (the ETA's basis)."""
    total: dict[str, list[float]] = {}
    for rows in rows_by_dir.values():
        for r in rows:
            if isinstance(r.get("wall_s"), (int, float)):
                total.setdefault(r["condition"], []).append(float(r["wall_s"]))
    return {c: sum(v) / len(v) for c, v in total.items()}


def remaining_cpu_hours(stage: Stage, done: int, per_row: dict[str, float]) -> float | None:
    """The stage's rows still to run times their conditions' seconds per row so far; a condition not
    yet seen counts as the full memory arm (every ablation and recent-N arm runs the memory); None
    before any memory row exists."""
    guess = per_row.get("memory")
    secs = [per_row.get(c, guess) for c in stage.conditions]
    if any(v is None for v in secs):
        return None
    left = max(0, stage.planned - done)
    return left * (sum(secs) / len(secs)) / 3600


def status(stages: tuple[Stage, ...] = V1, workers: int = 2) -> str:
    rows_by_dir = local_rows(stages)  # each run dir read once, however many stages share it
    per_row = seconds_per_row(rows_by_dir)
    lines = [f"{'stage':14} {'run dir':28} {'done':>6} / planned   CPU-h left (≈ h with {workers} workers)"]
    total = 0.0
    for s in stages:
        done = s.done(rows_by_dir[s.run_dir])
        left = remaining_cpu_hours(s, done, per_row)
        total += left or 0.0
        eta = "?" if left is None else f"{left:6.1f} (≈ {left / workers:.1f})"
        lines.append(f"{s.name:14} {s.run_dir:28} {done:6d} / {s.planned:<9d} {eta}")
    lines.append(f"CPU-hours left, from each condition's seconds per row so far: {total:.1f}")
    pinned = pinned_commits(stages)
    lines.append(f"rows by commit: {pinned or 'none yet'}")
    return "\n".join(lines)


def run_stage(stage: Stage, workers: int, stages: tuple[Stage, ...] | None = None) -> int:
    check_pin(V1 if stages is None else stages)
    argv = stage.argv(workers)
    print(f"campaign: {stage.name}: python -m experiments.run {' '.join(argv)}", flush=True)
    return subprocess.run([sys.executable, "-m", "experiments.run", *argv], cwd=ROOT).returncode


def publish_all(stages: tuple[Stage, ...] = V1, dest_root: Path | None = None) -> list[Path]:
    """Copy every local run dir over its published one; refuses where the published one has more rows."""
    stale = stale_local_copies(dest_root or PUBLISHED, stages)
    if stale:
        raise CampaignError("not publishing: " + "; ".join(stale))
    out = []
    for run_dir in dict.fromkeys(s.run_dir for s in stages):
        if (RUNS / run_dir).exists():
            out.append(publish(RUNS / run_dir, run_dir, dest_root=dest_root or PUBLISHED, replace=True))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.campaign", description=__doc__.split("\n\n")[0])
    p.add_argument("--campaign", default="v1", choices=tuple(CAMPAIGNS),
                   help="which plan: v1 (Results v1, the paper's protocol), memory-v2 (issue 35's checks) or profile-v2 (issue 36's: the headline arms under the pi05-like executor profile)")
    p.add_argument("--status", action="store_true", help="planned vs done per stage")
    p.add_argument("--stage", action="append", default=[], help="run this stage (repeatable)")
    p.add_argument("--next", type=int, default=0, help="run the next N unfinished stages")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--publish", action="store_true", help="copy the run dirs to benchmarks/results/")
    p.add_argument("--results", type=Path, default=None,
                   help="a benchmarks/results dir (the main checkout's) to resume from and publish to")
    args = p.parse_args(argv)
    plan = CAMPAIGNS[args.campaign]
    if args.results is not None:
        if not args.results.is_dir():
            p.error(f"--results {args.results}: no such directory")
        for path in resume_from(args.results, plan):
            print(f"campaign: resumed {path} from {args.results}")
        for line in stale_local_copies(args.results, plan):
            print(f"campaign: {line}", file=sys.stderr)
    by_name = {s.name: s for s in plan}
    unknown = [n for n in args.stage if n not in by_name]
    if unknown:
        p.error(f"unknown stage {unknown[0]!r} of campaign {args.campaign} (known: {', '.join(by_name)})")
    todo = [by_name[n] for n in args.stage]
    if args.next:
        rows_by_dir = local_rows(plan)
        todo += [s for s in plan if s.done(rows_by_dir[s.run_dir]) < s.planned and s not in todo][: args.next]
    try:
        for stage in todo:
            rc = run_stage(stage, args.workers, plan)
            if rc:
                return rc
        if args.publish:
            for path in publish_all(plan, dest_root=args.results):
                print(f"published {path}")
    except CampaignError as exc:
        print(f"campaign: {exc}", file=sys.stderr)
        return 2
    if args.status or not (todo or args.publish):
        print(status(plan, workers=args.workers))
    return 0


def stage_rows(rows: list, stages: tuple[str, ...], name: str) -> list:
    """The rows of the named campaign stages; raises naming a stage that is unknown or incomplete."""
    here = {s.name: s for s in known_stages() if s.run_dir == name}
    out: list = []
    for n in stages:
        stage = here.get(n)
        if stage is None:
            elsewhere = sorted({s.run_dir for s in known_stages() if s.name == n})
            if elsewhere:
                raise ValueError(f"results {name!r}: stage {n!r} writes to {', '.join(elsewhere)}, not here")
            raise ValueError(f"results {name!r}: unknown stage {n!r} "
                             f"(known: {', '.join(dict.fromkeys(s.name for s in known_stages()))})")
        mine = [r for r in rows if stage.selects(r)]
        if len(mine) < stage.planned:
            raise ValueError(f"results {name!r}: stage {n!r} has {len(mine)} of its {stage.planned} rows; "
                             f"a README table is built from complete stages only")
        out += mine  # the plan's stages never share a unit (tested in tests/test_campaign.py)
    return out


if __name__ == "__main__":
    sys.exit(main())
