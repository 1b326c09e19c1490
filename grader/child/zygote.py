"""The sandbox's zygote: load NumPy and PyTorch once, then fork one limited process per probe group.

Started by the trusted parent as ``python -I zygote.py <config.json>``, as root, in a new
session, once per grading worker. It imports the heavy libraries (never any course or student
code) and then serves requests, one JSON line each on stdin, answering one JSON line each on the
protocol channel (its original stdout). Each request carries the sandbox of one submission: the
folders to cover and to expose, the unprivileged user, the scrubbed environment, the limits.

For each request it forks a monitor, which enters that sandbox (new mount, network and IPC
namespaces, ``isolation.enter``), makes the group's control group (``cgroup.create``: one memory
and process-count limit for all its processes), moves into a new PID namespace and forks the
worker. The worker joins the control group and is PID 1 of its namespace: it mounts its own
``/proc``, sends its output to a pipe, sets the limits, drops to the unprivileged user, blocks
imports of the self-check's answers, imports the student's module and runs the cases
(``probe_runner``). When the worker ends or is killed, the kernel kills everything left in its
namespace, the monitor everything left in its control group, and the IPC namespace goes with its
last process, so no process or IPC object outlives its group. The monitor enforces the
wall-clock limit, keeps the first kilobytes of output and throws the rest away (a flood costs
nothing but time), and reports how the worker ended. If the sandbox cannot be entered as the
platform probe promised, no student code runs.
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
import cgroup  # noqa: E402
import isolation  # noqa: E402


def _worker(request: dict, config: dict, item_dir: str, out_w: int, applied: dict,
            group: list[str]) -> None:
    """The process that runs student code (never returns)."""
    try:
        cgroup.join(group)
        limits = dict(request.get("limits", {}))
        if request.get("variant") == "cuda":
            limits.pop("memory_mb", None)  # CUDA maps huge address ranges; the monitor watches RSS
        isolation.confine(config, out_w, item_dir, limits)
        sys.path.insert(0, config["course_src"])
        if not applied["files"] and config.get("audit_guard"):
            isolation.install_audit_guard(config["audit_guard"],
                                          config["expose_ro"] + config["expose_rw"])
        import probe_runner

        probe_runner.block_borrowed_imports()
        probe_runner.run(request, item_dir, timed=True)
        code = 0
    except BaseException:  # noqa: BLE001 - reported through the missing done.json
        code = 71
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _monitor(request: dict, config: dict, item_dir: str) -> dict:
    """Fork the worker, watch it, and describe how it ended."""
    limits = request.get("limits", {})
    wall = float(limits.get("wall_s", 30))
    keep = int(limits.get("output_kb", 64)) * 1024
    memory_kb = int(limits.get("memory_mb", 0)) * 1024
    applied = isolation.enter(config)
    if config.get("namespaces") and not (applied["files"] and applied["network"]) or \
            config.get("ipc_namespace") and not applied["ipc"]:
        return {"status": "grader-error", "detail": f"sandbox not entered: {applied}"}
    try:
        group = cgroup.create(int(limits.get("memory_mb", 0)) + cgroup.HEADROOM_MB,
                              int(limits.get("nproc", 64))) if config.get("cgroup") else []
    except OSError as error:
        return {"status": "grader-error", "detail": f"control group not made: {error!r}"}
    if config.get("pid_namespace"):
        isolation.unshare(isolation.CLONE_NEWPID)
    out_r, out_w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        _worker(request, config, item_dir, out_w, applied, group)
    os.close(out_w)
    os.set_blocking(out_r, False)
    head = bytearray()
    total = 0
    reason = None
    eof = False

    def drain() -> None:
        """Take what the worker writes within 0.05 s: count it, keep its first ``keep`` bytes
        (after the end of its output, only wait 0.02 s)."""
        nonlocal total, eof
        if eof:
            time.sleep(0.02)
            return
        if not select.select([out_r], [], [], 0.05)[0]:
            return
        while True:
            try:
                chunk = os.read(out_r, 1 << 16)
            except BlockingIOError:
                return
            if not chunk:
                eof = True
                return
            total += len(chunk)
            head.extend(chunk[: keep - len(head)])

    while True:
        drain()
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done == pid:
            break
        if reason is None and time.monotonic() - start > wall:
            reason = "timeout"
            _kill(pid, config)
        if reason is None and memory_kb and request.get("variant") == "cuda" \
                and isolation.status_kb("VmRSS", pid) > memory_kb:
            reason = "memory"
            _kill(pid, config)
    if not config.get("pid_namespace"):
        _kill(pid, config)  # what the worker left in its process group
        if config.get("drop_privileges"):
            isolation.kill_user(config["uid"])  # and anywhere else, as its user
    seen = cgroup.close(group)  # and in its control group
    deadline = time.monotonic() + 1.0
    while not eof and time.monotonic() < deadline:
        drain()
    os.close(out_r)
    report = {"wall_s": round(time.monotonic() - start, 3),
              "cpu_s": round(usage.ru_utime + usage.ru_stime, 3), "max_rss_kb": usage.ru_maxrss,
              "output_bytes": total, "output_head": head.decode("utf-8", "replace"),
              "group": seen}
    if os.WIFSIGNALED(status):
        report["signal"] = os.WTERMSIG(status)
        if reason is None and report["signal"] == signal.SIGKILL and seen["oom_kills"]:
            reason = "memory"  # the control group's limit, all its processes together
        if reason is None and report["signal"] in (signal.SIGXCPU, signal.SIGKILL) \
                and report["cpu_s"] >= float(limits.get("cpu_s", 1e9)) - 0.5:
            reason = "cpu"
        report["status"] = reason or "signal"
    else:
        report["exit_code"] = os.WEXITSTATUS(status)
        report["status"] = reason or "exited"
    return report


def _kill(pid: int, config: dict) -> None:
    with contextlib.suppress(ProcessLookupError):
        if config.get("pid_namespace"):
            os.kill(pid, signal.SIGKILL)  # PID 1 of its namespace: takes everything with it
        else:
            os.killpg(pid, signal.SIGKILL)


def run_group(request: dict) -> dict:
    """Serve one request: a fresh item folder, a monitor process, its report."""
    config = request["sandbox"]
    item_dir = os.path.join(config["items_dir"], request["dir"])
    os.mkdir(item_dir, 0o700)
    if config.get("drop_privileges"):
        os.chown(item_dir, config["uid"], config["gid"])
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(report_r)
        try:
            isolation.set_parent_death_signal()
            report = _monitor(request, config, item_dir)
        except BaseException as error:  # noqa: BLE001
            report = {"status": "grader-error", "detail": repr(error)}
        os.write(report_w, json.dumps(report).encode())
        os._exit(0)
    os.close(report_w)
    with os.fdopen(report_r, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    try:
        report = json.loads(data or b"{}")
    except ValueError:
        report = {}
    report.setdefault("status", "grader-error")
    report["dir"] = request["dir"]
    return report


def _load(config: dict) -> None:
    """What every probe group uses, imported (and warmed up) once; ``probe_runner`` too, while
    this folder is still visible (the sandbox hides it from the workers)."""
    import probe_runner  # noqa: F401
    import warmup

    warmup.load_probe_libraries()


def answer(line: bytes | str) -> str | None:
    """The reply line to one request line (``None`` for an empty line)."""
    if not line.strip():
        return None
    request = json.loads(line)
    try:
        reply = run_group(request)
    except BaseException as error:  # noqa: BLE001
        reply = {"dir": request.get("dir"), "status": "grader-error", "detail": repr(error)}
    return json.dumps(reply) + "\n"


def main() -> int:
    _config, channel, _ = isolation.start_server(sys.argv[1], _load)
    for line in sys.stdin:
        if (reply := answer(line)) is not None:
            channel.write(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
