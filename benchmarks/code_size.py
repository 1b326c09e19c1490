"""Lines of checking code (self-check, hidden checks, catalogue of mistakes, course building,
grading), prose aside.

A line counts when it holds a token other than a string, a comment or layout: docstrings and the
bilingual messages (string literals) do not count, nor blank lines. ``--at REV`` counts a commit
instead of the working tree, so that a refactoring can be compared with what came before::

    python benchmarks/code_size.py --at 72d9429
    python benchmarks/code_size.py
"""

from __future__ import annotations

import argparse
import io
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = {
    "self-check": ("src/minimodel/selfcheck",),
    "hidden checks": ("grader/hidden",),  # with each lab's solutions/labs/<slug>/checks.py
    "catalogue of mistakes": ("solutions/mistakes",),  # shared by the self-check and the grader
    "course building": ("grader/build",),
    "grading (the rest)": ("grader",),
}
# modules of grader/build/ that lived in grader/ before it existed, counted with it at any revision
BUILD_MODULES = ("stubs", "notebooks", "references", "snapshots", "mistakes", "sync", "release",
                 "nbgrader_course", "nbgrader_refusal", "leaks")
FOLDERS = ("src/minimodel/selfcheck", "grader", "solutions/labs", "solutions/mistakes")
PROSE = {tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
         tokenize.DEDENT, tokenize.ENDMARKER, tokenize.ENCODING}


def code_lines(text: str) -> int:
    """Lines with at least one token that is not prose or layout."""
    lines = set()
    for token in tokenize.tokenize(io.BytesIO(text.encode()).readline):
        if token.type not in PROSE:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines)


def files(rev: str | None) -> dict[str, str]:
    """path -> text of every Python file under the parts' folders."""
    if rev is None:
        paths = [p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))]
        return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in paths
                if not p.is_relative_to(ROOT / "solutions/labs") or p.name == "checks.py"}
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, *FOLDERS], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    return {path: subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True,
                                 text=True, check=True).stdout
            for path in listed.stdout.split() if path.endswith(".py") and (
                not path.startswith("solutions/labs/") or path.endswith("/checks.py"))}


def sizes(rev: str | None) -> dict[str, tuple[str, int]]:
    """path -> (part, lines of code) of every file counted."""
    found = {}
    for path, text in files(rev).items():
        original = path
        if path in {f"grader/{m}.py" for m in BUILD_MODULES}:
            path = "grader/build/" + path.removeprefix("grader/")
        if path.startswith("solutions/labs/"):  # a lab's hidden checks
            path = "grader/hidden/" + path
        part = next(name for name, (folder,) in PARTS.items() if path.startswith(folder + "/"))
        found[original] = (part, code_lines(text))
    return found


def count(rev: str | None) -> dict[str, int]:
    totals = dict.fromkeys(PARTS, 0)
    for part, lines in sizes(rev).values():
        totals[part] += lines
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", help="a git revision (default: the working tree)")
    parser.add_argument("--files", action="store_true", help="also every file, largest first")
    args = parser.parse_args()
    if args.files:
        for path, (part, lines) in sorted(sizes(args.at).items(), key=lambda e: -e[1][1]):
            print(f"{lines:6d}  {part:22s} {path}")
    totals = count(args.at)
    for part, lines in totals.items():
        print(f"{part:22s} {lines:6d}")
    print(f"{'total':22s} {sum(totals.values()):6d}")


if __name__ == "__main__":
    main()
