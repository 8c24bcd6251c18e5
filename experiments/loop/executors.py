"""Turn a config into work units and run them: in-process, in a local process pool, or on Ray.

A unit is one episode, ``WorkUnit(task, split, episode, condition, seed)``; running it is a call
``fn(unit, cfg) -> EpisodeResult``. ``fn`` defaults to ``experiments.loop.unit.run_unit`` (imported where
the unit runs, so the driver need not load the simulator); tests pass small functions instead.

Errors are data: an exception inside ``fn`` becomes a row with ``status="error"`` and the exception
text, and the run goes on. A worker process that dies (segfault, OOM kill, ``kill -9``) takes down
every episode in flight in a process pool; those episodes are run again one at a time in a fresh
pool, and the one that kills its worker again is recorded as ``error: worker died``.

Results reach the driver's ``on_result`` callback as they complete (the driver writes them); the
order of completion may differ between runs, the rows do not.

>>> units = pending_units(cfg, finished_keys(cfg.execution.out))                  # doctest: +SKIP
>>> LocalExecutor(workers=4).run(units, cfg, on_result=writer.write)   # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import importlib.util
import multiprocessing as mp
import os
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Protocol

from envs.episodes import episode_spec
from experiments.loop.config import ExperimentConfig
from experiments.loop.records import EpisodeResult, WorkUnit

UnitFn = Callable[[WorkUnit, ExperimentConfig], EpisodeResult]
OnResult = Callable[[EpisodeResult], None]

DEFAULT_UNIT_FN = "experiments.loop.unit:run_unit"
MAX_ERROR_CHARS = 4000


# --- units -----------------------------------------------------------------------------------------
def make_units(cfg: ExperimentConfig) -> list[WorkUnit]:
    """Every unit of the config, ordered task x condition x seed x episode (as given)."""
    return [
        WorkUnit(task=t, split=cfg.scope.split, episode=e, condition=c, seed=s)
        for t in cfg.task_list
        for c in cfg.condition_names
        for s in cfg.scope.seeds
        for e in cfg.episode_list
    ]


def pending_units(cfg: ExperimentConfig, finished: Iterable[tuple] = ()) -> list[WorkUnit]:
    """:func:`make_units` minus the units whose key is in ``finished``."""
    done = set(finished)
    return [u for u in make_units(cfg) if u.key not in done]


# --- the unit function --------------------------------------------------------------------------
@dataclass(frozen=True)
class UnitFnRef:
    """A picklable ``module:function`` reference, imported in whichever process calls it.

    ``paths`` are added to ``sys.path`` first, so a function defined next to the tests also imports
    in a Ray worker that did not inherit the driver's path.
    """

    spec: str
    paths: tuple[str, ...] = ()

    def resolve(self) -> UnitFn:
        module, sep, name = self.spec.partition(":")
        if not sep or not module or not name:
            raise ValueError(f"unit function {self.spec!r} must be written module:function")
        for p in self.paths:
            if p not in sys.path:
                sys.path.append(p)
        obj: Any = importlib.import_module(module)
        for part in name.split("."):
            obj = getattr(obj, part)
        if not callable(obj):
            raise ValueError(f"unit function {self.spec!r} is not callable")
        return obj

    def __call__(self, unit: WorkUnit, cfg: ExperimentConfig) -> EpisodeResult:
        return self.resolve()(unit, cfg)

    def check(self) -> None:
        """Raise ``ValueError`` if the module cannot be found (without importing it)."""
        module = self.spec.partition(":")[0]
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ValueError(f"unit function module {module!r} (from {self.spec!r}) cannot be imported")


def resolve_unit_fn(fn: UnitFn | str | None = None) -> UnitFn:
    """A callable that can be sent to other processes: ``None`` is ``experiments.loop.unit:run_unit``;
    a string is ``module:function``; a module-level function becomes a reference to itself."""
    if fn is None:
        fn = DEFAULT_UNIT_FN
    paths = tuple(p for p in sys.path if p and os.path.isdir(p))
    if isinstance(fn, str):
        return UnitFnRef(fn, paths)
    if isinstance(fn, UnitFnRef):
        return fn
    module, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if module and module != "__main__" and "<" not in qual:
        return UnitFnRef(f"{module}:{qual}", paths)
    return fn  # a lambda or closure: fine in-process, and Ray pickles it by value


def run_one(fn: UnitFn, unit: WorkUnit, cfg: ExperimentConfig) -> EpisodeResult:
    """Run one unit; never raises (except on Ctrl-C): failures become ``status="error"`` rows."""
    t0 = time.perf_counter()
    try:
        r = fn(unit, cfg)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - SystemExit from a unit is an error row too
        return error_result(unit, _exception_text(e), time.perf_counter() - t0)
    wall = time.perf_counter() - t0
    try:
        r = _coerce(r, unit)
    except (TypeError, ValueError) as e:
        return error_result(unit, f"{type(e).__name__}: {e}", wall)
    if not r.wall_s:
        r.wall_s = wall
    return r


def _coerce(r: Any, unit: WorkUnit) -> EpisodeResult:
    if isinstance(r, dict):
        r = EpisodeResult.from_dict(r)
    if not isinstance(r, EpisodeResult):
        raise TypeError(f"unit function returned {type(r).__name__}, expected EpisodeResult")
    if tuple(r.key) != unit.key:
        raise ValueError(f"unit function returned the row for {r.key}, expected {unit.key}")
    if r.status not in ("success", "fail", "timeout", "error"):
        raise ValueError(f"unit function returned status {r.status!r}")
    return r


def error_result(unit: WorkUnit, message: str, wall_s: float = 0.0) -> EpisodeResult:
    """The row of a unit that did not finish: ``status="error"``, the message in ``error``."""
    try:
        spec = episode_spec(unit.task, unit.episode, unit.split)
        env_seed, difficulty = spec.env_seed, spec.difficulty
    except Exception:  # noqa: BLE001 - an error row must be writable whatever the unit
        env_seed, difficulty = -1, "unknown"
    return EpisodeResult(
        task=unit.task,
        split=unit.split,
        episode=unit.episode,
        env_seed=env_seed,
        seed=unit.seed,
        condition=unit.condition,
        difficulty=difficulty,
        status="error",
        success=False,
        steps=0,
        error=message[:MAX_ERROR_CHARS],
        wall_s=wall_s,
    )


def _exception_text(e: BaseException) -> str:
    head = f"{type(e).__name__}: {e}"
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return f"{head}\n{tb[-(MAX_ERROR_CHARS - len(head) - 1):]}"


# --- executors ----------------------------------------------------------------------------------
def renderer_threads(workers: int) -> int:
    """Software-Vulkan (lavapipe) threads per worker: the usable CPUs shared out among the workers.

    lavapipe starts one rasteriser thread per CPU in every process; ``workers`` processes on as many
    CPUs would otherwise run ``workers x CPUs`` rasteriser threads that pre-empt each other.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, cpus // max(1, workers))


def _init_worker(lp_threads: int) -> None:
    # before the worker creates its first SAPIEN render device; a value the user set is kept
    os.environ.setdefault("LP_NUM_THREADS", str(lp_threads))


class Executor(Protocol):
    def run(self, units: list[WorkUnit], cfg: ExperimentConfig, on_result: OnResult) -> list[EpisodeResult]: ...


class LocalExecutor:
    """In-process when ``workers == 1``; otherwise a spawn-context ``ProcessPoolExecutor``.

    Args:
        workers: episodes run at once.
        fn: the unit function (see :func:`resolve_unit_fn`).
        max_units_per_worker: replace a worker process after this many units (0: never).
    """

    def __init__(self, workers: int = 1, fn: UnitFn | str | None = None, max_units_per_worker: int = 0):
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = workers
        self.fn = resolve_unit_fn(fn)
        self.max_units_per_worker = max_units_per_worker

    def run(self, units: list[WorkUnit], cfg: ExperimentConfig, on_result: OnResult) -> list[EpisodeResult]:
        if not units:
            return []
        if self.workers == 1:
            out = []
            for u in units:
                r = run_one(self.fn, u, cfg)
                on_result(r)
                out.append(r)
            return out
        return self._run_pool(units, cfg, on_result)

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=mp.get_context("spawn"),
            max_tasks_per_child=self.max_units_per_worker or None,
            initializer=_init_worker,
            initargs=(renderer_threads(self.workers),),
        )

    def _run_pool(self, units: list[WorkUnit], cfg: ExperimentConfig, on_result: OnResult) -> list[EpisodeResult]:
        queue: deque[WorkUnit] = deque(units)
        # Units that were in flight when a worker died. Each is run again alone, so the one that
        # kills its worker is known and the others still get their real outcome.
        suspects: deque[WorkUnit] = deque()
        results: list[EpisodeResult] = []
        pool = self._new_pool()

        def emit(r: EpisodeResult) -> None:
            on_result(r)
            results.append(r)

        try:
            while queue or suspects:
                if suspects:
                    u = suspects.popleft()
                    try:
                        r = pool.submit(run_one, self.fn, u, cfg).result()
                    except BrokenProcessPool as e:
                        r = error_result(u, f"worker died: the process running this episode exited ({e})")
                        pool = self._replace(pool)
                    except Exception as e:  # noqa: BLE001 - e.g. a result that does not pickle
                        r = error_result(u, _exception_text(e))
                    emit(r)
                    continue

                inflight: dict[Any, WorkUnit] = {}
                broken = False

                def fill() -> bool:
                    # keep every worker busy; False once the pool turns out to be broken
                    while queue and len(inflight) < self.workers:
                        u = queue.popleft()
                        try:
                            inflight[pool.submit(run_one, self.fn, u, cfg)] = u
                        except BrokenProcessPool:
                            suspects.append(u)
                            return False
                    return True

                broken = not fill()
                while inflight:
                    done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                    for f in done:
                        u = inflight.pop(f)
                        try:
                            r = f.result()
                        except BrokenProcessPool:
                            suspects.append(u)
                            broken = True
                            continue
                        except Exception as e:  # noqa: BLE001
                            r = error_result(u, _exception_text(e))
                        emit(r)
                    if not broken:
                        broken = not fill()
                if broken:
                    pool = self._replace(pool)
        except BaseException:
            _terminate(pool)
            raise
        pool.shutdown(wait=True)
        return results

    def _replace(self, pool: ProcessPoolExecutor) -> ProcessPoolExecutor:
        _terminate(pool)
        return self._new_pool()


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop our own pool's worker processes now (on abort, or after one of them died)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)


class RayExecutor:
    """Run units as Ray tasks; the driver writes each result as it completes.

    Every node of a multi-machine cluster needs this repository installed in the same environment
    (or a ``runtime_env`` given to ``ray start``); on a local cluster nothing extra is needed.

    Args:
        address: cluster address; None starts a local cluster with ``num_cpus`` CPUs.
        num_cpus: CPUs of the local cluster (ignored when joining one).
        fn: the unit function (see :func:`resolve_unit_fn`).
        max_in_flight: tasks submitted ahead of completion (default: twice the cluster's CPUs).
    """

    def __init__(self, address: str | None = None, num_cpus: int = 1, fn: UnitFn | str | None = None, max_in_flight: int | None = None):
        self.address = address
        self.num_cpus = num_cpus
        self.fn = resolve_unit_fn(fn)
        self.max_in_flight = max_in_flight

    def run(self, units: list[WorkUnit], cfg: ExperimentConfig, on_result: OnResult) -> list[EpisodeResult]:
        if not units:
            return []
        import ray

        started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = dict(address=self.address, include_dashboard=False, configure_logging=False)
            if self.address is None:
                kwargs["num_cpus"] = self.num_cpus
            ray.init(**kwargs)
            started = True
        queue = deque(units)
        inflight: dict[Any, WorkUnit] = {}
        results: list[EpisodeResult] = []
        try:
            # max_retries=0: a unit whose worker dies is recorded, not silently run twice
            task = ray.remote(num_cpus=1, max_retries=0)(run_one)
            cap = self.max_in_flight or max(1, 2 * int(ray.cluster_resources().get("CPU", self.num_cpus)))
            while queue or inflight:
                while queue and len(inflight) < cap:
                    u = queue.popleft()
                    inflight[task.remote(self.fn, u, cfg)] = u
                done, _ = ray.wait(list(inflight), num_returns=1)
                for ref in done:
                    u = inflight.pop(ref)
                    try:
                        r = ray.get(ref)
                    except ray.exceptions.RayTaskError as e:
                        r = error_result(u, f"ray task failed: {e}")
                    except ray.exceptions.RayError as e:  # worker or node died, task cancelled...
                        r = error_result(u, f"worker died: {type(e).__name__}: {e}")
                    on_result(r)
                    results.append(r)
            return results
        except BaseException:
            for ref in inflight:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001 - best effort on the way out
                    pass
            raise
        finally:
            if started:
                ray.shutdown()


def make_executor(cfg: ExperimentConfig, fn: UnitFn | str | None = None) -> LocalExecutor | RayExecutor:
    ex = cfg.execution
    if ex.executor == "ray":
        return RayExecutor(address=ex.ray_address, num_cpus=ex.workers, fn=fn)
    return LocalExecutor(workers=ex.workers, fn=fn, max_units_per_worker=ex.worker_max_units)
