"""Which isolation this machine allows, found by trying each mechanism in a throw-away process.

Run by the grader at start-up (``grader.trusted.sandbox.probe_capabilities``) as
``python -I platform_probe.py CHILD_DIR CONFIG_JSON``; prints one JSON line, the fields of
``Capabilities`` that can be tried here (the control groups are tried by the parent). ``CONFIG``
holds the file-system view of a sandbox (``hide``, ``expose_ro``, ``expose_rw``), ``namespaces``
(the grader runs as root), ``secret`` (a file the view must hide) and ``uid`` (the sandbox's
user). Like every file of ``grader/child/``, it imports nothing of the grader.
"""

from __future__ import annotations

import json
import os
import sys


def probe(config: dict) -> dict:
    """Enter the sandbox as a probe group would, then try what is left in a forked child."""
    import isolation

    result = {"namespaces": False, "pid_namespace": False, "drop_privileges": False,
              "rlimits": False, "notes": []}
    applied = isolation.enter(config)
    result["notes"] += applied["errors"]
    secret = config["secret"]
    result["namespaces"] = applied["files"] and applied["network"] and not os.path.exists(secret)
    result["ipc_namespace"] = applied["ipc"]
    try:  # what a worker does to its scratch folder in its own mount namespace
        if applied["files"]:
            isolation.mount_scratch(config["expose_rw"][0], 1)
            result["scratch_quota"] = result["namespaces"]
    except OSError as error:
        result["notes"].append(f"scratch tmpfs: {error}")
    try:
        isolation.unshare(isolation.CLONE_NEWPID)
        pid_ns = True
    except OSError as error:
        pid_ns = False
        result["notes"].append(f"pid namespace: {error}")
    child = _in_child(config, pid_ns)
    result["pid_namespace"] = pid_ns and child.get("pid1", False)
    result["drop_privileges"] = child.get("uid", False)
    result["rlimits"] = child.get("rlimits", False)
    if child.get("note"):
        result["notes"].append(child["note"])
    return result


def _in_child(config: dict, pid_ns: bool) -> dict:
    """Fork (the first process of a new PID namespace, when there is one) and try the limits and
    the unprivileged user there; what worked, read back through a pipe."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.write(write, json.dumps(_child_tries(config, pid_ns)).encode())
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 4096):
        data += chunk
    os.waitpid(pid, 0)
    return json.loads(data or b"{}")


def _child_tries(config: dict, pid_ns: bool) -> dict:
    import isolation

    out = {"pid1": os.getpid() == 1, "uid": False, "rlimits": False}
    try:
        if pid_ns:
            isolation.unshare(isolation.CLONE_NEWNS)
            isolation.mount_private_proc()
        isolation.apply_limits({"cpu_s": 30, "memory_mb": 4096, "nproc": 64, "fsize_mb": 8})
        out["rlimits"] = True
        if config["namespaces"]:  # root: with namespaces, or as the fallback without
            isolation.drop_privileges(config["uid"], config["uid"])
            code = os.spawnv(os.P_WAIT, sys.executable,
                             [sys.executable, "-I", "-c", "import numpy"])
            out["uid"] = code == 0
            if code != 0:
                out["note"] = "the unprivileged user cannot run this Python"
    except BaseException as error:  # noqa: BLE001 - whatever failed is a note, never a crash
        out["note"] = repr(error)
    return out


def main(argv: list[str]) -> None:
    sys.path.insert(0, argv[1])  # isolation.py, next to this file (-I leaves it off the path)
    print(json.dumps(probe(json.loads(argv[2]))))


if __name__ == "__main__":
    main(sys.argv)
