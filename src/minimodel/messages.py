"""Bilingual messages: every error and report the course shows speaks Spanish and English."""

from __future__ import annotations

import os

LANGUAGES = ("es", "en")


def bilingual(es: str, en: str) -> str:
    """One message in both languages, Spanish first: ``"[es] ...\\n[en] ..."``."""
    return f"[es] {es}\n[en] {en}"


def language() -> str:
    """The reader's language: ``$MINIMODEL_LANG``, else ``en`` for English locales, else ``es``."""
    chosen = os.environ.get("MINIMODEL_LANG", "").lower()
    if chosen in LANGUAGES:
        return chosen
    locale = os.environ.get("LC_ALL") or os.environ.get("LANG") or ""
    return "en" if locale.lower().startswith("en") else "es"


def pick(es: str, en: str, lang: str | None = None) -> str:
    """The message in one language (the reader's, unless ``lang`` is given)."""
    return en if (lang or language()) == "en" else es


def plural(count: int, one: str, many: str) -> str:
    """``"1 check"``, ``"2 checks"``: the count and the word that agrees with it."""
    return f"{count} {one if count == 1 else many}"


def split_bilingual(text: str) -> tuple[str, str]:
    """Undo ``bilingual``: the Spanish and English parts of a message (both = text if plain)."""
    es, en, current = [], [], None
    for line in text.splitlines():
        if line.startswith("[es] "):
            current, line = es, line[5:]
        elif line.startswith("[en] "):
            current, line = en, line[5:]
        (current if current is not None else es).append(line)
    if current is None:
        return text, text
    return "\n".join(es).strip() or text, "\n".join(en).strip() or text
