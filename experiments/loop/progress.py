"""Console progress for a run: a tqdm bar with the running success rate, and one line per episode."""

from __future__ import annotations

import sys
from typing import TextIO

from experiments.loop.records import EpisodeResult


class Progress:
    """Counts finished episodes; ``update`` advances the bar and prints the episode's status line."""

    def __init__(self, total: int, *, lines: bool = True, bar: bool | None = None, file: TextIO | None = None):
        from tqdm import tqdm

        self.file = file or sys.stderr
        self.lines = lines
        self.n = self.successes = self.errors = 0
        disable = (not self.file.isatty()) if bar is None else (not bar)
        self._bar = tqdm(total=total, unit="ep", dynamic_ncols=True, file=self.file, disable=disable)

    def update(self, r: EpisodeResult) -> None:
        self.n += 1
        self.successes += bool(r.success)
        self.errors += r.status == "error"
        if self.lines:
            msg = f"[{self.n}/{self._bar.total}] {status_line(r)}"
            if self._bar.disable:
                print(msg, file=sys.stdout, flush=True)
            else:
                self._bar.write(msg, file=sys.stdout)
        valid = self.n - self.errors
        rate = f"{self.successes / valid:.0%}" if valid else "-"
        self._bar.set_postfix_str(f"success {rate} ({self.successes}/{valid}) errors {self.errors}", refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()


def status_line(r: EpisodeResult) -> str:
    """``BinFill ep3 s7 memory: success in 412 steps (38.1 s)`` (and the first line of an error)."""
    head = f"{r.task} ep{r.episode} s{r.seed} {r.condition}: {r.status}"
    if r.status == "error":
        first = (r.error or "").strip().splitlines()
        return f"{head}: {first[0][:200] if first else 'unknown error'}"
    return f"{head} in {r.steps} steps ({r.wall_s:.1f} s)"
