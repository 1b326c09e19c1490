"""The self-check's child started from a warm process, for the tests that run it hundreds of times.

``minimodel check`` starts a fresh interpreter per lab (``minimodel.selfcheck.runner.spawn``),
and most of its second is spent importing PyTorch. The tests that ask what the self-check says
about one copy of the reference per classic mistake (hundreds of copies) start the same child,
:func:`minimodel.selfcheck.runner._child`, forked instead from a server that imported PyTorch and
NumPy once and nothing of the course (``minimodel.positional`` is imported in the child, after
``MINIMODEL_IMPL`` is set, as in a fresh interpreter). The child gets what ``spawn`` gives it: a
session of its own, no standard input or output, the caller's standard error file, environment
and event pipe; the parent reads it through the same code. What is read only at start-up
(PyTorch's thread settings) is the server's. ``tests/test_selfcheck.py`` keeps the real
``spawn``: time-outs, exits and crashes are tested there.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from multiprocessing.connection import Connection

from minimodel.selfcheck import runner

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["numpy", "torch"])


def _child(lab_id: str, events: Connection, names: list[str], env: dict,
           stderr: Connection) -> None:
    """In the forked child: what ``spawn`` sets up, then the self-check's child."""
    os.setsid()
    runner._die_with_parent()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.dup2(stderr.fileno(), 2)
    os.environ.clear()
    os.environ.update(env)
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))  # read at start-up
    runner._child(lab_id, os.dup(events.fileno()), names)


class WarmChild:
    """A forked child, seen through the part of ``subprocess.Popen`` the runner uses."""

    def __init__(self, process) -> None:
        self.process = process
        self.pid = process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self.process.join(timeout)
        if self.process.exitcode is None:
            raise subprocess.TimeoutExpired("self-check child", timeout)
        return self.process.exitcode

    def kill(self) -> None:
        self.process.kill()

    def send_signal(self, signum: int) -> None:
        os.kill(self.pid, signum)


def spawn(lab_id: str, write_fd: int, names: list[str], env: dict, stderr) -> WarmChild:
    """``runner.spawn``'s child, forked from the warm server."""
    events, error = Connection(os.dup(write_fd)), Connection(os.dup(stderr.fileno()))
    try:
        process = _CONTEXT.Process(target=_child, args=(lab_id, events, names, dict(env), error),
                                   daemon=True)
        process.start()
    finally:
        events.close()
        error.close()
    return WarmChild(process)
