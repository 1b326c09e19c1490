"""Start a Jupyter kernel inside the sandbox (notebook labs).

The grader's kernel spec runs ``python -I kernel_jail.py <config.json> <connection_file>`` as
root. The jail enters the sandbox (the same file-system view and network namespace as the
zygote), moves into a new PID namespace and forks the kernel as its PID 1; the kernel gets its own
``/proc``, the limits, the unprivileged user and a scrubbed environment, then becomes
``python -m ipykernel_launcher``. The kernel talks to the grader over Unix sockets in the scratch
folder (``transport = ipc``), so it needs no network at all.

The jail stays as the kernel's parent: it forwards interrupts, drains the kernel's own stdout and
stderr (keeping the first kilobytes in ``kernel-output.log``), and when the grader kills it or
goes away, the kernel dies with it (parent-death signal), which ends its whole namespace.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves it out
import isolation  # noqa: E402


def _kernel(config: dict, connection_file: str, out_w: int) -> None:
    """PID 1 of the kernel's namespace: finish the sandbox, then become the kernel."""
    try:
        os.setsid()
        if config.get("pid_namespace"):
            isolation.unshare(isolation.CLONE_NEWNS)
            isolation.mount_private_proc()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        isolation.close_other_fds({0, 1, 2})
        workdir = config["workdir"]
        os.chdir(workdir)
        if config.get("drop_privileges"):
            os.chown(connection_file, config["uid"], config["gid"])
        isolation.apply_limits(config.get("limits", {}), relative_memory=False)
        if config.get("drop_privileges"):
            isolation.drop_privileges(config["uid"], config["gid"])
        isolation.set_parent_death_signal()
        env = dict(config["env"])
        env["HOME"] = workdir
        argv = [config["python"], "-m", "ipykernel_launcher", "-f", connection_file]
        os.execve(config["python"], argv, env)
    except BaseException as error:  # noqa: BLE001
        try:
            os.write(2, f"kernel jail: {error!r}\n".encode())
        finally:
            os._exit(72)


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as handle:
        config = json.load(handle)
    connection_file = sys.argv[2]
    isolation.set_parent_death_signal()
    parent = os.getppid()
    os.umask(0o022)
    applied = isolation.enter(config)
    if config.get("pid_namespace") and applied["files"]:
        isolation.unshare(isolation.CLONE_NEWPID)
    else:
        config["pid_namespace"] = False
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        _kernel(config, connection_file, out_w)
    os.close(out_w)

    def forward(signum, _frame):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL if signum == signal.SIGTERM else signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT):
        signal.signal(signum, forward)
    keep = int(config.get("output_kb", 64)) * 1024
    written = 0
    log = open(os.path.join(config["workdir"], "kernel-output.log"), "wb")  # noqa: SIM115
    os.set_blocking(out_r, False)
    status = None
    eof = False
    while status is None:
        ready = []
        if eof:
            time.sleep(0.2)
        else:
            with contextlib.suppress(InterruptedError):
                ready, _, _ = select.select([out_r], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(out_r, 1 << 16)
            except BlockingIOError:
                chunk = None
            if chunk == b"":
                eof = True
            elif chunk and written < keep:
                log.write(chunk[: keep - written])
                written += len(chunk[: keep - written])
                log.flush()
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            status = wait_status
        elif os.getppid() != parent:  # the grader is gone: take the kernel with us
            os.kill(pid, signal.SIGKILL)
    log.close()
    return os.waitstatus_to_exitcode(status) if status is not None else 1


if __name__ == "__main__":
    sys.exit(main())
