"""``make submit``: the archive a student hands in, checked before it is announced.

The archive holds exactly what the grader takes, at the paths it expects: every encoding file of
``src/minimodel/positional/`` and every lab notebook of ``labs/``. Nothing else goes in (no
``.venv``, no caches, no data). Before saying where the archive is, the command reopens it,
compares it byte for byte with the files, and reports per lab what was started, what is still the
untouched stub and what cannot be graded (a syntax error, a notebook that is not valid JSON). A
module that takes its answers from elsewhere (the self-check, another library's implementation:
``minimodel.own_work``) is named, with why, before the archive is written.

Usage: ``python -m minimodel.submit [--out build/submission.zip] [--lang es|en]``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from minimodel import generated
from minimodel.course import LABS
from minimodel.implementation import REPO_ROOT
from minimodel.messages import LANGUAGES, pick
from minimodel.own_work import explain, refused_modules

POSITIONAL = "src/minimodel/positional"


@dataclass(frozen=True)
class Entry:
    """One file of the submission and what the check found.

    Attributes:
        name: path inside the archive (and inside the repository), e.g.
            ``labs/17_01_sinusoidal.ipynb``.
        state: ``"started"``, ``"untouched"`` (still as released), ``"missing"`` or ``"broken"``.
        detail: why it is broken (empty otherwise).
    """

    name: str
    state: str
    detail: str = ""


def expected_files() -> list[str]:
    """Every path the grader takes, in course order."""
    names = []
    for lab in LABS:
        names += [f"{POSITIONAL}/{module}.py" for module in lab.modules]
        names.append(f"labs/{lab.slug}.ipynb")
    return list(dict.fromkeys(names))


def inspect(root: Path, name: str) -> Entry:
    """The state of one file of the submission."""
    path = root / name
    if not path.is_file():
        return Entry(name, "missing")
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".py":
            ast.parse(text, filename=name)
        else:
            if not isinstance(json.loads(text).get("cells"), list):
                raise ValueError("a notebook has a list of cells")
    except SyntaxError as error:
        return Entry(name, "broken", pick(f"error de sintaxis en la línea {error.lineno}",
                                          f"syntax error on line {error.lineno}"))
    except (UnicodeDecodeError, ValueError, AttributeError):
        return Entry(name, "broken", pick("no es un cuaderno válido (JSON dañado)",
                                          "not a valid notebook (damaged JSON)"))
    return Entry(name, "untouched" if generated.is_pristine(path) else "started")


def write_archive(root: Path, entries: list[Entry], out: Path) -> None:
    """Zip the present files of ``entries`` into ``out`` (written whole, then renamed)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for entry in entries:
            if entry.state != "missing":
                archive.write(root / entry.name, entry.name)
    os.replace(partial, out)


def verify(root: Path, entries: list[Entry], out: Path) -> list[str]:
    """Problems found when the archive is read back (empty when it holds exactly the files)."""
    wanted = {e.name for e in entries if e.state != "missing"}
    with zipfile.ZipFile(out) as archive:
        names = set(archive.namelist())
        problems = [f"{n}: unexpected" for n in sorted(names - wanted)]
        problems += [f"{n}: not in the archive" for n in sorted(wanted - names)]
        problems += [f"{n}: differs from your file" for n in sorted(wanted & names)
                     if archive.read(n) != (root / n).read_bytes()]
    return problems


def report(entries: list[Entry], root: Path) -> str:
    """One line per lab: its files and their state, in the reader's language."""
    words = {"started": pick("empezado", "started"),
             "untouched": pick("sin empezar (como se entregó)", "not started (as released)"),
             "missing": pick("FALTA", "MISSING"), "broken": pick("NO SE PUEDE CALIFICAR",
                                                                 "CANNOT BE GRADED")}
    by_name = {e.name: e for e in entries}
    lines = []
    for lab in LABS:
        names = [f"{POSITIONAL}/{m}.py" for m in lab.modules] + [f"labs/{lab.slug}.ipynb"]
        for name in names:
            entry = by_name[name]
            when = ""
            if entry.state != "missing":
                # ISO 8601 in both languages: 07/12 is July in one country and December in another
                stamp = time.strftime("%Y-%m-%d %H:%M",
                                      time.localtime((root / name).stat().st_mtime))
                when = pick(f"  guardado {stamp}", f"  saved {stamp}")
            detail = f": {entry.detail}" if entry.detail else ""
            lines.append(f"  {lab.id}  {name:<44} {words[entry.state]}{detail}{when}")
    return "\n".join(lines)


def warn_borrowed(root: Path, entries: list[Entry], stream) -> None:
    """Say, before the archive is written, which modules take their answers from elsewhere
    (``minimodel.own_work``): the grader gives their items 0, and the self-check says so too."""
    modules = {Path(e.name).stem: (root / e.name).read_bytes() for e in entries
               if e.name.startswith(POSITIONAL) and e.state in ("started", "untouched")}
    refused = refused_modules(modules)
    if not refused:
        return
    print(pick("\nAtención: el corrector dará 0 a lo que depende de estos archivos:",
               "\nWarning: the grader will give 0 to what depends on these files:"),
          file=stream)
    for module, refusal in refused.items():
        print("  " + pick(*explain(refusal, f"{module}.py")), file=stream)


def refuse(out: Path, stream) -> int:
    """A refused submission leaves no archive behind: an older one at ``out`` would be uploaded
    as if it were this one. Its files are still in the repository. Returns 1."""
    if out.is_file():
        out.unlink()
        print(pick(f"He borrado el archivo de una entrega anterior ({out}), para que no lo subas "
                   "por error.",
                   f"I removed the archive of an earlier submission ({out}), so that you do not "
                   "upload it by mistake."), file=stream)
    return 1


def submit(root: Path = REPO_ROOT, out: Path | None = None, stream=sys.stdout) -> int:
    """Write and check the archive; 0 when it is ready to hand in, 1 when it cannot be."""
    out = (out or root / "build" / "submission.zip").resolve()
    entries = [inspect(root, name) for name in expected_files()]
    print(pick("Tu entrega contiene:", "Your submission holds:"), file=stream)
    print(report(entries, root), file=stream)
    broken = [e for e in entries if e.state == "broken"]
    if broken:
        print(pick("\nNo he escrito el archivo: arregla antes lo que no se puede calificar.",
                   "\nNo archive written: first fix what cannot be graded."), file=stream)
        return refuse(out, stream)
    if all(e.state == "missing" for e in entries):
        print(pick("\nNo encuentro ningún archivo del curso aquí.",
                   "\nI find none of the course's files here."), file=stream)
        return refuse(out, stream)
    warn_borrowed(root, entries, stream)
    write_archive(root, entries, out)
    problems = verify(root, entries, out)
    if problems:
        print(pick("\nEl archivo no coincide con tus archivos; vuelve a ejecutar make submit:",
                   "\nThe archive does not match your files; run make submit again:"),
              *problems, sep="\n", file=stream)
        return 1
    started = sum(e.state == "started" for e in entries)
    print(pick(f"\nComprobado: {len(entries)} archivos, {started} con trabajo tuyo. "
               f"Guarda tus cuadernos antes de entregar (Ctrl+S en JupyterLab).\n"
               f"Sube este archivo: {out}",
               f"\nChecked: {len(entries)} files, {started} with your work. "
               f"Save your notebooks before handing in (Ctrl+S in JupyterLab).\n"
               f"Upload this file: {out}"), file=stream)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None,
                        help="archive to write (default: build/submission.zip)")
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help="es | en")
    args = parser.parse_args(argv)
    if args.lang:
        os.environ["MINIMODEL_LANG"] = args.lang
    return submit(out=args.out)


if __name__ == "__main__":
    sys.exit(main())
