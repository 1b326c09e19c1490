"""MkDocs hook: the search finds a word written without its accents ("interpolacion" finds
"interpolación", "cache" finds "caché").

The search plugin indexes each section's text as written, and Lunr compares words letter by
letter. After the index is written (and before the offline plugin copies it into
``search/search_index.js``), each section whose text has accented words gets those words once
more without accents, inside an HTML comment: indexed, never shown (results show the text as
HTML).
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority


def folded(word: str) -> str:
    """``word`` without accents or tildes: ``"interpolación"`` -> ``"interpolacion"``."""
    decomposed = unicodedata.normalize("NFD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def with_plain_words(text: str) -> str:
    """``text`` followed by its accented words written without accents (in a comment)."""
    words = dict.fromkeys(folded(w) for w in re.findall(r"\w+", text) if folded(w) != w)
    return f"{text} <span hidden>{' '.join(words)}</span>" if words else text


@event_priority(-50)  # after the search plugin writes the index, before the offline plugin reads it
def on_post_build(config: MkDocsConfig) -> None:
    index = Path(config.site_dir) / "search" / "search_index.json"
    if not index.is_file():
        return
    data = json.loads(index.read_text(encoding="utf-8"))
    for doc in data["docs"]:
        doc["text"] = with_plain_words(doc["text"])
    index.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
