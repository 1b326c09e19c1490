"""Enter the sandbox: namespaces, hidden folders, resource limits and an unprivileged user.

Runs inside the child, before any student code, while the child is still root (the grader runs
as root in its container). Each step is Linux-specific and may be refused by the platform; the
parent learns what was applied from :func:`enter` and says so at start-up. Standard library only.

The view of the file system the sandbox gets (with a mount namespace):

- every folder in ``hide`` is covered by an empty tmpfs (the course repository with its solutions,
  hidden checks and reference outputs, the submissions, the grader's output, other scratch
  folders, ``/tmp``, home folders);
- the folders in ``expose_ro`` (the Python installation) and ``expose_rw`` (this submission's
  scratch folder) are bound back at their own path, the first ones read-only;
- the network namespace has only a loopback interface (brought up for Jupyter kernels);
- the IPC namespace is the run's own: SysV shared memory, message queues and semaphores are
  destroyed with its last process, so none is left for the next student on the worker.

A run's processes together are also held to one memory and process-count limit (``cgroup.py``).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import os
import resource
import signal
import socket
import struct
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
STICKY = ("/tmp", "/var/tmp", "/dev/shm")  # covered with world-writable tmpfs, like the originals


class IsolationError(OSError):
    """A step of the sandbox set-up that the platform refused."""


@functools.cache
def _libc() -> ctypes.CDLL:
    """The C library, with the argument types of the calls made here (loaded once)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                           ctypes.c_char_p]
    libc.unshare.argtypes = [ctypes.c_int]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                           ctypes.c_ulong]
    return libc


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise IsolationError(code, f"{what}: {os.strerror(code)}")


def _b(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def unshare(flags: int) -> None:
    """``unshare(2)``: move this process into new namespaces (root only)."""
    _check(_libc().unshare(flags), f"unshare({flags:#x})")


def mount(source: str | None, target: str, fstype: str | None, flags: int,
          data: str | None = None) -> None:
    """``mount(2)``."""
    _check(_libc().mount(_b(source), _b(target), _b(fstype), flags, _b(data)), f"mount {target}")


def set_parent_death_signal() -> None:
    """Die with ``SIGKILL`` when the parent dies (cleared by a change of user: call again after)."""
    if sys.platform.startswith("linux"):
        _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def loopback_up() -> None:
    """Bring up ``lo`` in a fresh network namespace (Jupyter kernels talk over it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


def _under(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def hide_and_expose(hide: list[str], expose_ro: list[str], expose_rw: list[str]) -> None:
    """Cover ``hide`` with empty 64 MiB tmpfs mounts, then bind the exposed folders back.

    Must run in a private mount namespace. The exposed folders are opened before anything is
    covered, and bound from ``/proc/self/fd`` afterwards, so they stay reachable even when they
    lie inside a hidden folder (the virtual environment inside the repository, the scratch folder
    inside ``/tmp``).
    """
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    hide = sorted({os.path.realpath(p) for p in hide if os.path.isdir(p)}, key=len)
    hide = [p for i, p in enumerate(hide) if not _under(p, hide[:i])]  # covered by a parent
    exposed = [(os.path.realpath(p), False) for p in expose_ro if os.path.isdir(p)]
    exposed += [(os.path.realpath(p), True) for p in expose_rw if os.path.isdir(p)]
    exposed = [(p, rw) for p, rw in exposed if _under(p, hide)]
    handles = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p, _ in exposed}
    try:
        for folder in hide:
            mode = "1777" if folder in STICKY else "755"
            mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, f"size=64m,mode={mode}")
        for path, writable in sorted(exposed, key=lambda e: len(e[0])):
            os.makedirs(path, mode=0o755, exist_ok=True)
            mount(f"/proc/self/fd/{handles[path]}", path, None, MS_BIND | MS_REC)
            if not writable:
                mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    finally:
        for handle in handles.values():
            os.close(handle)


def private_mounts() -> None:
    """Move into a mount namespace of one's own, whose mounts nobody else sees and which goes
    with its last process (a grading worker, for its scratch folders)."""
    unshare(CLONE_NEWNS)
    mount(None, "/", None, MS_REC | MS_PRIVATE)


def mount_scratch(folder: str, size_mb: int) -> None:
    """Cover ``folder`` with an empty tmpfs of ``size_mb`` MiB: what is written there can fill
    only that much (in a mount namespace of one's own, :func:`private_mounts`)."""
    mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, f"size={int(size_mb)}m,mode=755")


def unmount(folder: str) -> None:
    """Detach the file system mounted at ``folder`` (``umount2(MNT_DETACH)``)."""
    _check(_libc().umount2(_b(folder), MNT_DETACH), f"umount {folder}")


def mount_private_proc() -> None:
    """Mount a ``/proc`` that shows only this PID namespace (needs a private mount namespace)."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def enter(config: dict) -> dict:
    """Apply the namespaces and the file-system view that ``config`` asks for.

    Returns what was applied: ``{"network": bool, "files": bool, "ipc": bool, "errors": [...]}``.
    A refused step is recorded, never fatal: the parent decides what to do and tells the
    instructor.
    """
    applied = {"network": False, "files": False, "ipc": False, "errors": []}
    if not config.get("namespaces"):
        return applied
    try:
        unshare(CLONE_NEWNS | CLONE_NEWNET)
    except OSError as error:
        applied["errors"].append(f"namespaces: {error}")
        return applied
    applied["network"] = True  # the namespace has no route out, even without a loopback
    try:
        unshare(CLONE_NEWIPC)
        applied["ipc"] = True
    except OSError as error:
        applied["errors"].append(f"ipc namespace: {error}")
    try:
        loopback_up()
    except OSError as error:
        applied["errors"].append(f"loopback: {error}")
    try:
        hide_and_expose(config["hide"], config["expose_ro"], config["expose_rw"])
        applied["files"] = True
    except OSError as error:
        applied["errors"].append(f"files: {error}")
    return applied


def status_kb(key: str, pid: int | str = "self") -> int:
    """A process's ``/proc/<pid>/status`` value ``key`` in KiB (``VmSize``, ``VmRSS``), or 0."""
    with contextlib.suppress(OSError, ValueError), \
            open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def apply_limits(limits: dict, *, relative_memory: bool = True) -> None:
    """Set resource limits (soft = hard, so the child cannot raise them again).

    ``limits`` keys (all optional): ``cpu_s``, ``memory_mb`` (address space on top of what the
    process already maps when ``relative_memory``; absolute otherwise), ``fsize_mb``, ``nproc``,
    ``nofile``. Core dumps are always off.
    """
    def limit(kind: int, value: int) -> None:
        try:
            resource.setrlimit(kind, (value, value))
        except (ValueError, OSError):
            soft, hard = resource.getrlimit(kind)
            if hard == resource.RLIM_INFINITY or value < hard:
                resource.setrlimit(kind, (min(value, hard), hard))

    limit(resource.RLIMIT_CORE, 0)
    if limits.get("cpu_s"):
        cpu = int(limits["cpu_s"])
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if limits.get("memory_mb"):
        budget = int(limits["memory_mb"]) * 2**20
        limit(resource.RLIMIT_AS, budget + (status_kb("VmSize") * 1024 if relative_memory else 0))
    for key, kind, unit in (("fsize_mb", resource.RLIMIT_FSIZE, 2**20),
                            ("nproc", resource.RLIMIT_NPROC, 1),
                            ("nofile", resource.RLIMIT_NOFILE, 1)):
        if limits.get(key):
            limit(kind, int(limits[key]) * unit)


def drop_privileges(uid: int, gid: int) -> None:
    """Become ``uid``/``gid`` with no supplementary groups and no way back (nor any gain of
    privileges through set-user-ID programs)."""
    _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.geteuid() != uid or os.getuid() != uid:
        raise IsolationError(errno.EPERM, "could not drop privileges")


def kill_user(uid: int) -> None:
    """``SIGKILL`` every process of ``uid``, the sandbox's own user, from a throw-away child
    that becomes ``uid`` (``kill(-1)`` reaches exactly the processes of its user). Without a PID
    namespace this is what stops what student code left behind outside its process group (a
    daemon, a ``setsid``); it needs root, and a ``uid`` no other live process uses."""
    for _ in range(2):  # a process forked during the first sweep is caught by the second
        pid = os.fork()
        if pid == 0:
            try:
                os.setresuid(uid, uid, uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)


def close_other_fds() -> None:
    """Close every file descriptor but 0, 1 and 2 (pipes to the grader, inherited sockets)."""
    try:
        highest = max(int(name) for name in os.listdir("/proc/self/fd"))
    except OSError:
        highest = 1023
    os.closerange(3, highest + 1)


def confine(config: dict, out_w: int, workdir: str, limits: dict, *,
            relative_memory: bool = True) -> None:
    """What every process that runs student code does first (after joining its run's control
    group, ``cgroup.join``), in this order: its own session and, when ``config`` asks for a PID
    namespace (this process is its PID 1), a ``/proc`` of its own; stdin from ``/dev/null``,
    stdout and stderr into the pipe ``out_w``, no other descriptor; ``workdir``, the limits, the
    unprivileged user (when ``config`` asks), the parent-death signal again, the scrubbed
    environment with ``HOME`` at ``workdir``."""
    os.setsid()
    if config.get("pid_namespace"):
        unshare(CLONE_NEWNS)
        mount_private_proc()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(out_w, 2)
    close_other_fds()
    os.chdir(workdir)
    apply_limits(limits, relative_memory=relative_memory)
    if config.get("drop_privileges"):
        drop_privileges(config["uid"], config["gid"])
    set_parent_death_signal()
    os.environ.clear()
    os.environ.update(config["env"], HOME=workdir)


def install_audit_guard(deny: list[str], allow: list[str]) -> None:
    """Fallback when no mount namespace is available: refuse, from Python, to open hidden paths
    (those under ``deny`` and not under ``allow``) or to use the network. Code that calls C
    directly (``ctypes``) can get round it; the parent says so at start-up."""
    deny = sorted({os.path.realpath(p) for p in deny})
    allow = sorted({os.path.realpath(p) for p in allow})
    blocked_families = {socket.AF_INET, socket.AF_INET6}

    def refused(path: object) -> bool:
        try:
            text = os.fsdecode(path)
        except TypeError:  # a file descriptor
            return False
        candidates = {os.path.abspath(text)}
        with contextlib.suppress(OSError, ValueError):
            candidates.add(os.path.realpath(text))
        return any(_under(c, deny) and not _under(c, allow) for c in candidates)

    def hook(event: str, args: tuple) -> None:
        if event in ("open", "os.listdir", "os.scandir", "os.chdir", "shutil.copyfile",
                     "os.rename", "os.remove", "os.symlink", "os.link") and args:
            if refused(args[0]):
                raise PermissionError(errno.EACCES, "hidden by the grader", args[0])
        elif event in ("socket.connect", "socket.bind", "socket.sendto") and args:
            sock = args[0]
            if getattr(sock, "family", None) in blocked_families:
                raise PermissionError(errno.EACCES, "network is off while grading")

    sys.addaudithook(hook)


def start_server(config_path: str, load):
    """The start of a long-lived sandbox server (the zygote, the kernel server), as root:
    ``(its configuration, the protocol channel, what load(config) returned)``. The channel is
    the original stdout; anything the libraries print goes to stderr (the log). The server dies
    with the grader, starts with the scrubbed environment and never writes a core file.

    ``load(config)`` imports what the server serves with (never any course or student code) and
    sets up what it needs; the channel's first line says how that went: ``{"ready": true}``, or
    ``{"ready": false, "error": ...}`` and the server exits with status 1. What ``load`` left
    is frozen (``gc.freeze``) before the first fork."""
    import gc
    import json

    with open(config_path, encoding="utf-8") as handle:
        config = json.load(handle)
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    set_parent_death_signal()
    os.umask(0o022)
    os.environ.clear()
    os.environ.update(config["env"])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        loaded = load(config)
        # what was loaded lives as long as the server: out of the garbage collector's sight, a
        # forked child's first full collection neither walks it (a quarter of a second, every
        # notebook) nor writes to its pages (each write copies a shared page)
        gc.collect()
        gc.freeze()
    except BaseException as error:  # noqa: BLE001 - told to the grader, which gives up
        channel.write(json.dumps({"ready": False, "error": repr(error)}) + "\n")
        sys.exit(1)
    channel.write(json.dumps({"ready": True}) + "\n")  # the channel is line-buffered
    return config, channel, loaded
