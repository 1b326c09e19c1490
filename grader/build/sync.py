"""``make sync``: regenerate every generated file from ``solutions/``; ``--check`` finds drift.

Generated files: the student stubs (``src/minimodel/positional/``) and the student notebooks
(``labs/``). ``python -m grader.build.sync`` rewrites those that are out of date; ``--check`` writes
nothing and exits 1 listing the files whose copy differs from what would be generated.

These are the very files a student edits, so a file somebody wrote in (its fingerprint no longer
matches, see ``minimodel.generated``) is never overwritten silently: ``make sync`` refuses and
changes nothing, and ``--keep-copies`` first moves the edited files to
``saved-work/<date-time>/`` (same relative paths) and says so.
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import subprocess
import sys
import time
from pathlib import Path

from grader.build import notebooks, stubs
from minimodel import generated
from minimodel.course import find_lab
from minimodel.implementation import REPO_ROOT
from minimodel.messages import bilingual

SAVED_DIR = "saved-work"


def generated_files(root: Path = REPO_ROOT) -> dict[Path, str]:
    """Every generated path and the text it must hold."""
    files = stubs.generate(root / "solutions" / "positional", root / "src/minimodel/positional")
    files.update(notebooks.generate(root))
    return files


def drifted(files: dict[Path, str]) -> list[Path]:
    """Paths whose file on disk is missing or differs from the generated text."""
    return [
        path
        for path, text in files.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]


def edited(paths: list[Path], root: Path = REPO_ROOT) -> list[Path]:
    """The files among ``paths`` that somebody wrote in: not as generated, not as committed."""
    return [
        path for path in paths
        if path.exists() and not generated.is_pristine(path)
        and path.read_text(encoding="utf-8") != committed_text(path, root)
    ]


def committed_text(path: Path, root: Path = REPO_ROOT) -> str | None:
    """``path`` as the last commit holds it, or None (no git, or not committed)."""
    try:
        shown = subprocess.run(
            ["git", "show", f"HEAD:{path.resolve().relative_to(root.resolve()).as_posix()}"],
            cwd=root, capture_output=True, check=True)
    except (OSError, ValueError, subprocess.CalledProcessError):
        return None
    return shown.stdout.decode("utf-8")


def checked_text(path: Path, root: Path = REPO_ROOT) -> str | None:
    """The copy of a generated file that the drift check compares with its source.

    The file itself while nobody edited it; once a student wrote in it, the committed version:
    their work is theirs, not drift (and the file they edit is never judged here).
    """
    if not path.exists():
        return None
    if generated.is_pristine(path):
        return path.read_text(encoding="utf-8")
    committed = committed_text(path, root)
    return committed if committed is not None else path.read_text(encoding="utf-8")


def released_text(path: Path, root: Path = REPO_ROOT) -> str:
    """A generated file as students receive it, whatever a student wrote in their copy.

    For tests and samples that need the untouched stub or notebook: the file itself while
    pristine, else its committed version, else what ``make sync`` would write.
    """
    if generated.is_pristine(path):
        return path.read_text(encoding="utf-8")
    committed = committed_text(path, root)
    relative = path.resolve().relative_to(root.resolve())
    if committed is not None and generated.is_pristine_text(committed, relative.suffix):
        return committed
    if relative.suffix == ".ipynb":
        return notebooks.release_text(root / find_lab(relative.stem).source)
    return stubs.make_stub(
        (root / "solutions" / "positional" / relative.name).read_text(encoding="utf-8"),
        relative.stem)


def out_of_date(files: dict[Path, str], root: Path = REPO_ROOT) -> list[Path]:
    """Generated files whose checked copy (see ``checked_text``) differs from their source."""
    return [path for path, text in files.items() if checked_text(path, root) != text]


def keep_copies(paths: list[Path], root: Path = REPO_ROOT) -> Path:
    """Move ``paths`` under ``saved-work/<date-time>/`` (same relative paths); return the folder."""
    folder = root / SAVED_DIR / time.strftime("%Y%m%d-%H%M%S")
    while folder.exists():
        folder = folder.with_name(folder.name + "+")
    for path in paths:
        target = folder / path.resolve().relative_to(root.resolve())
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(path, target)
    return folder


def refusal(paths: list[Path], root: Path = REPO_ROOT) -> str:
    names = "\n".join(f"  {p.resolve().relative_to(root.resolve())}" for p in paths)
    return bilingual(
        "make sync no ha cambiado nada: estos archivos tienen trabajo tuyo y regenerarlos lo "
        "borraría:\n" + names + "\nSi quieres conservarlos aparte y regenerar: "
        "make sync KEEP_COPIES=1 (los mueve a saved-work/).",
        "make sync changed nothing: these files hold your work and regenerating them would "
        "erase it:\n" + names + "\nTo keep them aside and regenerate: make sync KEEP_COPIES=1 "
        "(moves them to saved-work/).",
    )


def sync(root: Path = REPO_ROOT, *, keep: bool = False, out=sys.stdout) -> int:
    """Write the out-of-date generated files under ``root``; 1 (and nothing written) when one
    of them holds somebody's work and ``keep`` is not set."""
    files = generated_files(root)
    stale = drifted(files)
    mine = edited(stale, root)
    if mine and not keep:
        print(refusal(mine, root), file=out)
        return 1
    if mine:
        folder = keep_copies(mine, root)
        print(bilingual(f"Tu trabajo está a salvo en {folder}", f"Your work is kept in {folder}"),
              file=out)
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[path], encoding="utf-8")
        print(f"wrote {path.relative_to(root)}", file=out)
    print(f"{len(files)} generated file(s), {len(stale)} updated.", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report drift, write nothing")
    parser.add_argument("--keep-copies", action="store_true",
                        help="move edited generated files to saved-work/ before regenerating")
    args = parser.parse_args(argv)
    if not args.check:
        return sync(keep=args.keep_copies)
    files = generated_files()
    stale = out_of_date(files)
    for path in stale:
        old = (checked_text(path) or "").splitlines()
        diff = difflib.unified_diff(old, files[path].splitlines(), str(path), "generated", n=1)
        print("\n".join(list(diff)[:40]))
    print(f"{len(stale)} generated file(s) out of date; run `make sync`." if stale else "in sync")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
