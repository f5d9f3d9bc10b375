"""Progress lines, so that a long job's log shows how far it is while it runs.

A :class:`Progress` writes one line when it starts, then at most one every
``GAUGELAB_PROGRESS_SECONDS`` seconds of wall time (default 10), and one when it finishes, each
flushed to standard error (which every job's script sends to its log, line-buffered):

    progress zoo: 12/54 runs done, step 4000/20000, 65 s elapsed, about 260 s left

Between lines it only reads the clock: it touches no tensor and no random state, so a record is
the same byte for byte with it or without it.
"""

from __future__ import annotations

import os
import sys
import time


def interval() -> float:
    """Seconds between two lines: ``GAUGELAB_PROGRESS_SECONDS``, default 10."""
    try:
        return max(0.0, float(os.environ.get("GAUGELAB_PROGRESS_SECONDS", "10")))
    except ValueError:
        return 10.0


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds} s" if seconds < 120 else f"{seconds // 60} min {seconds % 60:02d} s"


class Progress:
    """Progress of ``runs`` runs of ``steps`` steps each. ``batched``: every run advances at
    once, so step t of ``steps`` is the job's fraction done (the estimate is an upper bound when
    runs stop early); otherwise the runs go one after another."""

    def __init__(self, what: str, runs: int, steps: int, *, batched: bool = True):
        self.what, self.runs, self.steps, self.batched = what, max(runs, 1), max(steps, 1), batched
        self.every = interval()
        self.start = self.last = time.monotonic()
        self._write(0, 0, self.start)

    def update(self, step: int, done: int) -> None:
        """At step ``step`` with ``done`` runs finished: a line if the interval has passed."""
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            self._write(step, done, now)

    def finish(self, step: int | None = None, done: int | None = None) -> None:
        """The last line: every run done (or ``done``), at ``step`` (default: the last)."""
        self._write(self.steps if step is None else step, self.runs if done is None else done, time.monotonic())

    def _fraction(self, step: int, done: int) -> float:
        if self.batched:
            return 1.0 if done >= self.runs else step / self.steps
        return min(1.0, (done * self.steps + step) / (self.runs * self.steps))

    def _write(self, step: int, done: int, now: float) -> None:
        elapsed = now - self.start
        fraction = self._fraction(step, done)
        if fraction >= 1.0:
            left = "finished"
        elif fraction > 0.0:
            left = f"about {_duration(elapsed * (1.0 - fraction) / fraction)} left"
        else:
            left = "starting"
        print(f"progress {self.what}: {done}/{self.runs} runs done, step {step}/{self.steps}, "
              f"{_duration(elapsed)} elapsed, {left}", file=sys.stderr, flush=True)
