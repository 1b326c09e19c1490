"""``make sync``: regenerate every generated file from ``solutions/``; ``--check`` finds drift.

Generated files: the student stubs (``src/minimodel/positional/``) and the student notebooks
(``labs/``). ``python -m grader.sync`` rewrites them; ``python -m grader.sync --check`` writes
nothing and exits 1 listing the files whose committed copy differs from what would be generated.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from grader import notebooks, stubs
from minimodel.implementation import REPO_ROOT


def generated_files(root: Path = REPO_ROOT) -> dict[Path, str]:
    """Every generated path and the text it must hold."""
    files = stubs.generate(root / "solutions" / "positional", root / "src/minimodel/positional")
    files.update(notebooks.generate(root / "solutions" / "labs", root / "labs"))
    return files


def drifted(files: dict[Path, str]) -> list[Path]:
    """Paths whose file on disk is missing or differs from the generated text."""
    return [
        path
        for path, text in files.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report drift, write nothing")
    args = parser.parse_args(argv)
    files = generated_files()
    stale = drifted(files)
    if args.check:
        for path in stale:
            old = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
            diff = difflib.unified_diff(old, files[path].splitlines(), str(path), "generated", n=1)
            print("\n".join(list(diff)[:40]))
        print(
            f"{len(stale)} generated file(s) out of date; run `make sync`." if stale else "in sync"
        )
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[path], encoding="utf-8")
        print(f"wrote {path.relative_to(REPO_ROOT)}")
    print(f"{len(files)} generated file(s), {len(stale)} updated.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
