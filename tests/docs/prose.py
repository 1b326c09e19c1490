"""The prose of a markdown page: what a reader reads as sentences.

Code blocks, inline code, math, link targets, heading anchors, HTML comments and the syntax of
admonitions are blanked out, so a vocabulary or citation check only looks at words. Paragraphs keep
their order and are returned with their lines joined.
"""

from __future__ import annotations

import re

_NOT_PROSE = re.compile(
    r"^(```|~~~).*?^\1[ \t]*$"  # fenced code
    r"|\$\$.*?\$\$"  # display math
    r"|\$[^$\n]+\$"  # inline math
    r"|`[^`]+`"  # inline code (may wrap a line)
    r"|\]\([^)]*\)"  # link targets (the link text stays)
    r"|\{#[^}]*\}"  # heading anchors
    r"|<!--.*?-->"  # comments (the hooks' markers)
    r"|<[^>\n]+>"  # HTML tags (figures), not their text
    r"|^\s*(?:!!!|\?\?\?\+?)\s+\w+(?:\s+\"[^\"]*\")?",  # admonition syntax and title quotes
    re.DOTALL | re.MULTILINE,
)


def prose(text: str) -> str:
    """``text`` with everything that is not prose replaced by a space."""
    return _NOT_PROSE.sub(" ", text)


def paragraphs(text: str) -> list[str]:
    """The prose of ``text``, one string per paragraph, with whitespace collapsed."""
    return [" ".join(block.split()) for block in re.split(r"\n\s*\n", prose(text)) if block.strip()]
