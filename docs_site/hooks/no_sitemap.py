"""MkDocs hook: no request that a page opened from the file system cannot make.

Material reads each ``<link rel="alternate" hreflang>`` of a page head and fetches that site's
``sitemap.xml`` to map pages between languages; from ``file://`` the browser refuses it (a CORS
error in the console). The language switch (``overrides/partials/alternate.html``) needs no
sitemap, so the head links are left out.
"""

from __future__ import annotations

import re

ALTERNATE = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')


def on_post_page(output: str, page, config) -> str:
    return ALTERNATE.sub("", output)
