"""Run a lab's visible checks in a child process, one time limit per check.

The student's code may loop forever, exit the interpreter, crash or print a flood: none of that
reaches the report. The child sends one JSON line per event over a private pipe (never stdout);
when a check overruns its limit or the child dies, the parent ends the child's whole process
group, records that check, and starts a fresh child for the checks that remain.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from minimodel.course import Lab
from minimodel.implementation import ENV_VAR, resolve
from minimodel.messages import split_bilingual
from minimodel.selfcheck.compare import Check, CheckFailure

STATUSES = ("pass", "fail", "todo", "error", "timeout")


@dataclass
class Result:
    """What happened to one check; ``detail_*`` explain a status other than ``pass``."""

    check: Check
    status: str
    detail_es: str = ""
    detail_en: str = ""


def lab_checks(lab: Lab) -> list[Check]:
    """The visible checks of ``lab`` (module ``minimodel.selfcheck.lab_<phase>_<lesson>``)."""
    phase, lesson = lab.id.split(".")
    return list(importlib.import_module(f"minimodel.selfcheck.lab_{phase}_{lesson}").checks)


def run_checks(lab: Lab, impl: str = "src", timeout: float = 20.0) -> list[Result]:
    """Run every visible check of ``lab`` against implementation ``impl``, safely."""
    checks = {check.name: check for check in lab_checks(lab)}
    env = {**os.environ, ENV_VAR: str(resolve(impl)), "PYTHONDONTWRITEBYTECODE": "1"}
    results: dict[str, Result] = {}
    remaining = list(checks)
    while remaining:
        done = _run_child(lab, remaining, checks, env, timeout)
        results.update(done)
        remaining = [name for name in remaining if name not in results]
    return [results[name] for name in checks]


def _run_child(lab, names, checks, env, timeout) -> dict[str, Result]:
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen(
            [sys.executable, "-m", "minimodel.selfcheck.runner", lab.id, str(write_fd), *names],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            pass_fds=(write_fd,),
            start_new_session=True,
        )
        os.close(write_fd)
        results: dict[str, Result] = {}
        current, started, buffer = None, time.monotonic(), b""
        try:
            while True:
                wait = max(0.0, started + timeout - time.monotonic()) if current else 60.0
                ready, _, _ = select.select([read_fd], [], [], wait)
                if not ready:
                    name = current or names[0]
                    results[name] = Result(
                        checks[name],
                        "timeout",
                        f"no terminó en {timeout:g} s (¿un bucle infinito?).",
                        f"did not finish within {timeout:g} s (an infinite loop?).",
                    )
                    return results
                chunk = os.read(read_fd, 65536)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    event = json.loads(line)
                    if "start" in event:
                        current, started = event["start"], time.monotonic()
                    else:
                        results[event["name"]] = Result(
                            checks[event["name"]], event["status"], event["es"], event["en"]
                        )
                        current = None
            child.wait(timeout=10)
            if current is not None:
                stderr.seek(0)
                tail = stderr.read().decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
                code = child.returncode
                results[current] = Result(
                    checks[current],
                    "error",
                    f"el proceso terminó durante la comprobación (código {code}). {tail[0]}",
                    f"the process ended during the check (exit code {code}). {tail[0]}",
                )
            return results
        finally:
            os.close(read_fd)
            _kill_group(child)


def _kill_group(child: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _child(lab_id: str, fd: int, names: list[str]) -> None:
    from minimodel.course import find_lab

    checks = {check.name: check for check in lab_checks(find_lab(lab_id))}
    out = os.fdopen(fd, "w", buffering=1)

    def send(**event: str) -> None:
        out.write(json.dumps(event) + "\n")
        out.flush()

    for name in names:
        send(start=name)
        status, es, en = "pass", "", ""
        try:
            checks[name].run()
        except NotImplementedError as error:
            status = "todo"
            es, en = split_bilingual(str(error))
        except CheckFailure as failure:
            status, es, en = "fail", failure.es, failure.en
        except SyntaxError as error:
            status = "error"
            where = f"{os.path.basename(error.filename or '?')}, línea/line {error.lineno}"
            es = f"tu archivo tiene un error de sintaxis ({where}): {error.msg}"
            en = f"your file has a syntax error ({where}): {error.msg}"
        except BaseException as error:  # noqa: BLE001 - anything the student's code raises
            status = "error"
            kind = type(error).__name__
            text_es, text_en = split_bilingual(str(error))
            es = f"tu código lanzó {kind}: {text_es}".strip()
            en = f"your code raised {kind}: {text_en}".strip()
        send(name=name, status=status, es=es, en=en)


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
