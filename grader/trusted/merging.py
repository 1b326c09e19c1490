"""Join grading folders (the shards of a split class) and the written answers graded by hand.

``merge`` refuses, saying why in both languages, anything that would mix grades silently:

- a folder that is not a finished grading folder (no ``run.json``), or whose records were graded
  with other settings than its run (a stale record), or that misses some of its students;
- shards of different splits (``--shard i/3`` with ``j/4``), a shard missing or given twice;
- folders graded with different settings: other labs (``--lab``), another device mode
  (``cpu`` / ``cuda-report`` / ``cuda``), other limits or another version of the grader;
- a student in two folders, or an ``--out`` folder that already holds other students.

The written answers graded in formgrader come back through
``grader.build.nbgrader_course.merge_manual``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.trusted.gradebook import (
    load_records,
    load_run,
    rebuild,
    record_path,
    safe_id,
    write_run,
)
from grader.trusted.safe_io import atomic_write_json
from minimodel.messages import bilingual

SETTING_NAMES = {"labs": ("los laboratorios (--lab)", "the labs (--lab)"),
                 "device": ("el dispositivo (--device)", "the device (--device)"),
                 "limits": ("los límites (--timeout, --memory, ...)",
                            "the limits (--timeout, --memory, ...)"),
                 "code": ("la versión del corrector", "the grader's version"),
                 "isolation": ("el aislamiento que la máquina permite (cgroups, namespaces)",
                               "the isolation the machine allows (cgroups, namespaces)")}


class MergeError(ValueError):
    """The folders cannot be merged; the message says why, in Spanish and English."""


def _refuse(es: str, en: str) -> MergeError:
    return MergeError(bilingual(es, en))


def check_sources(sources: list[Path], out: Path) -> list[tuple[Path, dict, list[dict]]]:
    """Each source with its run and records, once every check passed; ``MergeError`` if not."""
    loaded = []
    for source in sources:
        run = load_run(source)
        if run is None:
            raise _refuse(f"{source} no es una carpeta de corrección (falta run.json).",
                          f"{source} is not a grading folder (no run.json).")
        records = load_records(source)
        stale = sorted(r["student_id"] for r in records if r.get("config") != run["config"])
        if stale:
            raise _refuse(
                f"{source}: {len(stale)} registros se corrigieron con otra configuración que la "
                f"de su última ejecución ({', '.join(stale[:5])}); vuelve a corregir esa carpeta.",
                f"{source}: {len(stale)} records were graded with other settings than its last "
                f"run ({', '.join(stale[:5])}); grade that folder again.")
        ids = {r["student_id"] for r in records}
        missing = sorted(set(run["students"]) - ids)
        if missing:
            raise _refuse(
                f"{source}: quedan {len(missing)} de {len(run['students'])} estudiantes sin "
                f"corregir ({', '.join(missing[:5])}); ejecuta grade otra vez en esa carpeta.",
                f"{source}: {len(missing)} of {len(run['students'])} students are not graded "
                f"({', '.join(missing[:5])}); run grade again on that folder.")
        extra = sorted(ids - set(run["students"]))
        if extra:
            raise _refuse(
                f"{source} tiene registros de estudiantes que su ejecución no incluye "
                f"({', '.join(extra[:5])}).",
                f"{source} holds records of students its run does not include "
                f"({', '.join(extra[:5])}).")
        loaded.append((source, run, records))
    _check_settings(loaded)
    _check_shards(loaded)
    seen: dict[str, Path] = {}
    for source, _, records in loaded:
        for record in records:
            other = seen.setdefault(record["student_id"], source)
            if other != source:
                raise _refuse(f"{record['student_id']} está en {other} y en {source}.",
                              f"{record['student_id']} is in both {other} and {source}.")
    if out.resolve() not in {s.resolve() for s in sources}:
        already = sorted({r["student_id"] for r in load_records(out)} - set(seen))
        if already:
            raise _refuse(f"{out} ya contiene otros estudiantes ({', '.join(already[:5])}); "
                          "usa una carpeta nueva.",
                          f"{out} already holds other students ({', '.join(already[:5])}); "
                          "use a new folder.")
    return loaded


def _check_settings(loaded) -> None:
    first_source, first, _ = loaded[0]
    for source, run, _ in loaded[1:]:
        for key, (es, en) in SETTING_NAMES.items():
            if run["settings"].get(key) != first["settings"].get(key):
                raise _refuse(
                    f"{first_source} y {source} se corrigieron con distinto valor de {es}: "
                    f"{first['settings'].get(key)} y {run['settings'].get(key)}.",
                    f"{first_source} and {source} were graded with different {en}: "
                    f"{first['settings'].get(key)} and {run['settings'].get(key)}.")


def _check_shards(loaded) -> None:
    shards = [(source, run.get("shard")) for source, run, _ in loaded]
    if all(shard is None for _, shard in shards):
        return
    counts = {tuple(shard)[1] if shard else None for _, shard in shards}
    if len(counts) != 1 or None in counts:
        raise _refuse("Las carpetas no son partes del mismo reparto (--shard i/n con el mismo "
                      "n en todas).",
                      "The folders are not shards of one split (--shard i/n with the same n in "
                      "all of them).")
    (count,) = counts
    by_index: dict[int, Path] = {}
    for source, (index, _) in shards:
        if index in by_index:
            raise _refuse(f"La parte {index}/{count} aparece dos veces: {by_index[index]} y "
                          f"{source}.",
                          f"Shard {index}/{count} is given twice: {by_index[index]} and "
                          f"{source}.")
        by_index[index] = source
    missing = sorted(set(range(count)) - set(by_index))
    if missing:
        listed = ", ".join(f"{i}/{count}" for i in missing)
        raise _refuse(f"Faltan partes del reparto: {listed}.", f"Shards missing: {listed}.")


def merge(sources: list[Path], out: Path) -> int:
    """Check ``sources`` (see the module's docstring), copy their records and logs into ``out``
    and rebuild it. Returns how many records were merged."""
    loaded = check_sources(sources, out)
    students = []
    for source, _, records in loaded:
        students += [record["student_id"] for record in records]
        if source.resolve() == out.resolve():
            continue  # its records and logs are already there
        for record in records:
            atomic_write_json(record_path(out, record["student_id"]), record)
            log_file = source / "logs" / f"{safe_id(record['student_id'])}.log"
            if log_file.exists():
                (out / "logs").mkdir(parents=True, exist_ok=True)
                shutil.copy2(log_file, out / "logs" / log_file.name)
    first = loaded[0][1]
    write_run(out, {"settings": first["settings"], "config": first["config"], "shard": None,
                    "students": sorted(students),
                    "merged_from": [str(source) for source, _, _ in loaded]})
    rebuild(out, rewrite_feedback=True)
    return len(students)
