r"""MkDocs hook: the search reads as the pages do. It finds a word written without its accents
("interpolacion" finds "interpolación", "cache" finds "caché"), finds a code name however its
parts are joined ("rotate_half" finds the prose's "rotate-half"), and shows and indexes math as
text, not as TeX (a heading "Una $L_0$ equivocada" is the result "Una L₀ equivocada").

The search plugin indexes each section's title and text as written, math as its TeX source
between ``\(`` and ``\)``, and Lunr compares words letter by letter. After the index is written
(and before the offline plugin copies it into ``search/search_index.js``), the math of each title
and text becomes plain text, and each section gets its accented words once more without accents
and its joined words in their other spellings, inside a hidden span: indexed, never shown
(results show the text as HTML).
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


SYMBOLS = {"theta": "θ", "lambda": "λ", "rho": "ρ", "alpha": "α", "beta": "β", "gamma": "γ",
           "zeta": "ζ", "omega": "ω", "pi": "π", "ell": "ℓ", "cdot": "·", "times": "×",
           "approx": "≈", "odot": "⊙", "le": "≤", "ge": "≥", "infty": "∞", "dots": "…",
           "ldots": "…"}
SUBSCRIPTS = dict(zip("0123456789aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True))
MATH = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)


def _subscript(match: re.Match) -> str:
    body = match.group(1) or match.group(2)
    if all(c in SUBSCRIPTS for c in body):
        return "".join(SUBSCRIPTS[c] for c in body)
    return "_" + body


def plain_math(tex: str) -> str:
    """TeX of the course's formulas as plain text: ``L_{\\max}`` -> ``Lₘₐₓ``,
    ``\\mathrm{rotate\\_half}(x)`` -> ``rotate_half(x)``, ``\\theta_i`` -> ``θᵢ``."""
    text = tex.replace("\\_", "\0").replace("\\,", " ").replace("\\!", "")  # \0: a code name's _
    text = re.sub(r"\\(?:mathrm|text|operatorname|mathbf|mathit|boldsymbol)\s*\{([^{}]*)\}", r"\1",
                  text)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: SYMBOLS.get(m.group(1), m.group(1)), text)
    text = re.sub(r"_\{([^{}]*)\}|_(\w)", _subscript, text)
    return " ".join(text.replace("{", "").replace("}", "").replace("\0", "_").split())


def with_plain_math(text: str) -> str:
    """``text`` with each formula (``\\(...\\)``, ``\\[...\\]``) written as plain text."""
    return MATH.sub(lambda m: plain_math(m.group(1) if m.group(1) is not None else m.group(2)),
                    text)


def other_spellings(text: str) -> list[str]:
    """A code name's other spellings: ``rotate-half`` -> ``rotate_half``, and ``rotate_half``
    -> its words ``rotate half``."""
    found = [w.replace("-", "_") for w in re.findall(r"\b\w+(?:-\w+)+\b", text)]
    found += [w.replace("_", " ") for w in re.findall(r"\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b", text)]
    return found


def with_plain_words(text: str) -> str:
    """``text`` followed by its accented words written without accents and its joined words in
    their other spellings (in a hidden span)."""
    words = dict.fromkeys([folded(w) for w in re.findall(r"\w+", text) if folded(w) != w]
                          + other_spellings(text))
    return f"{text} <span hidden>{' '.join(words)}</span>" if words else text


@event_priority(-50)  # after the search plugin writes the index, before the offline plugin reads it
def on_post_build(config: MkDocsConfig) -> None:
    index = Path(config.site_dir) / "search" / "search_index.json"
    if not index.is_file():
        return
    data = json.loads(index.read_text(encoding="utf-8"))
    for doc in data["docs"]:
        doc["title"] = with_plain_math(doc["title"])
        doc["text"] = with_plain_words(with_plain_math(doc["text"]))
    index.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
