"""Bilingual comparisons for checks: say what is wrong (type, shape, dtype or values) and where."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from minimodel.messages import bilingual
from minimodel.selfcheck.contracts import MISTAKE_ATOL, MISTAKE_RTOL, not_kept, seen


class _Bilingual:
    """An exception or warning whose message is given in both languages."""

    def __init__(self, es: str, en: str) -> None:
        super().__init__(bilingual(es, en))
        self.es, self.en = es, en


class CheckFailure(_Bilingual, AssertionError):
    """A check that ran and found a wrong result; carries the reason in both languages."""


class CheckNote(_Bilingual, UserWarning):
    """Something worth knowing about a check that passed (not an error), in both languages."""


def note(es: str, en: str) -> None:
    """Attach a note to the running check: the self-check prints it, pytest shows a warning."""
    warnings.warn(CheckNote(es, en), stacklevel=2)


def _as_numpy(value: object) -> np.ndarray | None:
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", torch.float64).numpy()
    if isinstance(value, np.ndarray):
        return np.asarray(value, dtype=np.float64)
    return None


def expect_array(
    actual: object,
    expected: np.ndarray | torch.Tensor,
    *,
    name: str,
    atol: float = 1e-6,
    rtol: float = 1e-5,
    check_dtype: bool = True,
    check_kind: bool = True,
    values: bool = True,
    mistakes: dict[str, tuple[np.ndarray, str, str]] | None = None,
    keeps: str | None = None,
) -> None:
    """Raise ``CheckFailure`` unless ``actual`` matches ``expected`` in kind, shape, dtype, values.

    ``values=False`` compares kind, shape and dtype only (the values have a check of their own);
    ``check_dtype=False`` and ``check_kind=False`` leave the dtype, and whether it is a tensor or
    an array, to such a check (an answer that is neither still fails).

    ``mistakes`` maps a mistake's name to ``(what that mistake would produce, es, en)``: when the
    values are wrong and match one of them, its explanation is added to the message.

    ``keeps``: the function that must return the dtype of its input here; a wrong dtype is then
    explained with its ``dtype-not-kept`` contract (``minimodel.selfcheck.contracts``).
    """
    kind = "torch.Tensor" if isinstance(expected, torch.Tensor) else "np.ndarray"
    if type(actual) is not type(expected) and (
            check_kind or not isinstance(actual, (np.ndarray, torch.Tensor))):
        raise CheckFailure(*_contract(
            f"{name} debe devolver un {kind}; devolvió {type(actual).__name__}.",
            f"{name} must return a {kind}; it returned {type(actual).__name__}.",
            seen(name, f"kind {type(actual).__name__}"),
        ))
    if tuple(actual.shape) != tuple(expected.shape):  # a mistake may change the shape
        raise CheckFailure(*_explained(
            _as_numpy(actual),
            f"{name}: forma {tuple(actual.shape)}, se esperaba {tuple(expected.shape)}.",
            f"{name}: shape {tuple(actual.shape)}, expected {tuple(expected.shape)}.",
            mistakes,
        ))
    if check_dtype and actual.dtype != expected.dtype:
        dtype, asked = (str(a.dtype).removeprefix("torch.") for a in (actual, expected))
        raise CheckFailure(*_contract(
            f"{name}: dtype {actual.dtype}, se esperaba {expected.dtype}.",
            f"{name}: dtype {actual.dtype}, expected {expected.dtype}.",
            not_kept(keeps, [(asked, dtype)]) if keeps else seen(name, f"dtype {dtype}", "dtype"),
        ))
    if not values:
        return
    got, want = _as_numpy(actual), _as_numpy(expected)
    close = np.isclose(got, want, atol=atol, rtol=rtol)
    if close.all():
        return
    if got.ndim == 0:  # a single number
        es = f"{name} = {got:.6g}, se esperaba {want:.6g} (tolerancia {atol:g})."
        en = f"{name} = {got:.6g}, expected {want:.6g} (tolerance {atol:g})."
    else:
        index = tuple(int(i) for i in np.argwhere(~close)[0])
        es = (
            f"{name}: {int((~close).sum())} de {close.size} valores no coinciden; el primero en "
            f"{index}: {got[index]:.6g} en vez de {want[index]:.6g} (tolerancia {atol:g})."
        )
        en = (
            f"{name}: {int((~close).sum())} of {close.size} values differ; the first at "
            f"{index}: {got[index]:.6g} instead of {want[index]:.6g} (tolerance {atol:g})."
        )
    raise CheckFailure(*_explained(got, es, en, mistakes))


def _contract(es: str, en: str, contract: tuple[str, str] | None) -> tuple[str, str]:
    """``(es, en)`` followed, on a line of its own, by the broken contract's (or the mistake's)
    words, if known."""
    return (f"{es}\n{contract[0]}", f"{en}\n{contract[1]}") if contract else (es, en)


def _explained(got: np.ndarray, es: str, en: str, mistakes: dict | None) -> tuple[str, str]:
    """``(es, en)`` followed, on a line of its own, by the explanation of the mistake whose values
    ``got`` has (:func:`closest_mistake`; the report says it once, then "the same mistake as
    above")."""
    return _contract(es, en, closest_mistake(got, mistakes))


def closest_mistake(got: np.ndarray, mistakes: dict | None) -> tuple[str, str] | None:
    """The explanation ``(es, en)`` of the mistake whose values ``got`` has: of those within the
    tolerance the grader names mistakes with, the closest; all of them, joined by "O bien:" /
    "Or:", when several are as close (one value that two mistakes give alike, such as a table
    from 1 and a forward off by one; or a short list of integers)."""
    got = np.asarray(got, dtype=np.float64)
    fitting = [(np.max(np.abs(np.nan_to_num(got - wrong)), initial=0.0), why_es, why_en)
               for wrong, why_es, why_en in (mistakes or {}).values()
               if wrong.shape == got.shape and np.allclose(got, wrong, rtol=MISTAKE_RTOL,
                                                           atol=MISTAKE_ATOL, equal_nan=True)]
    if not fitting:
        return None
    best = min(distance for distance, _, _ in fitting)
    closest = [(es, en) for distance, es, en in fitting if distance == best]
    return " O bien: ".join(es for es, _ in closest), " Or: ".join(en for _, en in closest)


@dataclass(frozen=True)
class Check:
    """One visible check: ``target`` is the function under test, as the student knows it."""

    name: str
    target: str
    es: str
    en: str
    run: Callable[[], None] = field(repr=False)


class StudentModule:
    """The student's ``minimodel.positional.<name>``, imported when a check first uses it.

    Listing a lab's checks never runs the student's code: that happens only in the self-check's
    child process, while a check runs (``minimodel.selfcheck.runner``)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> object:
        return getattr(importlib.import_module(f"minimodel.positional.{self._name}"), attribute)


class CheckList(list):
    """The checks of one lab, in order; ``@checks.add(target, es, en)`` registers a function."""

    def add(self, target: str, es: str, en: str) -> Callable[[Callable[[], None]], Callable]:
        def register(function: Callable[[], None]) -> Callable[[], None]:
            self.append(Check(function.__name__, target, es, en, function))
            return function

        return register
