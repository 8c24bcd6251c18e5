"""Subgoal composers that run on a CPU: the oracle ceiling and the memoryless baseline.

``OracleComposer`` returns the env's ground-truth grounded subgoal.

``HistoryBlindComposer`` is the no-memory baseline. Principle: a predictor without memory can
do everything the current view allows, but every decision that depends on the past is a guess.
It takes the oracle's subgoal and, where the task declares a history-dependent slot
(``task.history_slot()``: which container, which cube, which target, repeat or stop, which
direction...), replaces it with a uniform draw among the alternatives the current view offers,
with probability ``p``. The draw is made when the oracle subgoal changes and held while it stays
the same (a real predictor would keep proposing the same thing from the same view). The draws come
from the episode's composer stream, derived from (run seed, task, split, episode), so the baseline is
deterministic, every episode draws afresh, and ``memory`` sees exactly the proposals ``no-memory`` makes.

``PriorComposer`` is the best memoryless baseline: the same, but at a slot it chooses with a prior
fitted on ``train`` episodes from what the view and the goal show (:mod:`policies.slot_prior`)
instead of uniformly. With no prior (``prior=None``) it records, at every slot, which alternative
the oracle's subgoal is, while doing the oracle's choice: the fit's data (``scripts/fit_slot_prior.py``).

``LaggedComposer`` delivers another composer's proposal changes late, by a number of decisions drawn
per change, holding still meanwhile: the history-blind composer redraws exactly when the env's
subgoal checker moves on, so the *timing* of its proposals carries ground truth that a real
predictor queried at its own pace would not give; lagging them shows the memory does not use it.

The VLM composer (a real vision-language model) lives in ``policies/vlm.py``.
"""

from __future__ import annotations

import re

import numpy as np

from policies.base import Composer
from subgoals.grammar import points_in, without_ordinals


class OracleComposer(Composer):
    def __init__(self, env):
        self.env = env

    def reset(self, goal: str, seed: int, demo_frames) -> None:
        pass

    def propose(self, obs: dict, info: dict) -> str | None:
        return self.env.get_wrapper_attr("oracle_subgoal")()


class HistoryBlindComposer(Composer):
    def __init__(self, env, p: float = 1.0):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"history-blind probability must be in [0, 1], got {p!r}")
        self.env = env
        self.p = p
        self.rng = np.random.default_rng(0)
        self._key: tuple | None = None
        self._held: str | None = None
        self.draws: list[dict] = []

    def reset(self, goal: str, seed: int, demo_frames) -> None:
        # ``seed`` is the episode's composer stream (experiments/loop/streams.py): different in every
        # episode, the same for every condition that shares this composer
        self.rng = np.random.default_rng(seed)
        self._key, self._held, self.draws = None, None, []

    def propose(self, obs: dict, info: dict) -> str | None:
        oracle = self.env.get_wrapper_attr("oracle_subgoal")()
        key = (info.get("subgoal_index"), oracle)
        if key != self._key:  # decided when the oracle subgoal changes, held while it stays
            self._key = key
            self._held = oracle
            self._decide(self.env.unwrapped.history_slot(), oracle, info)
        return self._held

    def _decide(self, slot, oracle: str, info: dict) -> None:
        """At a history slot, replace the held subgoal by a uniform draw among its alternatives."""
        if slot is not None and len(slot.alternatives) > 1 and self.rng.random() < self.p:
            # the task words its alternatives with the true count ("... for the fourth time");
            # a memoryless predictor cannot know it, so the drawn subgoal carries no position word
            self._held = without_ordinals(slot.alternatives[int(self.rng.integers(len(slot.alternatives)))])
            self.draws.append({"step": info.get("steps"), "slot": slot.name, "oracle": oracle,
                               "drawn": self._held, "n_options": len(slot.alternatives)})


def visible_order(alternatives) -> tuple[str, ...]:
    """A slot's distinct alternatives in an order a predictor could see: by what they do (the text
    with its points blanked: "pick up the cube" before "press the button"), then by where, top to
    bottom and left to right in the image. The task's own order follows its layout lists, which the
    view does not show (the visited target may sit at a favoured index), so a prior over it would
    learn the env's bookkeeping rather than the scene."""
    def key(text: str):
        pts = points_in(text)
        return (re.sub(r"<[^>]*>", "<>", text), *(pts[0].as_tuple() if pts else (-1, -1)))

    return tuple(sorted(dict.fromkeys(alternatives), key=key))


class PriorComposer(HistoryBlindComposer):
    """At a history slot, the alternative a predictor without memory would best choose (module docstring)."""

    def __init__(self, env, prior=None, mode: str | None = None):
        super().__init__(env, p=1.0)
        self.prior, self.mode = prior, mode
        u = env.unwrapped
        self.task = getattr(u, "TASK", None) or getattr(u, "task_name", "")  # ours, or the official envs' bridge
        self._number: int | None = None
        self._resolver = None

    def reset(self, goal: str, seed: int, demo_frames) -> None:
        from policies.slot_prior import goal_number

        super().reset(goal, seed, demo_frames)
        self._number = goal_number(goal)

    def _right(self, options: tuple[str, ...], oracle: str) -> int | None:
        """The position of the option that does what the oracle's subgoal does, if any."""
        if self._resolver is None:  # the official envs resolve a text as the benchmark's executor would
            from policies.scripted import ScriptedPolicy

            u = self.env.unwrapped
            self._resolver = u if hasattr(u, "resolve") else ScriptedPolicy(self.env)
        does = self._resolver.resolve(oracle)
        for i, alt in enumerate(options):
            if alt == oracle or (does is not None and self._resolver.resolve(alt) == does):
                return i
        return None

    def _decide(self, slot, oracle: str, info: dict) -> None:
        from policies.slot_prior import slot_key

        # the choices the view offers: a slot may repeat one to weight the blind draw (StopCube:
        # one press to R - 1 "remain static" for R arrivals left), and how often says how many
        # arrivals passed, which no memoryless predictor sees
        options = visible_order(slot.alternatives) if slot is not None else ()
        if len(options) < 2:
            return
        n = len(options)
        skey = slot_key(slot.name, n, self._number)
        if self.prior is None:  # recording the fit's data: the oracle's choice, and where it sits
            chosen = self._right(options, oracle)
        else:
            chosen = self.prior.choose(self.task, skey, n, self.rng, self.mode)
            self._held = without_ordinals(options[chosen])
        self.draws.append({"step": info.get("steps"), "slot": slot.name, "key": skey, "n_options": n,
                           "oracle": oracle, "chosen": chosen, "drawn": self._held})


class LaggedComposer(Composer):
    """``inner``'s proposals, each change delivered ``0..max_lag`` decisions late (uniform, from a
    generator derived from the episode's composer stream, apart from ``inner``'s own draws); while a
    change is held back the composer proposes nothing, so the policy holds still."""

    def __init__(self, inner: Composer, max_lag: int):
        if isinstance(max_lag, bool) or not isinstance(max_lag, int) or max_lag < 0:
            raise ValueError(f"max_lag must be a whole number of decisions >= 0, got {max_lag!r}")
        self.inner, self.max_lag = inner, max_lag
        self.rng = np.random.default_rng(0)
        self._last: str | None = None
        self._wait = 0
        self.held: list[dict] = []
        """One entry per change held back: the decision's step, the proposal, the decisions it waited."""

    def reset(self, goal: str, seed: int, demo_frames) -> None:
        self.inner.reset(goal, seed, demo_frames)
        self.rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x1A6]))
        self._last, self._wait, self.held = None, 0, []

    def propose(self, obs: dict, info: dict) -> str | None:
        proposal = self.inner.propose(obs, info)
        if proposal != self._last:
            self._last = proposal
            self._wait = int(self.rng.integers(0, self.max_lag + 1))
            if self._wait:
                self.held.append({"step": info.get("steps"), "proposal": proposal, "lag": self._wait})
        if self._wait:
            self._wait -= 1
            return None
        return proposal
