"""One memory and process-count limit over every process of one sandboxed run (Linux cgroups).

A probe group or a notebook kernel may fork: per-process limits (``RLIMIT_AS``) then allow each
child as much again, and SysV shared memory belongs to no process at all. A control group counts
them all together, shared memory included (it is charged to the group that touched it). The
process that starts a run (the zygote's monitor, the kernel jail; root) makes one group per run
under its own, with cgroups v2 where the machine has them (``/sys/fs/cgroup/cgroup.controllers``)
and the ``memory`` and ``pids`` hierarchies of v1 otherwise; the run's first process joins it
before any student code runs (:func:`join`); when the run ends, everything in it is killed and the
group removed (:func:`close`). Standard library only: this file runs in the sandbox's servers.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time

ROOT = "/sys/fs/cgroup"
HEADROOM_MB = 128  # what a forked probe process touches of the zygote's pages (copy on write)
_names = itertools.count()


def version() -> int | None:
    """2 (unified hierarchy with the memory and pids controllers), 1 (their v1 hierarchies), or
    ``None`` (neither is mounted)."""
    try:
        with open(os.path.join(ROOT, "cgroup.controllers"), encoding="ascii") as handle:
            return 2 if {"memory", "pids"} <= set(handle.read().split()) else None
    except OSError:
        pass
    v1 = all(os.path.isdir(os.path.join(ROOT, c)) for c in ("memory", "pids"))
    return 1 if v1 else None


def _own(controller: str) -> str:
    """This process's group in ``controller``'s hierarchy (``""`` for v2's unified one)."""
    with open("/proc/self/cgroup", encoding="ascii") as handle:
        for line in handle:
            _id, names, path = line.rstrip("\n").split(":", 2)
            if names.split(",") == [controller] or (not controller and _id == "0"):
                return path.lstrip("/")
    raise OSError(f"no {controller or 'unified'} cgroup in /proc/self/cgroup")


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


def create(memory_mb: int, nproc: int) -> list[str]:
    """A new group under this process's own, holding at most ``memory_mb`` MiB (memory and
    swap, shared memory and ``tmpfs`` pages included) and ``nproc`` tasks: its folders (one for
    v2, the memory and the pids group for v1). Raises ``OSError`` when the platform refuses."""
    name = f"mmg-{os.getpid()}-{next(_names)}"
    limit = str(int(memory_mb) * 2**20)
    if version() == 2:
        parent = os.path.join(ROOT, _own(""))
        with contextlib.suppress(OSError):  # delegated already, or refused: mkdir says which
            _write(os.path.join(parent, "cgroup.subtree_control"), "+memory +pids")
        folder = os.path.join(parent, name)
        os.mkdir(folder)
        folders = [folder]
        try:
            _write(os.path.join(folder, "memory.max"), limit)
            with contextlib.suppress(OSError):  # no swap accounting
                _write(os.path.join(folder, "memory.swap.max"), "0")
            _write(os.path.join(folder, "pids.max"), str(int(nproc)))
        except OSError:
            remove(folders)
            raise
        return folders
    if version() != 1:
        raise OSError("no cgroup hierarchy with memory and pids")
    folders = []
    try:
        for controller in ("memory", "pids"):
            folder = os.path.join(ROOT, controller, _own(controller), name)
            os.mkdir(folder)
            folders.append(folder)
        _write(os.path.join(folders[0], "memory.limit_in_bytes"), limit)
        with contextlib.suppress(OSError):  # no swap accounting on this kernel
            _write(os.path.join(folders[0], "memory.memsw.limit_in_bytes"), limit)
        _write(os.path.join(folders[1], "pids.max"), str(int(nproc)))
    except OSError:
        remove(folders)
        raise
    return folders


def join(folders: list[str]) -> None:
    """Move the calling process into the group (before it runs anything it was not given)."""
    for folder in folders:
        _write(os.path.join(folder, "cgroup.procs"), "0")


def _pids(folders: list[str]) -> list[int]:
    found: set[int] = set()
    for folder in folders:
        with contextlib.suppress(OSError), \
                open(os.path.join(folder, "cgroup.procs"), encoding="ascii") as handle:
            found.update(int(line) for line in handle if line.strip())
    return sorted(found)


def kill(folders: list[str], timeout: float = 5.0) -> bool:
    """Kill every process in the group, again until none is left; whether none is."""
    deadline = time.monotonic() + timeout
    kill_file = os.path.join(folders[0], "cgroup.kill") if folders else ""
    while pids := _pids(folders):
        if os.path.exists(kill_file):
            with contextlib.suppress(OSError):
                _write(kill_file, "1")
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def remove(folders: list[str], timeout: float = 2.0) -> None:
    """Remove the (empty) group's folders; a dying process may hold one a moment longer."""
    for folder in reversed(folders):
        deadline = time.monotonic() + timeout
        while os.path.isdir(folder):
            try:
                os.rmdir(folder)
            except OSError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.02)


def close(folders: list[str]) -> dict:
    """Kill what is left in the group, remove it, and say what it saw: ``{"oom_kills": n,
    "memory_peak_mb": m, "fork_refused": k}`` (``0`` where the platform does not say)."""
    seen = {"oom_kills": 0, "memory_peak_mb": 0, "fork_refused": 0}
    if not folders:
        return seen
    memory, pids = folders[0], folders[-1]
    counters = {"oom_kills": (memory, ("memory.events", "memory.oom_control"), "oom_kill"),
                "fork_refused": (pids, ("pids.events",), "max")}
    for key, (folder, files, field) in counters.items():
        for name in files:
            with contextlib.suppress(OSError, ValueError), \
                    open(os.path.join(folder, name), encoding="ascii") as handle:
                for line in handle:
                    words = line.split()
                    if len(words) == 2 and words[0] == field:
                        seen[key] = int(words[1])
    for name in ("memory.peak", "memory.max_usage_in_bytes"):
        with contextlib.suppress(OSError, ValueError), \
                open(os.path.join(memory, name), encoding="ascii") as handle:
            seen["memory_peak_mb"] = int(handle.read().strip()) // 2**20
    kill(folders)
    remove(folders)
    return seen


def remove_stale() -> list[str]:
    """Remove the groups a killed grader left under this process's own (``mmg-<pid>-<n>`` of a
    process that is gone, once empty); the folders removed."""
    if version() is None:
        return []
    parents = [os.path.join(ROOT, _own(""))] if version() == 2 else \
        [os.path.join(ROOT, c, _own(c)) for c in ("memory", "pids")]
    removed = []
    for parent in parents:
        for name in os.listdir(parent):
            parts = name.split("-")
            if len(parts) != 3 or parts[0] != "mmg" or not parts[1].isdigit():
                continue
            try:
                os.kill(int(parts[1]), 0)
                continue  # its maker is alive
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
            folder = os.path.join(parent, name)
            kill([folder], timeout=1.0)
            remove([folder], timeout=0.5)
            removed += [] if os.path.isdir(folder) else [folder]
    return removed


def available() -> tuple[int | None, str]:
    """Whether groups can be made here: ``(version, "")``, or ``(None, why not)``."""
    found = version()
    if found is None:
        return None, "no cgroup hierarchy with the memory and pids controllers"
    try:
        close(create(64, 8))
    except OSError as error:
        return None, f"cgroups v{found}: {error}"
    return found, ""
