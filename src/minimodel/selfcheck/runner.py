"""Run a lab's visible checks in a child process, one time limit per check.

The student's code may loop forever, exit the interpreter, crash or print a flood: none of that
reaches the report. The child sends one JSON line per event over a private pipe (never stdout);
when a check overruns its limit the parent asks the child where it is (``SIGUSR1``: the child
answers with the student's function and line), ends the child's whole process group, records that
check, skips the rest of that student module (it would hang again) and starts a fresh child for
the checks that remain. ``progress`` hears of each check as it starts and as it ends, so the
report can be printed while the checks run.

What a graded module may use is the grader's rule too (``minimodel.own_work``): the checks of a
module that imports the self-check or another library's implementation fail before they run,
and a check whose student code calls such a function fails whatever its values, in the words of
the grader's finding.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from minimodel.course import Lab
from minimodel.implementation import ENV_VAR, resolve
from minimodel.messages import split_bilingual
from minimodel.own_work import Refusal, Watch, explain, kind_of, read_folder, refused_modules
from minimodel.selfcheck.compare import Check, CheckFailure, CheckNote

PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies
ANSWER_WAIT = 3.0  # seconds the child has to say where it hung before it is ended


@dataclass
class Result:
    """What happened to one check; ``detail_*`` explain a status other than ``pass`` (or, for a
    ``pass``, carry a note)."""

    check: Check
    status: str
    detail_es: str = ""
    detail_en: str = ""


# progress(check, None) when a check starts, progress(check, result) when it ends
Progress = Callable[[Check, "Result | None"], None]


def check_module(lab_id: str):
    """The module of a lab's visible checks, ``minimodel.selfcheck.lab_<phase>_<lesson>``."""
    phase, lesson = lab_id.split(".")
    return importlib.import_module(f"minimodel.selfcheck.lab_{phase}_{lesson}")


def lab_checks(lab: Lab) -> list[Check]:
    """The visible checks of ``lab`` (:func:`check_module`)."""
    return list(check_module(lab.id).checks)


def student_module(lab: Lab, check: Check) -> str:
    """The student's module a check exercises: the lab's file, or the check's own target when the
    lab checks several files (19.01, 19.02: one target per encoding file)."""
    return lab.modules[0] if len(lab.modules) == 1 else check.target


def run_checks(
    lab: Lab, impl: str = "src", timeout: float = 20.0, progress: Progress | None = None
) -> list[Result]:
    """Run every visible check of ``lab`` against implementation ``impl``, safely."""
    checks = {check.name: check for check in lab_checks(lab)}
    env = {**os.environ, ENV_VAR: str(resolve(impl)), "PYTHONDONTWRITEBYTECODE": "1"}
    tell = progress or (lambda check, result: None)
    results = refused_checks(lab, list(checks.values()), resolve(impl))
    for result in results.values():
        tell(result.check, result)
    remaining = [name for name in checks if name not in results]
    while remaining:
        done = _run_child(lab, remaining, checks, env, timeout, tell)
        results.update(done)
        for hung in (result for result in done.values() if result.status == "timeout"):
            for name in remaining:
                check = checks[name]
                if name in results or student_module(lab, check) != student_module(lab, hung.check):
                    continue
                results[name] = Result(
                    check,
                    "skipped",
                    "no se ejecutó: una comprobación anterior de este archivo no terminó (arriba).",
                    "not run: an earlier check of this file did not finish (above).",
                )
                tell(check, results[name])
        remaining = [name for name in remaining if name not in results]
    return [results[name] for name in checks]


def refused_checks(lab: Lab, checks: list[Check], folder: Path) -> dict[str, Result]:
    """The checks of a module in ``folder`` that takes its answers from elsewhere (the
    self-check, another library's implementation: ``minimodel.own_work``), failed before they
    run, in the grader's words."""
    refused = refused_modules(read_folder(folder))
    results = {}
    for check in checks:
        modules = lab.modules or tuple(re.findall(r"(\w+)\.py", check.target))
        module = next((m for m in modules if m in refused), None)
        if module is not None:
            results[check.name] = Result(check, "fail", *explain(refused[module], f"{module}.py"))
    return results


def spawn(lab_id: str, write_fd: int, names: list[str], env: dict, stderr) -> subprocess.Popen:
    """The child that runs ``names``: a fresh interpreter in a session of its own running
    :func:`_child`, its events on ``write_fd``, its standard error in the file ``stderr``."""
    return subprocess.Popen(
        [sys.executable, "-m", "minimodel.selfcheck.runner", lab_id, str(write_fd), *names],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        pass_fds=(write_fd,),
        start_new_session=True,
        preexec_fn=_die_with_parent,
    )


def _run_child(lab, names, checks, env, timeout, tell) -> dict[str, Result]:
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as stderr:
        child = spawn(lab.id, write_fd, names, env, stderr)
        os.close(write_fd)
        results: dict[str, Result] = {}
        current, started = None, time.monotonic()
        try:
            def wait() -> float:
                return max(0.0, started + timeout - time.monotonic()) if current else 60.0

            for event in _events(read_fd, wait):
                if event is None:
                    name = current or names[0]
                    results[name] = _timeout(checks[name], timeout, _where_hung(child, read_fd))
                    tell(checks[name], results[name])
                    return results
                if "start" in event:
                    current, started = event["start"], time.monotonic()
                    tell(checks[current], None)
                elif "name" in event:
                    result = Result(checks[event["name"]], event["status"], event["es"],
                                    event["en"])
                    results[event["name"]] = result
                    tell(result.check, result)
                    current = None
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:  # its results are all in: a slow exit on a busy
                child.kill()  # machine is no failure of the student's code
                child.wait()
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
                tell(checks[current], results[current])
            return results
        finally:
            os.close(read_fd)
            _kill_group(child)


def _where_hung(child: subprocess.Popen, read_fd: int) -> dict | None:
    """Ask the running child where it is; its answer, or None when it cannot say in time."""
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + ANSWER_WAIT
    for event in _events(read_fd, lambda: max(0.0, deadline - time.monotonic())):
        if event is None or "hung" in event:
            return event and event["hung"]
    return None


def _events(read_fd: int, wait: Callable[[], float]) -> Iterator[dict | None]:
    """The child's events as they arrive; ``None`` (then nothing) once ``wait()`` seconds pass
    without any. Ends when the child closes the pipe."""
    buffer = b""
    while select.select([read_fd], [], [], wait())[0]:
        chunk = os.read(read_fd, 65536)
        if not chunk:
            return
        *lines, buffer = (buffer + chunk).split(b"\n")
        yield from map(json.loads, lines)
    yield None


def _timeout(check: Check, timeout: float, place: dict | None) -> Result:
    es = f"no terminó en {timeout:g} s (¿un bucle infinito?)"
    en = f"did not finish within {timeout:g} s (an infinite loop?)"
    if place is None:
        return Result(check, "timeout", f"{check.target} {es}.", f"{check.target} {en}.")
    where_es, where_en = _where(place)
    return Result(check, "timeout", f"{place['function']} {es}; iba por {where_es}.",
                  f"{place['function']} {en}; it was at {where_en}.")


def _where(place: dict) -> tuple[str, str]:
    """``file, line N: code`` in Spanish and in English."""
    code = f": {place['code']}" if place.get("code") else ""
    return (f"{place['file']}, línea {place['line']}{code}",
            f"{place['file']}, line {place['line']}{code}")


def _die_with_parent() -> None:
    """In the child, before the student's code: end when the self-check ends, however it ends.

    The child has a session of its own (so Ctrl-C reaches only the parent, which reports it), so a
    killed parent would otherwise leave a student's infinite loop running. On Linux the kernel
    sends SIGKILL when the parent dies; elsewhere nothing changes.
    """
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _kill_group(child: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _student_place(frames: traceback.StackSummary, folder: Path) -> dict | None:
    """The innermost frame in the student's folder: function, file, line and code."""
    for frame in reversed(frames):
        path = Path(frame.filename)
        if path.is_absolute() and path.resolve().is_relative_to(folder):
            return {
                "function": frame.name,
                "file": path.name,
                "line": frame.lineno,
                "code": (frame.line or "").strip(),
            }
    return None


def _child(lab_id: str, fd: int, names: list[str]) -> None:
    from minimodel.course import find_lab

    checks = {check.name: check for check in lab_checks(find_lab(lab_id))}
    folder = resolve().resolve()
    out = os.fdopen(fd, "w", buffering=1)

    def send(**event: object) -> None:
        out.write(json.dumps(event) + "\n")
        out.flush()

    def answer_where(signum, frame) -> None:
        send(hung=_student_place(traceback.extract_stack(frame), folder))

    signal.signal(signal.SIGUSR1, answer_where)
    watch = Watch(folder, checker=check_module(lab_id).__file__)  # its callbacks are the check's
    for name in names:
        send(start=name)
        status, es, en = "pass", "", ""
        try:
            with warnings.catch_warnings(record=True) as caught, watch:
                warnings.simplefilter("always", CheckNote)
                checks[name].run()
            notes = [w.message for w in caught if isinstance(w.message, CheckNote)]
            if notes:
                es, en = notes[0].es, notes[0].en
        except NotImplementedError as error:
            status = "todo"
            es, en = split_bilingual(str(error))
        except CheckFailure as failure:
            status, es, en = "fail", failure.es, failure.en
        except SyntaxError as error:
            status = "error"
            place = {"file": os.path.basename(error.filename or "?"), "line": error.lineno}
            where_es, where_en = _where(place)
            es = f"tu archivo tiene un error de sintaxis ({where_es}): {error.msg}"
            en = f"your file has a syntax error ({where_en}): {error.msg}"
        except BaseException as error:  # noqa: BLE001 - anything the student's code raises
            status = "error"
            kind = type(error).__name__
            text_es, text_en = split_bilingual(str(error))
            es = f"tu código lanzó {kind}: {text_es}".strip()
            en = f"your code raised {kind}: {text_en}".strip()
            place = _student_place(traceback.extract_tb(error.__traceback__), folder)
            if place is not None:
                where_es, where_en = _where(place)
                es += f"\nEn {place['function']} ({where_es})."
                en += f"\nIn {place['function']} ({where_en})."
        if called := watch.take():  # the grader refuses it too, whatever the values
            status = "fail"
            es, en = explain(Refusal(kind_of(called[0]) or "library", called[0]))
        send(name=name, status=status, es=es, en=en)


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
