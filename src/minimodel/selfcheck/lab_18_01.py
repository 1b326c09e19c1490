"""Visible checks for lab 18.01 (extrapolation). Students may read these; the grader's differ."""

from __future__ import annotations

import torch

from minimodel.selfcheck.compare import CheckFailure, CheckList, expect_array
from minimodel.selfcheck.snapshots import Snapshots

checks = CheckList()
snap = Snapshots("18.01")
NAN = float("nan")


def _student():
    from minimodel.positional import extrapolation

    return extrapolation


def _expect_equal(value: object, expected: object, *, name: str, why: str = "") -> None:
    """Fail unless ``value == expected`` with the same type (lists of tuples, ints, None)."""
    if type(value) is type(expected) and value == expected:
        return
    es_why, en_why = why.split("|") if why else ("", "")
    raise CheckFailure(
        f"{name} devolvió {value!r} ({type(value).__name__}); se esperaba {expected!r} "
        f"({type(expected).__name__}). {es_why}".strip(),
        f"{name} returned {value!r} ({type(value).__name__}); expected {expected!r} "
        f"({type(expected).__name__}). {en_why}".strip(),
    )


# --- doubling_buckets -----------------------------------------------------------------------
@checks.add("doubling_buckets", "T = 128 hasta 8T", "T = 128 up to 8T")
def buckets_powers_of_two() -> None:
    value = _student().doubling_buckets(128, 1024)
    expected = [(0, 128), (128, 256), (256, 512), (512, 1024)]
    why = ""
    if value == [(0, 128), (128, 256), (256, 384), (384, 512), (512, 640)][: len(value)]:
        why = (
            "Las cubetas deben doblar su longitud: cada una termina en el doble de su inicio.|"
            "Buckets must double in length: each ends at twice its start."
        )
    _expect_equal(value, expected, name="doubling_buckets(128, 1024)", why=why)


@checks.add("doubling_buckets", "la última se corta en length", "the last one is cut at length")
def buckets_cut_at_length() -> None:
    value = _student().doubling_buckets(128, 300)
    why = ""
    if isinstance(value, list) and value[-1:] == [(256, 512)]:
        why = (
            "La última cubeta no puede pasar de length: recórtala a (256, 300).|"
            "The last bucket cannot go past length: cut it to (256, 300)."
        )
    _expect_equal(
        value, [(0, 128), (128, 256), (256, 300)], name="doubling_buckets(128, 300)", why=why
    )


@checks.add("doubling_buckets", "length <= T: una sola cubeta", "length <= T: a single bucket")
def buckets_short_length() -> None:
    _expect_equal(_student().doubling_buckets(64, 40), [(0, 40)], name="doubling_buckets(64, 40)")
    _expect_equal(_student().doubling_buckets(64, 64), [(0, 64)], name="doubling_buckets(64, 64)")


# --- bucket_means ---------------------------------------------------------------------------
@checks.add("bucket_means", "media por cubeta de una curva", "mean per bucket of one curve")
def means_of_a_curve() -> None:
    curve = torch.arange(8, dtype=torch.float32)  # 0 .. 7
    value = _student().bucket_means(curve, [(0, 2), (2, 4), (4, 8)])
    expect_array(value, torch.tensor([0.5, 2.5, 5.5]), name="bucket_means(0..7, ...)")


@checks.add("bucket_means", "salta los NaN (sin objetivo)", "skips NaNs (no target)")
def means_skip_nan() -> None:
    loss = torch.tensor([[1.0, NAN, 3.0, 4.0], [NAN, NAN, 5.0, 8.0], [2.0, NAN, NAN, 6.0]])
    value = _student().bucket_means(loss, [(0, 2), (2, 4), (1, 2)])
    # [0, 2): 1 and 2 -> 1.5; [2, 4): 3, 4, 5, 8, 6 -> 5.2 (every value counts once); [1, 2): none.
    name = "bucket_means(loss (3, 4), [(0, 2), (2, 4), (1, 2)])"
    if isinstance(value, torch.Tensor) and value.shape == (3,):
        if value[:2].isnan().any():
            raise CheckFailure(
                "bucket_means da NaN en una cubeta con valores: usa torch.nanmean, que ignora "
                "los NaN.",
                "bucket_means gives NaN for a bucket with values: use torch.nanmean, which skips "
                "NaNs.",
            )
        _expect_nans(value, [False, False, True], name)
        value = value.nan_to_num(0.0)  # same NaNs: compare the other values (NaN != NaN)
    snap.expect(value, name)


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
    value = _student().failure_position(_step(), 64, tolerance=0.5, window=16)
    why = ""
    if value in (56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67):
        why = (
            "La media debe ser hacia atrás (posiciones p-window+1 .. p), no centrada, y sin "
            "contar posiciones de después de p.|The mean must look back (positions "
            "p-window+1 .. p), not be centred, and must not use positions after p."
        )
    _expect_equal(value, 68, name="failure_position(step 1 -> 3 at 64)", why=why)


@checks.add("failure_position", "None si nunca falla", "None when it never fails")
def failure_none() -> None:
    flat = torch.full((200,), 2.0)
    value = _student().failure_position(flat, 64, tolerance=0.1, window=8)
    _expect_equal(value, None, name="failure_position(flat curve)")


@checks.add(
    "failure_position",
    "la referencia es [T/2, T), no el principio",
    "the reference is [T/2, T), not the start",
)
def failure_reference() -> None:
    # High loss at the first positions (little context), then 1.0; a small rise past T = 40.
    curve = torch.cat([torch.linspace(4.0, 1.0, 10), torch.ones(30), torch.full((40,), 1.3)])
    value = _student().failure_position(curve, 40, tolerance=0.2, window=4)
    why = ""
    if value is None:
        why = (
            "La referencia es la media de [T//2, T), posiciones con contexto; las primeras "
            "posiciones tienen una pérdida alta que no cuenta.|The reference is the mean over "
            "[T//2, T), positions with context; the first positions have a high loss that does "
            "not count."
        )
    elif isinstance(value, int) and value < 40:
        why = "La búsqueda empieza en T.|The search starts at T."
    # Window of 4: 1.0, 1.0, 1.3, 1.3 -> 1.15 at p = 41; three of four -> 1.225 > 1.2 at p = 42.
    _expect_equal(value, 42, name="failure_position(curve, 40, tolerance=0.2, window=4)", why=why)


@checks.add("failure_position", "salta los NaN", "skips NaNs")
def failure_with_nan() -> None:
    curve = _step(32, 64)
    curve[1::2] = NAN  # every other position has no target
    # Values 1 (p < 32, even p) and 3 (p >= 32, even p); window 8 holds 4 values.
    # Above 1.5 once more than 1 of those 4 values is 3: the second one, at p = 34.
    value = _student().failure_position(curve, 32, tolerance=0.5, window=8)
    _expect_equal(value, 34, name="failure_position(curve with NaN)")


# --- needle_distance ------------------------------------------------------------------------
@checks.add("needle_distance", "extremos: profundidad 0 y 1", "ends: depth 0 and 1")
def needle_ends() -> None:
    far = _student().needle_distance(128, 0.0)
    why = ""
    if far in (122, 123, 120):
        why = (
            "Cuenta desde el token que predice la cifra (QUERY, índice length - k) hasta la cifra "
            "d_1 de la aguja (índice w + 2), no hasta MARK ni hasta el token predicho.|Count from "
            "the token that predicts the digit (QUERY, index length - k) to the needle's digit "
            "d_1 (index w + 2), not to MARK nor to the predicted token."
        )
    _expect_equal(far, 121, name="needle_distance(128, 0.0)", why=why)
    _expect_equal(_student().needle_distance(128, 1.0), 5, name="needle_distance(128, 1.0)")


@checks.add("needle_distance", "profundidades intermedias", "intermediate depths")
def needle_depths() -> None:
    found = [_student().needle_distance(512, d) for d in (0.25, 0.5, 0.75)]
    # F = 512 - 12 = 500 filler tokens; w = 125, 250, 375; distance = 505 - w.
    _expect_equal(found, [380, 255, 130], name="needle_distance(512, 0.25 / 0.5 / 0.75)")


@checks.add("needle_distance", "redondeo de Python y k cifras", "Python's rounding and k digits")
def needle_rounding() -> None:
    # length 18, k = 3: F = 10 filler tokens. depth 0.25 -> w = round(2.5) = 2 (Python rounds
    # halves to even); depth 0.36 -> w = round(3.6) = 4. Distance = 18 - 3 - 2 - w.
    found = [_student().needle_distance(18, d, n_digits=3) for d in (0.25, 0.36)]
    why = ""
    if found in ([10, 9], [11, 10], [10, 10]):
        why = (
            "Calcula w con round() de Python, como PasskeyTask (ni int() ni redondeo hacia "
            "arriba).|Compute w with Python's round(), as PasskeyTask does (neither int() nor "
            "rounding half up)."
        )
    _expect_equal(found, [11, 9], name="needle_distance(18, 0.25 / 0.36, n_digits=3)", why=why)
