"""Visible checks for lab 18.01 (extrapolation). Students may read these; the grader's differ."""

from __future__ import annotations

import numpy as np
import torch

from minimodel.selfcheck.compare import (
    CheckFailure,
    CheckList,
    StudentModule,
    closest_mistake,
    expect_array,
)
from minimodel.selfcheck.contracts import broken
from minimodel.selfcheck.snapshots import Snapshots

checks = CheckList()
extrapolation = StudentModule("extrapolation")
snap = Snapshots("18.01")
NAN = float("nan")


def _pairs(value: object, name: str) -> np.ndarray:
    """``doubling_buckets``' list of ``(start, end)`` pairs of Python ints, as an array."""
    if not (isinstance(value, list) and all(
            isinstance(pair, tuple) and len(pair) == 2 and all(type(v) is int for v in pair)
            for pair in value)):
        raise CheckFailure(*broken("doubling_buckets", "not-ints", name, repr(value)))
    return np.array(value, dtype=np.int64).reshape(-1, 2)


def _position(value: object, name: str) -> np.ndarray:
    """A Python ``int`` or ``None`` (stored as NaN), as an array."""
    if value is not None and type(value) is not int:
        raise CheckFailure(*broken("failure_position", "not-int", name, type(value).__name__))
    return np.array(np.nan if value is None else float(value))


def _ints(values: list, name: str) -> np.ndarray:
    """Python ``int`` values, as an array."""
    for value in values:
        if type(value) is not int:
            raise CheckFailure(*broken("needle_distance", "not-int", name, type(value).__name__))
    return np.array(values, dtype=np.int64)


def _shown(array: np.ndarray) -> object:
    """A stored answer as the function returns it."""
    if array.ndim == 2:
        return [tuple(int(v) for v in pair) for pair in array]
    if array.ndim == 1:
        return [int(v) for v in array]
    return None if np.isnan(array) else int(array)


def _expect_exact(value: object, actual: np.ndarray, name: str) -> None:
    """Fail unless ``actual`` (``value`` as an array) is the stored answer ``name`` exactly;
    name every classic mistake that gives the same (a short list of numbers often fits several;
    ``compare.closest_mistake``)."""
    expected, mistakes = snap.answer(actual, name)
    if actual.shape == expected.shape and np.array_equal(actual, expected, equal_nan=True):
        return
    es = f"{name} devolvió {value!r}; se esperaba {_shown(np.asarray(expected))!r}."
    en = f"{name} returned {value!r}; expected {_shown(np.asarray(expected))!r}."
    if why := closest_mistake(actual, mistakes):
        es, en = f"{es} {why[0]}", f"{en} {why[1]}"
    raise CheckFailure(es, en)


def _buckets(train_len: int, length: int) -> None:
    name = f"doubling_buckets({train_len}, {length})"
    value = extrapolation.doubling_buckets(train_len, length)
    _expect_exact(value, _pairs(value, name), name)


def _failure(curve: torch.Tensor, train_len: int, tolerance: float, window: int,
             name: str) -> None:
    value = extrapolation.failure_position(curve, train_len, tolerance=tolerance, window=window)
    _expect_exact(value, _position(value, name), name)


def _needles(length: int, depths: tuple[float, ...], **options) -> None:
    digits = f", n_digits={options['n_digits']}" if options else ""
    name = f"needle_distance({length}, {' / '.join(map(str, depths))}{digits})"
    found = [extrapolation.needle_distance(length, depth, **options) for depth in depths]
    _expect_exact(found, _ints(found, name), name)


# --- doubling_buckets -----------------------------------------------------------------------
@checks.add("doubling_buckets", "T = 128 hasta 8T", "T = 128 up to 8T")
def buckets_powers_of_two() -> None:
    _buckets(128, 1024)


@checks.add("doubling_buckets", "la última se corta en length", "the last one is cut at length")
def buckets_cut_at_length() -> None:
    _buckets(128, 300)


@checks.add("doubling_buckets", "length <= T: una sola cubeta", "length <= T: a single bucket")
def buckets_short_length() -> None:
    _buckets(64, 40)
    _buckets(64, 64)


# --- bucket_means ---------------------------------------------------------------------------
@checks.add("bucket_means", "media por cubeta de una curva", "mean per bucket of one curve")
def means_of_a_curve() -> None:
    curve = torch.arange(8, dtype=torch.float32)  # 0 .. 7
    value = extrapolation.bucket_means(curve, [(0, 2), (2, 4), (4, 8)])
    expect_array(value, torch.tensor([0.5, 2.5, 5.5]), name="bucket_means(0..7, ...)")


@checks.add("bucket_means", "salta los NaN (sin objetivo)", "skips NaNs (no target)")
def means_skip_nan() -> None:
    loss = torch.tensor([[1.0, NAN, 3.0, 4.0], [NAN, NAN, 5.0, 8.0], [2.0, NAN, NAN, 6.0]])
    value = extrapolation.bucket_means(loss, [(0, 2), (2, 4), (1, 2)])
    # [0, 2): 1 and 2 -> 1.5; [2, 4): 3, 4, 5, 8, 6 -> 5.2 (every value counts once); [1, 2): none.
    name = "bucket_means(loss (3, 4), [(0, 2), (2, 4), (1, 2)])"
    if isinstance(value, torch.Tensor) and value.shape == (3,):
        # compared with NaN as 0 (NaN != NaN), then where the NaNs are
        snap.expect(value.nan_to_num(0.0), name)
        _expect_nans(value, [False, False, True], name)
    else:
        snap.expect(value, name)  # says what is wrong with the kind or the shape


def _expect_nans(value: torch.Tensor, expected: list[bool], name: str) -> None:
    """Fail unless ``value`` is NaN exactly where ``expected`` says."""
    if value.isnan().tolist() != expected:
        raise CheckFailure(
            f"{name}: NaN en {value.isnan().tolist()}, se esperaba en {expected} (NaN solo en "
            "una cubeta sin ningún objetivo).",
            f"{name}: NaN at {value.isnan().tolist()}, expected at {expected} (NaN only for a "
            "bucket without any target).",
        )


# --- failure_position -----------------------------------------------------------------------
def _step(train_len: int = 64, length: int = 128, low: float = 1.0, high: float = 3.0):
    return torch.cat([torch.full((train_len,), low), torch.full((length - train_len,), high)])


@checks.add("failure_position", "un escalón en T", "a step at T")
def failure_of_a_step() -> None:
    # Trailing mean of 16 values: above 1 + 0.5 once more than 4 of them are 3.0 -> 64 + 4.
    _failure(_step(), 64, 0.5, 16, "failure_position(step 1 -> 3 at 64)")


@checks.add("failure_position", "un pico aislado no basta", "a lone spike is not enough")
def failure_after_a_spike() -> None:
    # One high value at 40, then a lasting rise from 48: only the rise moves the trailing mean.
    curve = torch.cat([torch.ones(40), torch.tensor([3.0]), torch.ones(7), torch.full((12,), 3.0)])
    _failure(curve, 40, 0.6, 4, "failure_position(spike at 40, rise at 48, 40, 0.6, 4)")


@checks.add("failure_position", "None si nunca falla", "None when it never fails")
def failure_none() -> None:
    _failure(torch.full((200,), 2.0), 64, 0.1, 8, "failure_position(flat curve)")


@checks.add("failure_position", "la referencia es [T/2, T), no el principio",
            "the reference is [T/2, T), not the start")
def failure_reference() -> None:
    # High loss at the first positions (little context), then 1.0; a small rise past T = 40.
    # Window of 4: 1.0, 1.0, 1.3, 1.3 -> 1.15 at p = 41; three of four -> 1.225 > 1.2 at p = 42.
    curve = torch.cat([torch.linspace(4.0, 1.0, 10), torch.ones(30), torch.full((40,), 1.3)])
    _failure(curve, 40, 0.2, 4, "failure_position(curve, 40, tolerance=0.2, window=4)")


@checks.add("failure_position", "salta los NaN", "skips NaNs")
def failure_with_nan() -> None:
    curve = _step(32, 64)
    curve[1::2] = NAN  # every other position has no target
    # Values 1 (p < 32, even p) and 3 (p >= 32, even p); window 8 holds 4 values.
    # Above 1.5 once more than 1 of those 4 values is 3: the second one, at p = 34.
    _failure(curve, 32, 0.5, 8, "failure_position(curve with NaN)")


# --- needle_distance ------------------------------------------------------------------------
@checks.add("needle_distance", "extremos: profundidad 0 y 1", "ends: depth 0 and 1")
def needle_ends() -> None:
    _needles(128, (0.0, 1.0))


@checks.add("needle_distance", "profundidades intermedias", "intermediate depths")
def needle_depths() -> None:
    # F = 512 - 12 = 500 filler tokens; w = 125, 250, 375; distance = 505 - w.
    _needles(512, (0.25, 0.5, 0.75))


@checks.add("needle_distance", "redondeo de Python y k cifras", "Python's rounding and k digits")
def needle_rounding() -> None:
    # length 18, k = 3: F = 10 filler tokens. depth 0.25 -> w = round(2.5) = 2 (Python rounds
    # halves to even); depth 0.36 -> w = round(3.6) = 4. Distance = 18 - 3 - 2 - w.
    _needles(18, (0.25, 0.36), n_digits=3)
