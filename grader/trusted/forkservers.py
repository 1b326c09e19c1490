"""The long-lived sandbox processes of a grading worker, and their clients.

- :class:`Zygote` (``grader/child/zygote.py``) loaded NumPy and PyTorch once and forks one
  limited process per probe group, each in the sandbox of the submission it is given
  (:func:`sandbox_config`);
- :class:`KernelServer` (``grader/child/kernel_jail.py serve``) loaded PyTorch, matplotlib and
  ipykernel once and forks every notebook's sandboxed kernel (``grader.trusted.nbexec``).

Both run as root, are started while the worker waits for its first student, are charged to no
student, die with the worker and are started again if they die.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from grader.trusted.sandbox import (
    Capabilities,
    Scratch,
    copy_child_files,
    filesystem_view,
    sandbox_env,
    sandbox_uid,
)
from grader.trusted.status import Report


class ZygoteError(RuntimeError):
    """The sandbox's zygote could not start or stopped answering."""


def sandbox_config(scratch: Scratch, caps: Capabilities, *, extra_hide: list[Path],
                   cuda: bool) -> dict:
    """The sandbox of one submission, sent with each probe group to the zygote."""
    view = filesystem_view(scratch.root, extra_hide)
    return {
        **view,
        "namespaces": caps.namespaces,
        "pid_namespace": caps.pid_namespace,
        "ipc_namespace": caps.ipc_namespace,
        "cgroup": caps.cgroup,
        "drop_privileges": caps.drop_privileges,
        "uid": sandbox_uid(),
        "gid": sandbox_uid(),
        "course_src": str(scratch.course_src),
        "items_dir": str(scratch.items),
        "env": sandbox_env(scratch.items, cuda=cuda),
        "audit_guard": view["hide"] if not caps.namespaces else [],
    }


class Zygote:
    """Client of ``grader/child/zygote.py``: one per grading worker, serving every submission.

    The zygote imports NumPy and PyTorch once; each probe group it forks carries its own
    submission's sandbox (see :func:`sandbox_config`).
    """

    SCRIPT = ("zygote.py",)  # the child script and the arguments before its configuration

    def __init__(self, home: Path, log_path: Path, *, cuda: bool = False):
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        os.chmod(home, 0o700)  # the kernel server's socket lives here: root only
        runner = home / "runner"
        copy_child_files(runner)
        self.script = runner / self.SCRIPT[0]
        self.config_path = home / f"{self.script.stem}.json"
        self.config_path.write_text(json.dumps(self.config(cuda)))
        self.log_path = log_path
        self.process: subprocess.Popen | None = None
        self._buffer = b""
        self.ready = False

    def config(self, cuda: bool) -> dict:
        return {"env": sandbox_env(self.home, cuda=cuda)}

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ensure(self) -> None:
        """Started and ready: started (again if it died; unless :meth:`launch` already did) and
        waited for until it says it is ready."""
        if self.alive() and self.ready:
            return
        if not self.alive():
            self.launch()
        hello = self._read_line(120.0)
        if not hello or not hello.get("ready"):
            self.kill()
            raise ZygoteError(f"sandbox did not start: {hello!r}")
        self.ready = True

    def launch(self) -> None:
        """Start the zygote without waiting: it imports its libraries while the caller works."""
        self.ready = False
        with open(self.log_path, "ab") as log:  # the child keeps its own copy
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-B", str(self.script), *self.SCRIPT[1:],
                 str(self.config_path)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                start_new_session=True, cwd=str(self.home),
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        self._buffer = b""

    def _read_line(self, timeout: float) -> dict | None:
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return None

    def run(self, request: dict, timeout: float) -> dict:
        """Send one probe group; return the monitor's report (``grader-error`` if no answer).

        A zygote that died is started again first."""
        try:
            self.ensure()
        except ZygoteError as error:
            return {"status": Report.GRADER_ERROR, "detail": str(error)}
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError) as error:
            return {"status": Report.GRADER_ERROR, "detail": repr(error)}
        reply = self._read_line(timeout)
        if reply is None:
            self.kill()
            return {"status": Report.GRADER_ERROR, "detail": "sandbox stopped answering"}
        return reply

    def close(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            self.process.stdin.close()
            self.process.wait(timeout=10)
        self.kill()

    def kill(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()


class KernelServer(Zygote):
    """Client of the kernel server (``grader/child/kernel_jail.py serve``): one per grading
    worker. It loads PyTorch, IPython and ipykernel once and forks every notebook's sandboxed
    kernel, so a notebook does not pay for importing them again."""

    SCRIPT = ("kernel_jail.py", "serve")

    @property
    def socket_path(self) -> Path:
        return self.home / "kernels.sock"

    def config(self, cuda: bool) -> dict:
        return {**super().config(cuda), "socket": str(self.socket_path)}
