"""The worker processes of a grading run: each grades one student at a time, in full.

Workers die with the main process (parent-death signal and a watcher thread) and leave Ctrl-C to
it; each starts its sandbox zygote and kernel server while it waits for its first student. A
worker that crashes takes its student back to the queue once; a second crash reports the student
as not graded (retried on the next run).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from grader.child.isolation import set_parent_death_signal
from grader.trusted import gradebook
from grader.trusted.progress import Progress
from grader.trusted.runs import close_servers, kernel_server, zygote
from grader.trusted.sandbox import enter_private_mounts
from grader.trusted.status import Student


def worker_init(ctx) -> None:
    """Workers die with the main process and leave Ctrl-C to it; each gets a mount namespace of
    its own for its scratch folders; the zygote and the kernel server start loading."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    set_parent_death_signal()
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    _prepare(ctx)


def _prepare(ctx) -> None:
    """A mount namespace of this process's own for its scratch folders (where they are tmpfs);
    the sandbox servers start loading."""
    if ctx.caps.scratch_quota:
        enter_private_mounts()
    with contextlib.suppress(OSError):
        kernel_server(ctx).launch()
        if zygote(ctx) is not kernel_server(ctx):  # a CUDA run's probe groups have their own
            zygote(ctx).launch()


def work(student_id: str, path: str, ctx) -> tuple[str, dict | None, str]:
    from grader.trusted.student import grade_student

    try:
        record = grade_student(student_id, Path(path), ctx)
        gradebook.save(ctx.out, record)
        return student_id, record, ""
    except Exception:  # noqa: BLE001 - reported, retried on the next run
        return student_id, None, traceback.format_exc()


def run_pool(todo, ctx, workers: int, progress: Progress, say) -> list[str]:
    """Grade ``todo`` in worker processes; a crashed worker's students are retried once."""
    attempts: dict[str, int] = {}
    pending = list(todo)
    failures: list[str] = []
    mp = multiprocessing.get_context("spawn")
    while pending:
        batch, pending = pending, []
        with ProcessPoolExecutor(max_workers=min(workers, len(batch)), mp_context=mp,
                                 initializer=worker_init, initargs=(ctx,)) as pool:
            futures = {pool.submit(work, sid, str(path), ctx): (sid, path)
                       for sid, path in batch}
            remaining = set(futures)
            try:
                while remaining:
                    done, remaining = wait(remaining, return_when=FIRST_COMPLETED)
                    for future in done:
                        sid, path = futures[future]
                        try:
                            student_id, record, error = future.result()
                        except BrokenProcessPool:
                            attempts[sid] = attempts.get(sid, 0) + 1
                            if attempts[sid] < 2:
                                pending.append((sid, path))
                            else:
                                failures.append(sid)
                                progress.update(True)
                            continue
                        _report(student_id, record, error, failures, progress, say)
            except KeyboardInterrupt:
                for future in remaining:
                    future.cancel()
                for process in list(getattr(pool, "_processes", {}).values()):
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                say("interrupted: finished students are saved; run again to grade the rest")
                raise
    return failures


def _report(student_id: str, record: dict | None, error: str, failures: list[str],
            progress: Progress, say) -> None:
    """Log one graded student (or the grader's error) and move the progress bar."""
    if record is None:
        failures.append(student_id)
        say(f"  {student_id}: grader error\n{error}", screen=False)
        progress.update(True)
        return
    say(f"  {student_id}: {record['total']:g}/{record['max_total']:g} "
        f"({record['wall_s']:.1f} s) {record['status']}", screen=False)
    progress.update(record.get("status") != Student.OK)


def run_here(todo, ctx, progress: Progress, say) -> list[str]:
    """Grade ``todo`` one student after the other in this process, with no worker process (and
    no retry after a crash): for Gradescope's container, one student in a few hundred MiB."""
    failures: list[str] = []
    _prepare(ctx)
    try:
        for sid, path in todo:
            _report(*work(sid, str(path), ctx), failures, progress, say)
    finally:
        close_servers()
    return failures
