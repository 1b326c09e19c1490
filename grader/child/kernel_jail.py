"""Jupyter kernels in the sandbox (notebook labs), forked from a server that loaded PyTorch once.

Three roles, one file:

- **The server** (``python -I -B kernel_jail.py serve <config.json>``), one per grading worker,
  started as root like the zygote. It imports NumPy, PyTorch, matplotlib, IPython and ipykernel
  (never any course or student code), says it is ready on its stdout and listens on a Unix
  socket in a root-only folder. Each connection gets a forked jail. It is also the worker's
  zygote (``zygote.answer``: the probe groups' requests come on its stdin), so one warm copy of
  the libraries serves both; only a CUDA run has a zygote of its own.
- **The proxy** (``python -I -S -B kernel_jail.py <config.json> <connection_file>``) is what the
  grader's kernel spec starts, so Jupyter's kernel manager has a process to watch, signal and
  kill. It asks the server for a kernel, passes on the signals it receives and exits with the
  kernel's exit code; how the kernel ended (that code, and the OOM kills the jail read in the
  kernel's control group) it writes to the config's ``ended`` file, in a folder only root can
  write, so that no exit code the kernel chooses reads as its memory limit. When it is killed
  its socket closes and the jail kills the kernel.
- **The jail**, forked by the server, enters the sandbox (the same file-system view, network and
  IPC namespaces as the zygote), makes the kernel's control group (``cgroup.create``: one memory
  and process-count limit for the kernel and all it forks), moves into a new PID namespace and
  forks the kernel as its PID 1; the kernel joins the control group, gets its own ``/proc``, the
  limits, the unprivileged user and a scrubbed environment, then
  runs ipykernel in place (nothing to import again). The kernel talks to the grader over Unix
  sockets in the scratch folder (``transport = ipc``), so it needs no network at all. The jail
  forwards interrupts, drains the kernel's own stdout and stderr (keeping the first kilobytes in
  ``kernel-output.log``), and when the proxy or the server goes away, the kernel dies with it
  (parent-death signal), which ends its whole namespace; the jail then kills what is left in the
  control group and removes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT)


def _kernel(config: dict, connection_file: str, out_w: int, group: list[str]) -> None:
    """PID 1 of the kernel's namespace: finish the sandbox, then run the kernel (never returns)."""
    import cgroup
    import isolation

    code = 72
    try:
        cgroup.join(group)
        if config.get("drop_privileges"):
            os.chown(connection_file, config["uid"], config["gid"])
        isolation.confine(config, out_w, config["workdir"], config.get("limits", {}),
                          relative_memory=False)
        sys.path[:0] = [p for p in config["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for signum in FORWARDED[1:]:
            signal.signal(signum, signal.SIG_DFL)
        sys.argv = [config["python"], "-f", connection_file]
        from ipykernel import kernelapp

        kernelapp.launch_new_instance(argv=sys.argv[1:])
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException as error:  # noqa: BLE001
        with contextlib.suppress(BaseException):
            os.write(2, f"kernel jail: {error!r}\n".encode())
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _read_line(conn: socket.socket) -> dict | None:
    """The first JSON line ``conn`` sends, or ``None`` when it closes before."""
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return None
        data += chunk
    return json.loads(data.split(b"\n", 1)[0])


def _exit_fd(pid: int) -> int | None:
    """A descriptor that turns readable when process ``pid`` exits (Linux 5.3's pidfd), or
    ``None`` where the platform has none (the jail then polls)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _jail(conn: socket.socket) -> int:
    """Forked by the server for one proxy: enter the sandbox, fork the kernel, watch it."""
    import cgroup
    import isolation

    isolation.set_parent_death_signal()
    conn.settimeout(30)
    request = _read_line(conn)
    if request is None:
        raise ConnectionError("the proxy went away before asking")
    conn.settimeout(None)
    with open(request["config"], encoding="utf-8") as handle:
        config = json.load(handle)
    connection_file = request["connection_file"]
    parent = os.getppid()
    applied = isolation.enter(config)
    if config.get("ipc_namespace") and not applied["ipc"]:
        raise OSError(f"sandbox not entered: {applied}")
    limits = config.get("limits", {})
    group = cgroup.create(int(limits.get("memory_mb", 0)), int(limits.get("nproc", 128))) \
        if config.get("cgroup") else []
    if config.get("pid_namespace") and applied["files"]:
        isolation.unshare(isolation.CLONE_NEWPID)
    else:
        config["pid_namespace"] = False
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        conn.close()
        _kernel(config, connection_file, out_w, group)
    os.close(out_w)
    keep = int(config.get("output_kb", 64)) * 1024
    log = open(os.path.join(config["workdir"], "kernel-output.log"), "wb")  # noqa: SIM115
    os.set_blocking(out_r, False)
    ended = _exit_fd(pid)
    watched = [out_r, conn, *([ended] if ended is not None else [])]
    pending = b""
    while True:
        # woken by the kernel's output, the proxy, or the kernel's exit (at once where a pidfd
        # says it); retried after a signal (PEP 475)
        ready, _, _ = select.select(watched, [], [], 0.25 if ended is not None else 0.05)
        if out_r in ready:
            try:
                chunk = os.read(out_r, 1 << 16)
            except BlockingIOError:
                chunk = None
            if chunk == b"":
                watched.remove(out_r)
            elif chunk and log.tell() < keep:
                log.write(chunk[: keep - log.tell()])
                log.flush()
        if conn in ready:
            chunk = b""
            with contextlib.suppress(OSError):
                chunk = conn.recv(1024)
            if not chunk:  # the proxy was killed: so is the kernel
                watched.remove(conn)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                signum = int(line)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL if signum == signal.SIGTERM else signum)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            break
        if ended in ready:  # exited, not yet reaped: it is, now
            done, status = os.waitpid(pid, 0)
            break
        if os.getppid() != parent:  # the server is gone: take the kernel with us
            os.kill(pid, signal.SIGKILL)
    log.close()
    if ended is not None:
        os.close(ended)
    if not config["pid_namespace"] and config.get("drop_privileges"):
        isolation.kill_user(config["uid"])  # what the kernel left behind, as its user
    seen = cgroup.close(group)
    code = os.waitstatus_to_exitcode(status)
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps({"exit": code, "oom_kills": seen["oom_kills"]}).encode() + b"\n")
    return code


def _load(config: dict) -> socket.socket:
    """The server's libraries (and ``probe_runner``, which the kernel's recorder uses, while
    this folder is still visible), imported once, and the socket it listens on (root only)."""
    import probe_runner  # noqa: F401
    import warmup

    warmup.load_kernel_libraries()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(config["socket"])
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(config["socket"])
    os.chmod(config["socket"], 0o600)
    listener.listen(16)
    return listener


def serve(config_path: str) -> int:
    """The server: load the libraries once, then fork a jail for every kernel asked for on its
    socket, and run every probe group asked for on stdin as the zygote does (``zygote.answer``):
    one warm process serves a worker's kernels and probe groups, one after the other."""
    import isolation
    import zygote

    _config, channel, listener = isolation.start_server(config_path, _load)
    pending = b""
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [], 1.0)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if sys.stdin in ready:
            chunk = os.read(sys.stdin.fileno(), 1 << 16)
            if not chunk:
                return 0  # the worker closed our stdin: done
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                if (reply := zygote.answer(line)) is not None:
                    channel.write(reply)
        if listener in ready:
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                code = 70
                try:
                    code = _jail(conn)
                except BaseException as error:  # noqa: BLE001
                    with contextlib.suppress(BaseException):
                        os.write(2, f"kernel jail: {error!r}\n".encode())
                finally:
                    os._exit(code & 0xFF)
            conn.close()


def proxy(config_path: str, connection_file: str) -> int:
    """What the kernel manager starts: ask the server for a kernel and stand in for it."""
    with open(config_path, encoding="utf-8") as handle:
        config = json.load(handle)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(config["server"])
    conn.sendall(json.dumps({"config": config_path,
                             "connection_file": connection_file}).encode() + b"\n")

    def forward(signum, _frame):
        with contextlib.suppress(OSError):
            conn.sendall(f"{signum}\n".encode())

    for signum in FORWARDED:
        signal.signal(signum, forward)
    reply = _read_line(conn)
    if reply is None:
        return 1
    if config.get("ended"):
        with open(config["ended"] + ".part", "w", encoding="utf-8") as handle:
            json.dump({"exit": int(reply.get("exit", 1)),
                       "oom_kills": int(reply.get("oom_kills", 0))}, handle)
        os.replace(config["ended"] + ".part", config["ended"])
    return int(reply.get("exit", 1))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves it out
    if sys.argv[1] == "serve":
        sys.exit(serve(sys.argv[2]))
    sys.exit(proxy(sys.argv[1], sys.argv[2]))
