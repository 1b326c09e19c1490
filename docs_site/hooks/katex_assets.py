"""MkDocs hook: ship KaTeX and the course's own assets with the site, so math renders offline.

KaTeX is not committed. The first build fetches the pinned package from the npm registry with
``npm pack``, checks it against the pinned integrity hash and unpacks it under ``build/npm/``;
later builds reuse that copy. The hook then adds KaTeX's ``dist`` files (script, stylesheet, fonts)
and ``docs_site/assets/`` to every build as generated files, so ``mkdocs serve`` has them too.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

KATEX_VERSION = "0.19.1"
# From `npm view katex@0.19.1 dist.integrity`.
KATEX_INTEGRITY = "sha512-jG8uKntjSEcm2EpQOh0XturpPuuC9r3Sq5HLHdsFdWZT27E672SF19QEi+of0/YeOy15lDgRhKvr5614uRrEfA=="  # noqa: E501

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "npm"
OWN_ASSETS = ROOT / "docs_site" / "assets"
VENDOR_URI = "assets/vendor/katex"


class KatexUnavailable(RuntimeError):
    """KaTeX could not be fetched or did not match its pinned hash."""


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (two builds may start at once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _integrity(tarball: Path) -> str:
    digest = hashlib.sha512(tarball.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode()


def _npm_pack(destination: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise KatexUnavailable(
            "[es] Para construir la documentación hace falta npm (Node.js), que descarga KaTeX "
            "una sola vez.\n[en] Building the docs needs npm (Node.js), which downloads KaTeX once."
        )
    spec = f"katex@{KATEX_VERSION}"
    result = subprocess.run(
        [npm, "pack", spec, "--pack-destination", str(destination), "--silent"],
        capture_output=True,
        text=True,
        check=False,
    )
    tarball = destination / f"katex-{KATEX_VERSION}.tgz"
    if result.returncode != 0 or not tarball.is_file():
        raise KatexUnavailable(
            f"[es] `npm pack {spec}` falló; ¿hay acceso al registro de npm?\n"
            f"[en] `npm pack {spec}` failed; can this machine reach the npm registry?\n"
            + result.stderr.strip()
        )
    return tarball


def katex_dist() -> Path:
    """Folder with KaTeX's ``dist`` files, fetching and unpacking the package if needed."""
    package = CACHE / f"katex-{KATEX_VERSION}" / "package"
    if (package / "dist" / "katex.min.js").is_file():
        return package / "dist"
    with _locked(CACHE / "katex.lock"):
        if (package / "dist" / "katex.min.js").is_file():
            return package / "dist"
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            tarball = _npm_pack(Path(tmp))
            found = _integrity(tarball)
            if found != KATEX_INTEGRITY:
                raise KatexUnavailable(
                    f"[es] El paquete katex@{KATEX_VERSION} no coincide con su hash fijado.\n"
                    f"[en] Package katex@{KATEX_VERSION} does not match its pinned hash.\n"
                    f"expected {KATEX_INTEGRITY}\ngot      {found}"
                )
            with tarfile.open(tarball) as archive:
                archive.extractall(Path(tmp) / "out", filter="data")
            shutil.rmtree(package.parent, ignore_errors=True)
            (Path(tmp) / "out").rename(package.parent)
    return package / "dist"


def _vendor_files(dist: Path) -> dict[str, Path]:
    """``site path -> source file`` for the KaTeX files a page needs."""
    wanted = {f"{VENDOR_URI}/katex.min.js": dist / "katex.min.js"}
    wanted[f"{VENDOR_URI}/katex.min.css"] = dist / "katex.min.css"
    wanted[f"{VENDOR_URI}/LICENSE"] = dist.parent / "LICENSE"
    for font in sorted((dist / "fonts").iterdir()):
        wanted[f"{VENDOR_URI}/fonts/{font.name}"] = font
    return wanted


def _own_files() -> dict[str, Path]:
    return {
        f"assets/{path.relative_to(OWN_ASSETS).as_posix()}": path
        for path in sorted(OWN_ASSETS.rglob("*"))
        if path.is_file()
    }


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add KaTeX and ``docs_site/assets/`` to the site."""
    for uri, source in {**_vendor_files(katex_dist()), **_own_files()}.items():
        if files.get_file_from_path(uri) is None:
            files.append(File.generated(config, uri, abs_src_path=str(source)))
    return files


def on_serve(server, config: MkDocsConfig, builder):
    """Rebuild when the course's own assets change while serving."""
    server.watch(str(OWN_ASSETS))
    return server
