"""Generated files that know they are generated: a fingerprint of what was written.

The course's generator writes the stubs (``src/minimodel/positional/*.py``) and the lab notebooks
(``labs/*.ipynb``); these are exactly the files a student then edits. Each one carries a stamp,
``minimodel-generated:<12 hex digits>``, the fingerprint of its content as it was written. When the
fingerprint no longer matches, somebody wrote in the file, and no course command overwrites it
without asking (the generator refuses; ``make submit`` knows which labs were started).

What counts as content: the whole text of a ``.py`` file; the cells' types and sources of a
notebook (running a notebook or saving it from JupyterLab adds outputs and metadata, which are not
what a student wrote).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

STAMP = re.compile(r"minimodel-generated:([0-9a-f]{12})")
BLANK = "minimodel-generated:" + "0" * 12
# A stub's block for the student, which starts by raising NotImplementedError until it is done.
START_MARK = "# ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======"
END_MARK = "# ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======"
UNFINISHED = re.compile(rf"^[ \t]*{re.escape(START_MARK)}\n[ \t]*raise NotImplementedError\b", re.M)


def _content(text: str, suffix: str) -> str:
    """The part of a file the fingerprint covers, with the stamp blanked."""
    text = STAMP.sub(BLANK, text)
    if suffix != ".ipynb":
        return text
    cells = json.loads(text).get("cells", [])
    return json.dumps([[c.get("cell_type"), _source(c)] for c in cells], ensure_ascii=False)


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def fingerprint(text: str, suffix: str) -> str:
    """Twelve hex digits that change whenever the content changes."""
    return hashlib.sha256(_content(text, suffix).encode("utf-8")).hexdigest()[:12]


def stamped(text: str, suffix: str) -> str:
    """``text`` (which holds the blank stamp exactly once) with its fingerprint filled in."""
    if text.count(BLANK) != 1:
        raise ValueError(f"a generated {suffix} file must hold {BLANK!r} exactly once")
    return text.replace(BLANK, BLANK[: -12] + fingerprint(text, suffix))


def unfinished(path: Path) -> int:
    """How many blocks of the stub at ``path`` still raise ``NotImplementedError`` (0 for a file
    that is done, or that is missing or cannot be read: that is for the checks to say)."""
    try:
        return len(UNFINISHED.findall(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError):
        return 0


def is_pristine(path: Path) -> bool:
    """True when ``path`` holds what was generated, untouched; False once anybody wrote in it.

    A file without a stamp, or one that cannot be read, is not pristine: it is treated as
    somebody's work.
    """
    try:
        return is_pristine_text(path.read_text(encoding="utf-8"), path.suffix)
    except (OSError, UnicodeDecodeError):
        return False


def is_pristine_text(text: str, suffix: str) -> bool:
    """``is_pristine`` for a file's text (``suffix``: ``".py"`` or ``".ipynb"``)."""
    try:
        found = STAMP.findall(text)
        return len(found) == 1 and found[0] == fingerprint(text, suffix)
    except (ValueError, AttributeError):
        return False
