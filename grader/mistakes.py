"""The catalogue of classic mistakes: ``solutions/mistakes/<module>.py``, one file per module.

Each mistake is a wrong version of one function (or method) of the module, with its code and its
explanation in both languages: what a student who makes that mistake would have written. Where a
student's value matches what the wrong version gives, the explanation is shown. The wrong
versions are instructor material: they run only where the course is built (the self-check's
stored answers, ``grader.snapshots``), and only their outputs on the visible inputs reach the
student's repository.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from minimodel.implementation import REPO_ROOT

CATALOGUE_DIR = REPO_ROOT / "solutions" / "mistakes"


@dataclass(frozen=True)
class Mistake:
    """One classic mistake in ``module``: ``wrong`` replaces ``target`` (``"f"`` or
    ``"Class.method"``) of the module and gives what that mistake gives."""

    code: str
    target: str
    es: str
    en: str
    wrong: Callable = field(repr=False, compare=False)
    module: str = ""

    @property
    def key(self) -> str:
        """The code that names the mistake everywhere: ``<module>.<code>``."""
        return f"{self.module}.{self.code}"


def mistake(target: str, code: str, *, es: str, en: str) -> Callable[[Callable], Mistake]:
    """Decorator for a catalogue file: ``@mistake("sinusoidal_pe", "swapped", es=..., en=...)``."""

    def register(wrong: Callable) -> Mistake:
        return Mistake(code, target, es, en, wrong)

    return register


def catalogue(module: str, folder: Path = CATALOGUE_DIR) -> list[Mistake]:
    """The mistakes of one student module (none when it has no catalogue file).

    The file is loaded where ``minimodel.positional`` is the reference implementation."""
    path = folder / f"{module}.py"
    if not path.exists():
        return []
    spec = importlib.util.spec_from_file_location(f"mistakes_{module}", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    found = [
        Mistake(m.code, m.target, m.es, m.en, m.wrong, module)
        for m in vars(loaded).values() if isinstance(m, Mistake)
    ]
    codes = [m.code for m in found]
    if len(codes) != len(set(codes)):
        raise ValueError(f"{path}: two mistakes with one code: {sorted(codes)}")
    return found


@contextlib.contextmanager
def made(item: Mistake) -> Iterator[None]:
    """Within the block, the student module (``minimodel.positional.<module>``) has the mistake."""
    loaded = importlib.import_module(f"minimodel.positional.{item.module}")
    owner_name, _, attribute = item.target.rpartition(".")
    owner = getattr(loaded, owner_name) if owner_name else loaded
    original = getattr(owner, attribute)
    setattr(owner, attribute, item.wrong)
    try:
        yield
    finally:
        setattr(owner, attribute, original)
