"""One episode of the hierarchical loop: composer → (memory) → scripted/π0.5 policy → env.

``run_episode`` is the single place where an episode is played; the harness, the benchmarks and
the tests all go through it. Every ``horizon`` steps the composer proposes a subgoal from the
current view, the memory (if any) revises it, and the policy executes it. Outside the memory, the
episode is audited against the env's privileged truth: each executed subgoal is resolved to the
object it would act on and compared with the oracle subgoal's object, so a memory read is scored
right or wrong without the memory ever seeing the truth.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any

from envs.episodes import EpisodeSpec, base_seed
from experiments.audit.assessment import Assessment
from experiments.loop.records import EpisodeResult
from policies.base import PolicyError


@dataclass
class EpisodeParts:
    """What an episode runs with (built by ``experiments.loop.unit`` from a condition)."""

    env: Any  # outermost subgoal-level wrapper
    composer: Any
    memory: Any | None = None
    condition: str = "oracle"
    seed: int = 0
    streams: dict[str, int] = field(default_factory=dict)
    """The episode's random streams; the composer draws from ``streams["composer"]``."""
    policy: Any | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    goal_style: str = "template"
    """``template`` or ``reworded``: the env draws the rewording from ``streams["goal"]``."""
    backend: str = "robomem"
    """Which envs the episode runs on: ``robomem`` (ours) or ``robomme`` (the benchmark's own)."""


@dataclass
class HistoryAudit:
    """Every decision the task declares history-dependent (``task.history_slot()``), scored against
    the truth outside the memory. The four outcomes partition the decisions:

    * ``right``: the executed subgoal acts on what the oracle's does (``corrected``: of those, the
      proposal itself was wrong);
    * ``wrong``: the memory read or rewrote and the result is wrong;
    * ``abstained``: the memory tried to read and left a wrong proposal alone;
    * ``silent_wrong``: the memory left no trace at all on a wrong proposal: it silently agreed
      (for conditions without memory every wrong decision is silent).
    """

    decisions: int = 0
    right: int = 0
    corrected: int = 0
    wrong: int = 0
    abstained: int = 0
    silent_wrong: int = 0
    proposals_wrong: int = 0

    def add(self, *, right: bool, proposal_right: bool, memory_read: bool, memory_abstained: bool) -> None:
        self.decisions += 1
        self.proposals_wrong += not proposal_right
        if right:
            self.right += 1
            self.corrected += not proposal_right
        elif memory_read:
            self.wrong += 1
        elif memory_abstained:
            self.abstained += 1
        else:
            self.silent_wrong += 1

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


WRONG_REWRITES_KEPT = 20
"""How many of an episode's wrong rewrites the row lists (``memory["wrong_reads"]``: the decision's
step, the oracle's subgoal, the proposal and what the memory made of it). The subgoal list keeps
one entry per change of subgoal, so a wrong rewrite at a decision that repeats the one before (the
same texts, resolved in a scene that moved) would otherwise leave no trace of which it was."""


def _resolve(resolver, text: str, scene=None):
    """``(option, object)`` the executor would make of ``text``, in ``scene`` (the scene as the
    decision saw it, :meth:`policies.scripted.ScriptedPolicy.scene`) where one is given, or None."""
    return (resolver.resolve(text, scene) if scene is not None else resolver.resolve(text)) if text else None


def _as_choice(r, choice_of=None):
    """A resolution as the decision at hand compares it: the object through ``choice_of`` (where the
    history slot says what its decision is about, HistorySlot.choice_of), or its identity."""
    if r is None:
        return None
    option, target = r
    if target is None:
        return option, None
    return option, (choice_of(target) if choice_of is not None else id(target))


def run_episode(spec: EpisodeSpec, parts: EpisodeParts, max_decisions: int = 10_000) -> EpisodeResult:
    from policies.scripted import ScriptedPolicy

    env, composer = parts.env, parts.composer
    low = env.get_wrapper_attr("low") if hasattr(env, "get_wrapper_attr") else env
    t0 = time.perf_counter()
    steps, status, error = 0, "error", None
    goal = ""
    subgoals: list[dict] = []
    audit = {"decisions": 0, "matches_oracle": 0, "rewrites": 0, "rewrites_right": 0, "rewrites_wrong": 0,
             "rewrites_harmful": 0, "rewrites_off_slot": 0}
    history = HistoryAudit()
    wrong_rewrites: list[dict] = []
    assessment = Assessment()
    try:
        obs, info = env.reset(options={"episode": spec, "goal_style": parts.goal_style,
                                       "goal_seed": parts.streams.get("goal", parts.seed)})
        goal = info["goal"]
        spec = info.get("episode") or spec  # reset may have moved past an unusable scene
        video = info.get("video")
        composer_seed = parts.streams.get("composer", parts.seed)
        composer.reset(info["goal"], composer_seed, [] if video is None else list(video.front))
        # the official backend resolves a subgoal as the benchmark's executor would (envs/official/env.py)
        resolver = low if hasattr(low, "resolve") else ScriptedPolicy(low)
        # our envs run a subgoal in chunks: a text repeated from the previous decision continues the
        # motion it started, on the object it resolved to then (the executor does not re-resolve it);
        # the official envs run a whole option per decision, so each text is resolved anew there
        chunked = not hasattr(low, "resolve")
        running: dict[str, Any] = {}
        done = False
        while not done and len(subgoals) < max_decisions:
            oracle = low.oracle_subgoal()
            slot = low.unwrapped.history_slot()
            judge = getattr(slot, "accepts", None) or getattr(low.unwrapped, "decision_judge", lambda: None)()
            if parts.memory is not None and slot is not None:
                assessment.probe(low.unwrapped, parts.memory, low.unwrapped.clock)
            proposed = composer.propose(obs, info)
            if proposed is None:
                proposed = ""  # no proposal: the policy holds still this chunk
            # the texts of this decision are resolved as the executor resolves them when it starts
            # them, in the scene before the chunk runs (the official bridge snapshots its own)
            scene = resolver.scene() if hasattr(resolver, "scene") else None
            obs, _, terminated, truncated, info = env.step(proposed)
            executed = info.get("revised", proposed)
            choice_of = getattr(slot, "choice_of", None)
            accepts = judge  # the slot's own measure, or the task's for a decision outside a slot
            now: dict[str, Any] = {}

            def resolved(text: str):
                # the object a repeated text's motion started on, judged by this decision's slot
                if text not in now:
                    now[text] = running[text] if chunked and text in running else _resolve(resolver, text, scene)
                return _as_choice(now[text], choice_of)

            target = resolved(oracle)

            def is_right(text: str) -> bool:
                does = resolved(text)
                # the slot's own measure of a right step where it has one (a goal without an order), else the oracle's
                return accepts(does) if accepts is not None else does == target

            right = is_right(executed)
            running = {t: now[t] for t in (oracle, executed) if t in now}
            # the proposal itself is scored only where something reads it: a history decision or a rewrite
            proposal_right = (slot is not None or bool(info.get("rewritten"))) and is_right(proposed)
            if slot is not None and (proposed or executed):  # no proposal, no revision: nothing was decided
                history.add(right=right, proposal_right=proposal_right,
                            memory_read=bool(info.get("memory_read")),
                            memory_abstained=bool(info.get("memory_abstained")))
            audit["decisions"] += 1
            audit["matches_oracle"] += int(right)
            if info.get("rewritten"):
                # every rewrite is scored, at a history slot or not: a memory that rewrites a right
                # proposal into a wrong one anywhere is harmful, whatever the slots say
                audit["rewrites"] += 1
                audit["rewrites_right" if right else "rewrites_wrong"] += 1
                audit["rewrites_off_slot"] += slot is None
                audit["rewrites_harmful"] += (not right) and proposal_right
                if not right and len(wrong_rewrites) < WRONG_REWRITES_KEPT:
                    wrong_rewrites.append({"step": info["steps"], "oracle": oracle, "proposed": proposed,
                                           "executed": executed, "slot": slot is not None})
            if not subgoals or subgoals[-1]["executed"] != executed or subgoals[-1]["oracle"] != oracle:
                subgoals.append({"step": info["steps"], "oracle": oracle, "proposed": proposed, "executed": executed, "right": right})
            done = terminated or truncated
        status, steps, error = info["status"], info["steps"], info.get("error")
        if parts.memory is not None:
            assessment.probe(low.unwrapped, parts.memory, low.unwrapped.clock)
        if status == "ongoing":
            status, error = "error", f"stopped after {max_decisions} decisions without an outcome"
    except PolicyError as exc:
        status, error = "error", f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # a crash of any part is an error of this episode, never a fail
        status, error = "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"
    if status == "error" and not error:
        # every error row names its reason: a part that reports "error" without one is named instead
        last = f" (last subgoal {subgoals[-1]['executed']!r})" if subgoals else ""
        error = f"the env reported status 'error' without a reason after {steps} steps{last}"
    memory_diag: dict[str, Any] = {}
    if parts.memory is not None:
        try:
            memory_diag = dict(parts.memory.diagnostics())
        except Exception as exc:  # diagnostics must never lose the episode
            memory_diag = {"diagnostics_error": repr(exc)}
        memory_diag.update(audit)
        memory_diag["reads_correct"] = audit["rewrites_right"]
        memory_diag["reads_wrong"] = audit["rewrites_wrong"]
        memory_diag["wrong_reads"] = wrong_rewrites
        memory_diag["assessment"] = assessment.to_dict()
    timings = dict(env.get_wrapper_attr("timings"))
    return EpisodeResult(
        task=spec.task, split=spec.split, episode=spec.episode_idx, env_seed=spec.env_seed, seed=parts.seed,
        condition=parts.condition, difficulty=spec.difficulty, status=status, success=status == "success",
        steps=steps, error=error, wall_s=time.perf_counter() - t0, timings=timings, subgoals=subgoals,
        n_subgoals=len(subgoals), memory=memory_diag or {"audit": audit}, streams=dict(parts.streams),
        # the official envs seed an episode from the benchmark's metadata: no formula, no retry
        retry_offset=0 if parts.backend == "robomme" else spec.env_seed - base_seed(spec.task, spec.split, spec.episode_idx),
        policy_noise=list(getattr(parts.policy, "noise_events", None) or []), history_audit=history.to_dict(),
        goal_style=parts.goal_style, goal=goal, backend=parts.backend,
        proposals_held=list(getattr(composer, "held", None) or []),
        executor_profile=getattr(getattr(parts.policy, "profile", None), "name", "clean"),
        executor_events=list(getattr(parts.policy, "executor_events", None) or []),
        pick_retries=list(getattr(parts.policy, "pick_retries", None) or []),
    )
