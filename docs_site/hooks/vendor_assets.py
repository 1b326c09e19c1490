"""MkDocs hook: ship the page libraries and the course's own assets with the site, for offline use.

No third-party file is committed. Each library is a pinned npm package (``PACKAGES``): the first
build fetches it from the npm registry with ``npm pack``, checks it against its pinned integrity
hash and unpacks it under ``build/npm/``; later builds reuse that copy. The hook then adds the
files a page needs (``assets/vendor/<name>/...``, with the package's LICENSE) and
``docs_site/assets/`` to every build as generated files, so ``mkdocs serve`` has them too.

- KaTeX renders the math of every page.
- Vega, Vega-Lite and vega-embed draw the interactive figures (``docs_site/figures/``); only the
  pages with one load them.
- iframe-worker lets the search run in a page opened from the file system (``file://``), where
  browsers refuse web workers: Material's ``offline`` plugin loads it (``extra.polyfills``) and
  inlines the search index as ``search/search_index.js``.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs_site/, for figures
from figures.exclusive import locked  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "npm"
OWN_ASSETS = ROOT / "docs_site" / "assets"


@dataclass(frozen=True)
class NpmPackage:
    """One pinned npm package and the files of it that the site serves.

    ``root`` is the package folder the files are taken from (``dist``, ``build``); ``files`` are
    glob patterns relative to it. They are served under ``assets/vendor/<name>/`` with the same
    relative paths, next to the package's LICENSE.
    """

    name: str
    version: str
    integrity: str  # from `npm view <name>@<version> dist.integrity`
    root: str
    files: tuple[str, ...]

    @property
    def uri(self) -> str:
        """Site folder of this package's files."""
        return f"assets/vendor/{self.name}"


KATEX = NpmPackage(
    "katex",
    "0.19.1",
    "sha512-jG8uKntjSEcm2EpQOh0XturpPuuC9r3Sq5HLHdsFdWZT27E672SF19QEi+of0/YeOy15lDgRhKvr5614uRrEfA==",
    "dist",
    ("katex.min.js", "katex.min.css", "fonts/*"),
)
VEGA = NpmPackage(
    "vega",
    "6.4.0",
    "sha512-rHXCq2LpEWCLMjXBEj7hocY9G0/i5TGYRayGGSj06VTF4+l2IG2Z7oeZKCjWbUh/7hTE/mVhbaOPB72wCElh6g==",
    "build",
    ("vega.min.js",),
)
VEGA_LITE = NpmPackage(
    "vega-lite",
    "6.5.0",
    "sha512-fMXF6s0MrIg0UTWnLIfeFtgSLzVhyzSKobzGrh5rhS+mL6FOYFG3m7ouJ4U23gj65EK+gl9FIIT5w7wLNaAzkA==",
    "build",
    ("vega-lite.min.js",),
)
VEGA_EMBED = NpmPackage(
    "vega-embed",
    "7.3.0",
    "sha512-wQ8s5GaSzqoKgmRfbRolgBrjE2CP7ZKHXqH7NijxMqPjpdWxSs4Dn8tvp9g0giQvh2cK+3p56sxjWWM0wNngGw==",
    "build",
    ("vega-embed.min.js",),
)
IFRAME_WORKER = NpmPackage(
    "iframe-worker",
    "1.0.4",
    "sha512-roeaaI+Lg1LJNfgpCjoRe/+WzEjy9+Z08LoEvu85MCPbBjwm+qXz8Ag5U05lHa6V1CysZyGzE0SOkAtSUA5q7Q==",
    "shim",
    ("index.js",),
)
PACKAGES = (KATEX, VEGA, VEGA_LITE, VEGA_EMBED, IFRAME_WORKER)
# The scripts an interactive figure needs, in load order (site paths).
VEGA_SCRIPTS = tuple(f"{p.uri}/{p.files[0]}" for p in (VEGA, VEGA_LITE, VEGA_EMBED))


class NpmUnavailable(RuntimeError):
    """A package could not be fetched or did not match its pinned hash."""




def _integrity(tarball: Path) -> str:
    digest = hashlib.sha512(tarball.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode()


def _npm_pack(package: NpmPackage, destination: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise NpmUnavailable(
            "[es] Para construir la documentación hace falta npm (Node.js), que descarga KaTeX y "
            "Vega una sola vez.\n"
            "[en] Building the docs needs npm (Node.js), which downloads KaTeX and Vega once."
        )
    spec = f"{package.name}@{package.version}"
    result = subprocess.run(
        [npm, "pack", spec, "--pack-destination", str(destination), "--silent"],
        capture_output=True,
        text=True,
        check=False,
    )
    tarball = destination / f"{package.name}-{package.version}.tgz"
    if result.returncode != 0 or not tarball.is_file():
        raise NpmUnavailable(
            f"[es] `npm pack {spec}` falló; ¿hay acceso al registro de npm?\n"
            f"[en] `npm pack {spec}` failed; can this machine reach the npm registry?\n"
            + result.stderr.strip()
        )
    return tarball


def fetch(package: NpmPackage) -> Path:
    """Folder of the unpacked package, fetching and checking it first if it is not cached."""
    unpacked = CACHE / f"{package.name}-{package.version}" / "package"
    ready = unpacked / "package.json"
    if ready.is_file():
        return unpacked
    with locked(CACHE / f"{package.name}.lock"):
        if ready.is_file():
            return unpacked
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            tarball = _npm_pack(package, Path(tmp))
            found = _integrity(tarball)
            if found != package.integrity:
                raise NpmUnavailable(
                    f"[es] El paquete {package.name}@{package.version} no coincide con su hash "
                    f"fijado.\n[en] Package {package.name}@{package.version} does not match its "
                    f"pinned hash.\nexpected {package.integrity}\ngot      {found}"
                )
            with tarfile.open(tarball) as archive:
                archive.extractall(Path(tmp) / "out", filter="data")
            shutil.rmtree(unpacked.parent, ignore_errors=True)
            (Path(tmp) / "out").rename(unpacked.parent)
    return unpacked


def fetch_all() -> None:
    """Fetch every package (once, before the two languages build at the same time)."""
    for package in PACKAGES:
        fetch(package)


def _vendor_files(package: NpmPackage) -> dict[str, Path]:
    """``site path -> source file`` for the files of one package that the site serves."""
    unpacked = fetch(package)
    root = unpacked / package.root
    wanted = {f"{package.uri}/LICENSE": unpacked / "LICENSE"}
    for pattern in package.files:
        matches = sorted(path for path in root.glob(pattern) if path.is_file())
        if not matches:
            raise NpmUnavailable(
                f"[es] Falta {package.root}/{pattern} en {package.name}@{package.version}.\n"
                f"[en] {package.name}@{package.version} has no {package.root}/{pattern}."
            )
        for path in matches:
            wanted[f"{package.uri}/{path.relative_to(root).as_posix()}"] = path
    return wanted


def _own_files() -> dict[str, Path]:
    return {
        f"assets/{path.relative_to(OWN_ASSETS).as_posix()}": path
        for path in sorted(OWN_ASSETS.rglob("*"))
        if path.is_file()
    }


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the npm packages' files and ``docs_site/assets/`` to the site."""
    wanted: dict[str, Path] = {}
    for package in PACKAGES:
        wanted.update(_vendor_files(package))
    wanted.update(_own_files())
    for uri, source in wanted.items():
        if files.get_file_from_path(uri) is None:
            files.append(File.generated(config, uri, abs_src_path=str(source)))
    return files


def on_serve(server, config: MkDocsConfig, builder):
    """Rebuild when the course's own assets change while serving."""
    server.watch(str(OWN_ASSETS))
    return server
