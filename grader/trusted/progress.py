"""The progress line of a grading run, on a terminal or in a log."""

from __future__ import annotations

import time


class Progress:
    """``[#####.....] 12/40 students · 1 with problems · ETA 1m20s`` on a terminal."""

    def __init__(self, total: int, stream, enabled: bool):
        self.total, self.done, self.problems = total, 0, 0
        self.stream, self.enabled = stream, enabled and total > 0
        self.start = time.monotonic()
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.last_line = 0.0

    def update(self, problem: bool) -> None:
        self.done += 1
        self.problems += problem
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.done * (self.total - self.done)
        width = 24
        filled = int(width * self.done / self.total)
        text = (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} students · "
                f"{self.problems} with problems · ETA {duration(eta)}")
        if self.tty:
            self.stream.write("\r" + text + (" " * 4) + ("\n" if self.done == self.total else ""))
            self.stream.flush()
        elif self.done == self.total or time.monotonic() - self.last_line > 10:
            self.stream.write(text + "\n")
            self.stream.flush()
            self.last_line = time.monotonic()


def duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"
