"""The search index reads as the pages do: math as text, code names under their other spellings
(``docs_site/hooks/search_accents.py``)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

from docs_pages import DOCS, LANGS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs_site" / "hooks"))
import search_accents  # noqa: E402


def test_math_in_a_heading_reads_as_text():
    said = search_accents.with_plain_math
    assert said(r"Una \(L_0\) equivocada") == "Una L₀ equivocada"
    assert said(r"Más allá de \(L_{\max}\)") == "Más allá de Lₘₐₓ"
    assert said(r"\(\mathrm{rotate\_half}(x) \odot \sin\)") == "rotate_half(x) ⊙ sin"


def test_every_heading_with_math_reads_without_tex():
    """Each heading of the lessons, as the search plugin indexes it (arithmatex's ``\\(...\\)``)."""
    for lang in LANGS:
        for page in DOCS[lang].rglob("*.md"):
            for heading in re.findall(r"^#+ (.*\$.*)$", page.read_text(encoding="utf-8"), re.M):
                heading = re.sub(r"\s*\{#[^}]+\}$", "", heading)
                tex = re.sub(r"\$([^$]+)\$", r"\\(\1\\)", heading)
                plain = search_accents.with_plain_math(tex)
                assert not re.search(r"[\\${}]", plain), (page, heading, plain)


def test_a_code_name_is_found_however_its_parts_are_joined(tmp_path):
    """In Spanish, "rotate_half" found nothing: the prose says "rotate-half" (two words for the
    search) and the formula \\mathrm{rotate\\_half} (one TeX word)."""
    index = tmp_path / "search" / "search_index.json"
    index.parent.mkdir()
    docs = [{"location": "17/03-rope.html#conventions", "title": r"Convenciones",
             "text": r"\(x \odot \cos + \mathrm{rotate\_half}(x) \odot \sin\)"},
            {"location": "17/03-rope.html#lab", "title": r"Una \(L_0\) equivocada",
             "text": "como el <em>rotate-half</em> de Hugging Face"}]
    index.write_text(json.dumps({"config": {}, "docs": docs}), encoding="utf-8")
    search_accents.on_post_build(SimpleNamespace(site_dir=str(tmp_path)))
    written = json.loads(index.read_text(encoding="utf-8"))["docs"]
    separator = re.compile(r'[\s\-,;:!?¿¡«»"“”()\[\]]+|\.(?!\d)')  # mkdocs.base.yml's
    for doc in written:
        words = set(separator.split(re.sub(r"<[^>]+>", " ", doc["text"])))
        assert "rotate_half" in words, doc["text"]
    assert written[1]["title"] == "Una L₀ equivocada"
