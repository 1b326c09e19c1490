"""Notebook labs: run the student's notebook in the sandbox, record values, judge outside.

nbgrader is kept for what it does well (releasing the lab without solutions, locked cells,
formgrader for the written answers). Autograding is done here instead, under the trust rule:

1. The notebook that runs is rebuilt from the lab source: locked cells come from the source (a
   student who edits one gains nothing), solution cells from the student, cells the student added
   stay where they were. Each auto-graded test cell is replaced by a recorder call that evaluates
   the values named in the lab's hidden checks (``solutions/labs/*/checks.py``) and saves them as
   plain data; no assertion and no expected value ever enters the kernel, and the test cells' hidden
   tests never leave the source.
2. The kernel runs inside the sandbox (``grader/child/kernel_jail.py``): no network, hidden
   files covered, unprivileged, limits, its own PID namespace; the grader talks to it over Unix
   sockets. It is forked by the worker's kernel server, which loaded PyTorch and ipykernel once.
   Output is capped (``Limits.output_kb`` per cell); warnings and stderr cost nothing.
3. The parent reads the recorded files safely and each cell's judge compares them with the values
   the reference notebook recorded (``solutions/labs/*/references.*``).

The kernel is the student's: a cell of theirs can read the recorder cells' sources, and so the
hidden probes' arguments (IPython's ``In``, ``_ih``, ``linecache``, a hook set up by an earlier
cell, or just the arguments its own functions are called with). Nothing in the kernel hides them;
what keeps them in is that a cell's error reaches the feedback as its cell and class only
(:func:`kernel_findings`), as a hidden case's does.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import jupytext
import nbformat

from grader.child.probe_runner import OUT_OF_TIME
from grader.hidden.spec import NotebookChecks
from grader.trusted.findings import SEE_NOTEBOOK, UNSAFE_OUTPUT, out_of_time_finding
from grader.trusted.forkservers import KernelServer, sandbox_config
from grader.trusted.redact import Sources, exception_words
from grader.trusted.safe_io import (
    Beneath,
    OutputCap,
    UnsafeData,
    read_entry,
    read_head,
    read_json,
)
from grader.trusted.sandbox import (
    Capabilities,
    Limits,
    Scratch,
    sandbox_env,
    sandbox_uid,
)
from grader.trusted.status import Notebook
from grader.trusted.verdicts import Finding
from minimodel.course import find_lab
from minimodel.implementation import REPO_ROOT

CODE_STUB = "raise NotImplementedError()"
NBGRADER_DEFAULTS = {"grade": False, "solution": False, "locked": False, "task": False}
LOG_CAP = 64 * 1024  # bytes of the kernel's own output copied to the instructor's log
TIMEOUT = "CellTimeout"  # the error of a cell stopped on its time limit (this module's own)


def source_path(slug: str) -> Path:
    return REPO_ROOT / find_lab(slug).source


def read_source(path: Path) -> nbformat.NotebookNode:
    """Read a lab source into a notebook with complete nbgrader metadata and stable cell ids."""
    notebook = jupytext.read(path)
    for index, cell in enumerate(notebook.cells):
        meta = cell.metadata.get("nbgrader")
        if meta is None:
            cell.id = f"cell-{index:02d}"
            continue
        meta = {**NBGRADER_DEFAULTS, **meta, "schema_version": 3}
        if meta["solution"]:
            meta["locked"] = False
        if meta["grade"] and "points" not in meta:
            raise ValueError(f"{path.name}: graded cell {meta.get('grade_id')!r} has no points")
        cell.metadata["nbgrader"] = meta
        cell.id = meta["grade_id"]
    notebook.metadata = {
        "kernelspec": notebook.metadata.get("kernelspec", {}),
        "language_info": {"name": "python"},
    }
    return notebook


def source_notebook(slug: str) -> nbformat.NotebookNode:
    """The source of lab ``slug`` (:func:`read_source`)."""
    return read_source(source_path(slug))


def graded_cells(source: nbformat.NotebookNode) -> dict[str, dict]:
    """grade_id -> {"points", "kind": "auto" | "manual"} for every graded cell of the source."""
    cells = {}
    for cell in source.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            manual = bool(meta.get("solution")) or cell.cell_type != "code"
            cells[meta["grade_id"]] = {"points": float(meta.get("points", 0)),
                                       "kind": "manual" if manual else "auto"}
    return cells


def record_source(cell_id: str, expressions: dict[str, str]) -> str:
    """The code that replaces one auto-graded test cell."""
    body = ", ".join(f"{name!r}: lambda: ({expr})" for name, expr in expressions.items())
    return f"__minimodel_record({cell_id!r}, {{{body}}})\n"


def setup_source(runner_dir: str, out_dir: str, dead: list[list[str]] = ()) -> str:
    """The first cell: defines ``__minimodel_record`` (``grader/child/recorder.py``), and
    replaces the functions of the student's modules in ``dead`` (those that ran out of their
    time in the probe groups, ``grader.trusted.out_of_time``) by ones that raise at once."""
    dead_arg = f", {[list(map(str, entry)) for entry in dead]!r}" if dead else ""
    return (
        "import sys as _mm_sys\n"
        f"_mm_sys.path.insert(0, {runner_dir!r})\n"
        "from recorder import make_recorder as _mm_make\n"
        f"__minimodel_record = _mm_make({out_dir!r}{dead_arg})\n"
        "del _mm_sys, _mm_make\n"
    )


def _grade_id(cell) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta.get("grade_id") if isinstance(meta, dict) else None


def build_run_notebook(source: nbformat.NotebookNode, student: nbformat.NotebookNode | None,
                       checks: NotebookChecks, runner_dir: str, out_dir: str, *,
                       dead: list[list[str]] = ()) -> tuple:
    """The notebook to execute and a note of what was taken from where.

    ``student=None`` runs the source's own solutions (how the references are recorded);
    ``dead``: the student's functions that ran out of their time (:func:`setup_source`).
    """
    known = {_grade_id(c) for c in source.cells if _grade_id(c)}
    answers: dict[str, str] = {}
    added: dict[str | None, list[str]] = {}
    restored: list[str] = []
    previous = None  # the graded cell a student's added cell comes after
    for cell in student.cells if student is not None else []:
        if cell.get("cell_type") != "code":
            continue
        grade_id = _grade_id(cell)
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        if grade_id in known:
            answers[grade_id] = text
            previous = grade_id
        else:
            added.setdefault(previous, []).append(text)
    record_of = {c.grade_id: c for c in checks.cells}
    cells = [_cell(setup_source(runner_dir, out_dir, dead), "setup", None)]
    cells += [_cell(text, "added", None) for text in added.get(None, [])]
    for cell in source.cells:
        grade_id = _grade_id(cell)
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code":
            if meta.get("grade") and not meta.get("solution"):
                if grade_id in record_of:
                    cells.append(_cell(record_source(grade_id, record_of[grade_id].records),
                                       "record", grade_id))
            elif meta.get("solution"):
                text = cell.source if student is None else answers.get(grade_id, CODE_STUB)
                cells.append(_cell(text, "student", grade_id))
            else:
                if grade_id in answers and answers[grade_id].strip() != cell.source.strip():
                    restored.append(grade_id)
                cells.append(_cell(cell.source, "given", grade_id))
        cells += [_cell(text, "added", None) for text in added.get(grade_id, [])]
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "minimodel-sandbox", "display_name": "sandbox",
                       "language": "python"}})
    return notebook, {"restored_locked_cells": restored,
                      "added_cells": sum(len(v) for v in added.values()),
                      "answered": sorted(answers)}


def _cell(text: str, role: str, grade_id: str | None):
    cell = nbformat.v4.new_code_cell(text)
    cell.metadata["minimodel"] = {"role": role, "grade_id": grade_id}
    return cell


STUDENT_ROLES = ("student", "given", "added")  # the cells a student wrote or can read


def notebook_sources(modules: Sources | None, notebook: nbformat.NotebookNode) -> Sources | None:
    """What a notebook run may say in the feedback: the submission's modules and the cells of
    ``notebook`` the student wrote or can read (never the recorder cells, which name the hidden
    checks); ``None`` for the course's own code."""
    if modules is None:
        return None
    cells = tuple(cell.source for cell in notebook.cells
                  if cell.metadata.get("minimodel", {}).get("role") in STUDENT_ROLES)
    return Sources(modules.files, cells)


def _client_class():
    from nbclient import NotebookClient

    class CappedClient(NotebookClient):
        """Keeps at most ``output_cap`` bytes of output per cell and drops the rest; counts all of
        it (``output_total``)."""

        def __init__(self, notebook, *, output_cap: int, **options):
            super().__init__(notebook, **options)
            self.output_cap = output_cap
            self.output_sizes: dict[int, int] = {}
            self.output_total = 0

        def output(self, outs, msg, display_id, cell_index):
            content = msg.get("content", {})
            size = len(str(content.get("text", ""))) + len(str(content.get("data", "")))
            used = self.output_sizes.get(cell_index, 0) + size
            self.output_sizes[cell_index] = used
            self.output_total += size
            if used > self.output_cap:
                return None
            return super().output(outs, msg, display_id, cell_index)

        async def _async_cleanup_kernel(self) -> None:
            _end_kernel(self.km)  # before nbclient's own shutdown, which kills the proxy at once
            await super()._async_cleanup_kernel()

    return CappedClient


def run_notebook(notebook: nbformat.NotebookNode, *, scratch: Scratch, name: str,
                 caps: Capabilities, limits: Limits, extra_hide: list[Path],
                 log_path: Path, kernels: KernelServer, mpl_cache: Path | None = None,
                 sources: Sources | None = None) -> tuple[Beneath, dict]:
    """Execute ``notebook`` with a sandboxed kernel forked by ``kernels``; return (its folder,
    to be read by ``grader.trusted.safe_io``; how the run went: ``unsafe`` lists what the kernel
    left that could not be read safely, ``cell_errors`` what each failing cell raised, with only
    what ``sources`` allows when given).

    Three steps, as nbgrader's preprocessors: prepare (the run's folder and the kernel spec that
    starts ``grader/child/kernel_jail.py`` in the sandbox), execute (nbclient, with a watchdog),
    collect (the kernel's own output into the instructor's log)."""
    folder = _run_folder(scratch, name, caps, mpl_cache)
    config = _kernel_config(scratch, folder, caps=caps, limits=limits, extra_hide=extra_hide,
                            server=kernels.socket_path)
    spec_dir = _kernel_spec(scratch, name, config)
    kernels.ensure()
    outcome = _execute(notebook, _kernel_manager(spec_dir, folder), folder, limits, sources,
                       ended=config["ended"] and Path(config["ended"]))
    return _collect(scratch, folder, outcome, log_path)


KERNEL_NAME = "minimodel-sandbox"


def _run_folder(scratch: Scratch, name: str, caps: Capabilities,
                mpl_cache: Path | None) -> Path:
    """The kernel's working folder, with matplotlib's font list copied in (owned by the sandbox's
    user where privileges are dropped)."""
    folder = scratch.items / f"nb-{name}"
    folder.mkdir(mode=0o700)
    mpl = folder / ".matplotlib"
    mpl.mkdir()
    for cached in (mpl_cache.glob("fontlist-*.json") if mpl_cache else []):
        shutil.copy2(cached, mpl / cached.name)
    uid = sandbox_uid()
    if caps.drop_privileges:
        for path in (folder, mpl, *mpl.iterdir()):
            os.chown(path, uid, uid)
    return folder


def _kernel_config(scratch: Scratch, folder: Path, *, caps: Capabilities, limits: Limits,
                   extra_hide: list[Path], server: Path) -> dict:
    """What ``kernel_jail.py`` reads: the sandbox, the kernel's environment, its limits, and
    where the proxy says how the kernel ended (with a control group, whose OOM kills it
    counts): a file in the scratch folder's root, which only root can write, never the kernel."""
    return {
        **sandbox_config(scratch, caps, extra_hide=extra_hide, cuda=False),
        "python": sys.executable,
        "workdir": str(folder),
        "env": {**sandbox_env(folder, cuda=False), "PYTHONPATH": str(scratch.course_src),
                "IPYTHONDIR": str(folder / ".ipython"),
                "JUPYTER_CONFIG_DIR": str(folder / ".jupyter"),
                "JUPYTER_RUNTIME_DIR": str(folder), "JUPYTER_DATA_DIR": str(folder),
                "JUPYTER_PLATFORM_DIRS": "1", "MPLCONFIGDIR": str(folder / ".matplotlib")},
        "limits": limits.kernel(),
        "output_kb": limits.output_kb,
        "server": str(server),
        "ended": str(scratch.root / f"{folder.name}.ended.json") if caps.cgroup else None,
    }


def _kernel_spec(scratch: Scratch, name: str, config: dict) -> Path:
    """A kernel spec whose kernel is ``kernel_jail.py`` with ``config``; its folder."""
    config_path = scratch.root / f"kernel-{name}.json"
    config_path.write_text(json.dumps(config))
    spec_dir = scratch.root / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-I", "-S", "-B", str(scratch.runner / "kernel_jail.py"),
                 str(config_path), "{connection_file}"],
        "display_name": "minimodel sandbox", "language": "python",
    }))
    return spec_dir


def _kernel_manager(spec_dir: Path, folder: Path):
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    specs = KernelSpecManager(kernel_dirs=[str(spec_dir.parent)])
    return AsyncKernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs,
                              transport="ipc", ip=str(folder / "k"),
                              connection_file=str(folder / "connection.json"),
                              client_factory=_ready_client_class())


def _ready_client_class():
    from jupyter_client.asynchronous import AsyncKernelClient

    class ReadyClient(AsyncKernelClient):
        """Ready as soon as the kernel is: Jupyter's own client ends its wait with 0.2 s of
        silence on IOPub (a fifth of a second per notebook, spent doing nothing); this one ends
        it when IOPub brings the kernel's ``idle`` after a ``kernel_info`` request, which proves
        the subscription is live (no output of the first cell can be lost). The request is
        made again when IOPub says it has just subscribed (ipykernel's ``iopub_welcome``), or
        after 0.2 s of silence: an ``idle`` sent before then was lost."""

        async def wait_for_ready(self, timeout: float | None = None) -> None:
            from queue import Empty

            deadline = time.monotonic() + (timeout if timeout is not None else float("inf"))
            asked = self.kernel_info()
            while time.monotonic() < deadline:
                try:
                    msg = await self.iopub_channel.get_msg(timeout=0.2)
                except Empty:
                    if not await self.is_alive():
                        raise RuntimeError("Kernel died before replying to kernel_info") from None
                    asked = self.kernel_info()
                    continue
                if msg["msg_type"] == "iopub_welcome":
                    asked = self.kernel_info()
                elif msg["parent_header"].get("msg_id") == asked and \
                        msg["msg_type"] == "status" and \
                        msg["content"].get("execution_state") == "idle":
                    try:
                        while (reply := await self.shell_channel.get_msg(timeout=5))[
                                "parent_header"].get("msg_id") != asked:
                            pass  # the replies to the earlier requests
                    except Empty:
                        raise RuntimeError("the kernel said it was idle but sent no "
                                           "kernel_info_reply") from None
                    self._handle_kernel_info_reply(reply)
                    return
            raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")

    return ReadyClient


def _execute(notebook: nbformat.NotebookNode, manager, folder: Path, limits: Limits,
             sources: Sources | None, *, ended: Path | None) -> dict:
    """Run every cell (errors allowed, each cell and the whole notebook on a time limit); how
    the run went (``ended``: where the proxy says how a kernel that died ended)."""
    from nbclient.exceptions import DeadKernelError

    start = time.monotonic()
    deadline = start + limits.notebook_wall_s
    outcome: dict = {"status": Notebook.FINISHED, "cell_errors": [], "unsafe": []}
    client = _client_class()(
        notebook, output_cap=limits.output_kb * 1024, km=manager,
        timeout_func=lambda cell: int(max(1, min(limits.cell_timeout_s,
                                                 deadline - time.monotonic()))),
        interrupt_on_timeout=True,
        error_on_timeout={"ename": TIMEOUT, "evalue": "cell timed out", "traceback": []},
        allow_errors=True, startup_timeout=90, iopub_timeout=10, record_timing=True,
        shutdown_kernel="immediate", resources={"metadata": {"path": str(folder)}},
        on_cell_executed=partial(_cell_error, outcome["cell_errors"], sources))
    stop = threading.Event()
    threading.Thread(target=_watchdog, args=(stop, limits.notebook_wall_s + 30, outcome, manager),
                     daemon=True).start()
    try:
        client.execute()
    except DeadKernelError:
        if outcome["status"] != Notebook.TIMEOUT:
            outcome["status"] = _death(manager, ended)
    except Exception as error:  # noqa: BLE001 - a kernel that never started, a broken protocol
        if outcome["status"] != Notebook.TIMEOUT:
            outcome["status"] = Notebook.ERROR
        outcome["detail"] = f"{type(error).__name__}: {str(error)[:500]}"
    finally:
        stop.set()
        _shut_down(manager, client)
    if time.monotonic() > deadline and outcome["status"] == Notebook.FINISHED:
        outcome["status"] = Notebook.TIMEOUT
    outcome["wall_s"] = round(time.monotonic() - start, 2)
    outcome["output_bytes"] = client.output_total
    return outcome


def _cell_error(errors: list[dict], sources: Sources | None, cell, cell_index: int,
                execute_reply) -> None:
    """nbclient's ``on_cell_executed``: what a failing cell raised is added to ``errors``
    (with only what ``sources`` allows, when given)."""
    content = (execute_reply or {}).get("content", {})
    if content.get("status") != "error":  # the kernel's reply, not a status of ours
        return
    role = cell.metadata.get("minimodel", {})
    error = {"type": str(content.get("ename", ""))[:100],
             "message": str(content.get("evalue", ""))[:2000]}
    if sources is not None and error["type"] != TIMEOUT:
        error = sources.clean_error(error)
    errors.append({"index": cell_index, "role": role.get("role"),
                   "grade_id": role.get("grade_id"), "ename": error["type"],
                   "evalue": error["message"]})


def _watchdog(stop: threading.Event, wall_s: float, outcome: dict, manager) -> None:
    """A kernel that ignores interrupts still ends on time."""
    if not stop.wait(wall_s):
        outcome["status"] = Notebook.TIMEOUT
        _end_kernel(manager)


def _shut_down(manager, client) -> None:
    from jupyter_core.utils import run_sync

    _end_kernel(manager)
    with contextlib.suppress(Exception):
        run_sync(manager.shutdown_kernel)(now=True)
    _kill_kernel(manager)
    with contextlib.suppress(Exception):
        if client.kc:
            client.kc.stop_channels()


def _collect(scratch: Scratch, folder: Path, outcome: dict,
             log_path: Path) -> tuple[Beneath, dict]:
    """The run's folder, to be read safely, and the kernel's own output copied to the
    instructor's log (what cannot be read safely goes to ``unsafe``)."""
    written = Beneath(scratch.items) / folder.name
    try:
        kernel_log = read_head(written / "kernel-output.log", LOG_CAP)
    except UnsafeData as error:
        outcome["unsafe"].append(str(error))
        kernel_log = None
    with open(log_path, "ab") as log:
        log.write(kernel_log or b"")
    return written, outcome


def _death(manager, ended: Path | None) -> Notebook:
    """Why the kernel died: :attr:`Notebook.MEMORY` when, once its proxy has exited, the
    proxy's report ``ended`` counts OOM kills in the kernel's control group (read there by the
    jail, as root: no exit code the kernel can choose says it), else
    :attr:`Notebook.KERNEL_DIED`."""
    process = getattr(getattr(manager, "provisioner", None), "process", None)
    with contextlib.suppress(Exception):  # no process, no report, or a proxy that does not end
        process.wait(timeout=15)
        if ended is not None and json.loads(ended.read_text(encoding="utf-8"))["oom_kills"] > 0:
            return Notebook.MEMORY
    return Notebook.KERNEL_DIED


PROXY_EXIT_S = 30  # what ending a kernel and everything of its user takes, on a busy machine


def _end_kernel(manager) -> None:
    """End the kernel and wait until its proxy exits. The proxy passes ``SIGTERM`` on to the
    jail, which kills the kernel, then every process of the sandbox's user and what is left in
    the kernel's control group, and only then lets the proxy exit: waiting for that exit means
    that no part of this clean-up can reach a run that starts after it (the next probe group
    runs as the same user). A proxy that does not exit in :data:`PROXY_EXIT_S` is killed."""
    process = getattr(getattr(manager, "provisioner", None), "process", None)
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=PROXY_EXIT_S)
    except subprocess.TimeoutExpired:
        _kill_kernel(manager)


def _kill_kernel(manager) -> None:
    provisioner = getattr(manager, "provisioner", None)
    process = getattr(provisioner, "process", None)
    if process is not None and process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                process.kill()


def read_records(folder: Beneath, checks: NotebookChecks, unsafe: list[str],
                 sources: Sources | None = None) -> dict[str, dict[str, dict | None]]:
    """grade_id -> name -> recorded value (validated; its exception with only what ``sources``
    allows, when given), or ``None`` when never recorded; what could not be read safely is added
    to ``unsafe``. The arrays are read under an ``OutputCap``, each record a case of it and the
    notebook its lab: a record over it is invalid, and named in ``unsafe``."""
    records: dict[str, dict[str, dict | None]] = {}
    cap = OutputCap()
    for cell in checks.cells:
        values: dict[str, dict | None] = {name: None for name in cell.records}
        base = folder / "records" / cell.grade_id
        try:
            data = read_json(base / "record.json")
        except UnsafeData as error:
            unsafe.append(str(error))
            data = None
        for name in cell.records if isinstance(data, dict) else ():
            if isinstance(data.get(name), dict):
                cap.next_case()
                values[name] = read_entry(base, name, data[name], 2000, located=False,
                                          sources=sources, outputs=cap)
        records[cell.grade_id] = values
    unsafe += cap.refused
    return records


RUN_FINDINGS = {  # a notebook run that did not finish, by its status
    Notebook.TIMEOUT: Finding("nb-timeout",
                       "El cuaderno no terminó a tiempo; las celdas que no llegaron a "
                       "ejecutarse no puntúan.",
                       "The notebook did not finish in time; cells that never ran "
                       "score nothing."),
    Notebook.KERNEL_DIED: Finding("nb-kernel-died",
                           "El kernel del cuaderno murió durante la ejecución (¿sys.exit, "
                           "os._exit o falta de memoria?); lo que venía después no puntúa.",
                           "The notebook's kernel died while running (sys.exit, os._exit or "
                           "out of memory?); what came after scores nothing."),
    Notebook.MEMORY: Finding("nb-memory",
                      "El kernel del cuaderno superó su límite de memoria (el del kernel y todo "
                      "lo que lanza, juntos) y se detuvo; lo que venía después no puntúa.",
                      "The notebook's kernel went over its memory limit (the kernel and all it "
                      "starts, together) and was stopped; what came after scores nothing."),
    Notebook.ERROR: Finding("nb-error",
                     "El corrector no pudo ejecutar el cuaderno; el profesorado lo revisará.",
                     "The grader could not run the notebook; your instructor will review it."),
}


def kernel_findings(outcome: dict, build: dict) -> list[Finding]:
    """What the student should know about the notebook run as a whole."""
    status = outcome.get("status")
    findings = [RUN_FINDINGS[status]] if status in RUN_FINDINGS else []
    if outcome.get("unsafe"):
        findings.append(UNSAFE_OUTPUT)
    for error in outcome.get("cell_errors", [])[:3]:
        where, where_en = error.get("grade_id") or "añadida", error.get("grade_id") or "added"
        if error.get("ename") in OUT_OF_TIME:
            findings.append(out_of_time_finding(f"La celda «{where}» no terminó",
                                                f"Cell '{where_en}' did not finish"))
        elif error.get("ename") == TIMEOUT:
            findings.append(Finding("nb-cell-timeout",
                                    f"La celda «{where}» superó el tiempo límite.",
                                    f"Cell '{where_en}' went over the time limit."))
        elif error.get("role") in STUDENT_ROLES:  # the class only: see exception_findings
            name_es, name_en = exception_words(error["ename"])
            said = {"NotImplementedError": (": todavía sin implementar.", ": not implemented yet."),
                    "KeyboardInterrupt": (": interrumpida al superar el tiempo límite.",
                                          ": interrupted: it went over the time limit.")
                    }.get(error["ename"], (f".{SEE_NOTEBOOK[0]}", f".{SEE_NOTEBOOK[1]}"))
            findings.append(Finding("nb-cell-error", f"La celda «{where}» lanzó {name_es}{said[0]}",
                                    f"Cell '{where_en}' raised {name_en}{said[1]}"))
    if build.get("restored_locked_cells"):
        listed = ", ".join(build["restored_locked_cells"])
        findings.append(Finding("nb-locked-restored",
                                f"Se usó la versión original de las celdas bloqueadas que "
                                f"modificaste ({listed}).",
                                f"The original version of the locked cells you modified was "
                                f"used ({listed}).", scoring=False))
    return findings
