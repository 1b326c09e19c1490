"""How much of a worker one student may use, and what their code really used.

Grades must not depend on the machine's load, the number of workers or an interruption, so what
a submission is charged is a number the load does not change:

- a run that finished: the CPU time its code used (the probe groups' processes as the sandbox's
  monitor reports them; the notebook kernel as :class:`DescendantCpu` measures it);
- a run a limit stopped: that limit (a probe group's CPU limit, whether the CPU limit or the
  wall clock struck first, which the load decides; a notebook's cell or notebook limit), never
  what the load let it use before;
- a run stopped on time and run again with more time (``grader.trusted.runs``): nothing, since
  the second run decides.

:class:`StudentBudget` caps these charges over all of a student's items (``--student-cpu``), so
the cap cuts at the same item every run; once it is spent, the items not yet run score 0 with a
reason in both languages, so that one student's infinite loops cannot hold a worker for a quarter
of an hour. Beside it, the wall-clock time a student's runs held the worker is capped too
(``--student-wall``, set well above what the CPU cap allows), so that a submission that sleeps
just under every limit cannot hold the worker longer either.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

from grader.trusted.verdicts import Finding

TICKS = os.sysconf("SC_CLK_TCK")


class StudentBudget:
    """Seconds one student may still be charged (see the module's docstring) and may still hold
    the worker (``wall_limit_s``); 0: no cap."""

    def __init__(self, limit_s: float, wall_limit_s: float = 0.0):
        self.limit_s = float(limit_s)
        self.wall_limit_s = float(wall_limit_s)
        self.used_s = 0.0
        self.held_s = 0.0
        self.skipped: list[str] = []  # what was not run because the budget was spent

    def left(self) -> float:
        """Seconds that may still be charged (infinite without a cap)."""
        return max(0.0, self.limit_s - self.used_s) if self.limit_s > 0 else float("inf")

    def wall_left(self) -> float:
        """Seconds the student's runs may still hold the worker (infinite without a cap)."""
        if self.wall_limit_s <= 0:
            return float("inf")
        return max(0.0, self.wall_limit_s - self.held_s)

    def spent(self) -> bool:
        return self.left() <= 0 or self.wall_left() <= 0

    def charge(self, seconds: float, held_s: float = 0.0) -> None:
        """Charge one run: ``seconds`` (its CPU time, or the limit that stopped it) against the
        cap, ``held_s`` (the wall-clock time it held the worker) against the wall cap."""
        self.used_s += seconds
        self.held_s += held_s

    def finding(self) -> Finding:
        if self.wall_left() <= 0 < self.left():
            return Finding(
                "student-wall-cap",
                f"Tu entrega agotó el tiempo total que se dedica a cada estudiante "
                f"({self.wall_limit_s:g} s de reloj, casi siempre esperas o pausas); este "
                "apartado no se llegó a ejecutar y vale 0. Quita las esperas y vuelve a entregar.",
                f"Your submission used up the total time given to each student "
                f"({self.wall_limit_s:g} s of wall-clock time, nearly always waits or sleeps); "
                "this item was not run and scores 0. Remove the waits and submit again.")
        return Finding(
            "student-cap",
            f"Tu entrega agotó el tiempo total de CPU que se dedica a cada estudiante "
            f"({self.limit_s:g} s, casi siempre por bucles que no terminan o esperas); este "
            "apartado no se llegó a ejecutar y vale 0. Corrige lo que tarda y vuelve a entregar.",
            f"Your submission used up the total CPU time given to each student "
            f"({self.limit_s:g} s, nearly always loops that never end, or waits); this item was "
            "not run and scores 0. Fix what takes so long and submit again.")

    def summary(self) -> dict:
        return {"limit_s": self.limit_s, "used_s": round(self.used_s, 2),
                "wall_limit_s": self.wall_limit_s, "held_s": round(self.held_s, 2),
                "skipped": self.skipped}


def _children(pid: int) -> list[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found = []
    for task in tasks:
        with contextlib.suppress(OSError):
            found += [int(p) for p in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return found


def _cpu_seconds(pid: int) -> float | None:
    """User + system time of one process (its threads included), from ``/proc``."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


class DescendantCpu:
    """The CPU time used by the processes this one starts while it is active (a notebook
    kernel, its jail and proxy), sampled from ``/proc`` so that a kernel killed at the end still
    counts. The long-lived processes in ``exclude`` (the worker's zygote and kernel server) are
    not counted themselves; what they fork while this is active is.
    """

    def __init__(self, exclude: set[int] = frozenset()):
        self.exclude = set(exclude)
        self.seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> DescendantCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _sample(self) -> None:
        stack = _children(os.getpid())
        while stack:
            pid = stack.pop()
            cpu = None if pid in self.exclude else _cpu_seconds(pid)
            if cpu is not None:
                self.seen[pid] = max(cpu, self.seen.get(pid, 0.0))
            stack += _children(pid)

    def _watch(self) -> None:
        while True:
            self._sample()
            if self._stop.wait(0.2):  # seconds between samples
                return

    @property
    def seconds(self) -> float:
        return round(sum(self.seen.values()), 2)
