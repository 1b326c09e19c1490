"""Classic mistakes in extrapolation.py (lesson 18.01): what a student who makes each one writes.

See ``grader/build/mistakes.py``. ``doubling_buckets``, ``failure_position`` and ``needle_distance``
return Python lists and numbers; the self-check stores them as arrays (``None`` as NaN).
"""

import math

import torch

from grader.build.mistakes import mistake

# --- doubling_buckets ---------------------------------------------------------------------------


def _pairs(edges: list[int]) -> list[tuple[int, int]]:
    return list(zip(edges[:-1], edges[1:], strict=True))


@mistake("doubling_buckets", "linear",
         es="Las cubetas deben doblar su longitud: [0, T), [T, 2T), [2T, 4T), [4T, 8T)…; cada "
            "una termina en el doble de su inicio, no T posiciones más allá.",
         en="The buckets must double in length: [0, T), [T, 2T), [2T, 4T), [4T, 8T)…; each ends "
            "at twice its start, not T positions further.")
def linear(train_len: int, length: int) -> list[tuple[int, int]]:
    return _pairs(list(range(0, length, train_len)) + [length])


@mistake("doubling_buckets", "not-cut",
         es="Ninguna cubeta puede pasar de length: la última (o la única, si length ≤ T) termina "
            "en length.",
         en="No bucket may go past length: the last one (or the only one, when length ≤ T) ends "
            "at length.")
def not_cut(train_len: int, length: int) -> list[tuple[int, int]]:
    edges = [0, train_len]
    while edges[-1] < length:
        edges.append(2 * edges[-1])
    return _pairs(edges)


# --- bucket_means -------------------------------------------------------------------------------


@mistake("bucket_means", "mean-of-means",
         es="Es una media de medias por secuencia: cada valor de la cubeta debe contar una vez "
            "(la media de todos los valores sin NaN de todas las secuencias).",
         en="This is a mean of per-sequence means: every value in the bucket must count once "
            "(the mean of all non-NaN values of every sequence).")
def mean_of_means(loss: torch.Tensor, buckets: list[tuple[int, int]]) -> torch.Tensor:
    means = [loss[..., start:end].float().nanmean(-1).nanmean() for start, end in buckets]
    return torch.stack(means).to(torch.float32)


@mistake("bucket_means", "nan-not-skipped",
         es="Una cubeta con algún NaN da NaN: usa torch.nanmean, que ignora las posiciones sin "
            "objetivo.",
         en="A bucket with any NaN gives NaN: use torch.nanmean, which skips the positions "
            "without a target.")
def nan_not_skipped(loss: torch.Tensor, buckets: list[tuple[int, int]]) -> torch.Tensor:
    return torch.stack([loss[..., start:end].float().mean() for start, end in buckets])


@mistake("bucket_means", "nan-as-zero",
         es="Los NaN cuentan como ceros: las posiciones sin objetivo no deben entrar ni en la "
            "suma ni en la cuenta (torch.nanmean).",
         en="NaNs count as zeros: positions without a target must enter neither the sum nor the "
            "count (torch.nanmean).")
def nan_as_zero(loss: torch.Tensor, buckets: list[tuple[int, int]]) -> torch.Tensor:
    return torch.stack([loss[..., start:end].float().nan_to_num().mean()
                        for start, end in buckets])


# --- failure_position ---------------------------------------------------------------------------


def _failure(*, span=lambda p, window: (max(0, p - window + 1), p + 1), mean=torch.nanmean,
             reference_start=None, search_start=None,
             crossed=lambda smooth, limit: smooth > limit, answer=lambda p, window: p):
    """``failure_position`` searching as the reference does, one of its steps done wrong."""
    def failure_position(per_position, train_len, *, tolerance, window):
        curve = per_position.detach().to("cpu", torch.float64)
        start = train_len // 2 if reference_start is None else reference_start
        reference = mean(curve[start:train_len])
        for p in range(train_len if search_start is None else search_start, len(curve)):
            lo, hi = span(p, window)
            if crossed(mean(curve[lo:hi]), reference + tolerance):
                return int(answer(p, window))
        return None

    return failure_position


centred = mistake(
    "failure_position", "centred",
    es="La media móvil está centrada en p: debe ir hacia atrás, "
       "per_position[p − window + 1 .. p], sin mirar posiciones posteriores a p.",
    en="The moving mean is centred on p: it must look back, "
       "per_position[p − window + 1 .. p], without positions after p."
)(_failure(span=lambda p, w: (max(0, p - w // 2), p + (w + 1) // 2)))


forward = mistake(
    "failure_position", "forward",
    es="La media móvil mira hacia delante (p .. p + window − 1): debe ir hacia atrás, "
       "per_position[p − window + 1 .. p].",
    en="The moving mean looks ahead (p .. p + window − 1): it must look back, "
       "per_position[p − window + 1 .. p].")(_failure(span=lambda p, w: (p, p + w)))


no_smoothing = mistake(
    "failure_position", "no-smoothing",
    es="Comparas la pérdida de cada posición sin suavizar: usa la media de las últimas "
       "window posiciones hasta p.",
    en="You compare each position's loss unsmoothed: use the mean of the last window "
       "positions up to p.")(_failure(span=lambda p, w: (p, p + 1)))


reference_from_start = mistake(
    "failure_position", "reference-from-start",
    es="La referencia es la media de [T//2, T), posiciones con contexto; las primeras "
       "posiciones tienen una pérdida alta que no cuenta.",
    en="The reference is the mean over [T//2, T), positions with context; the first "
       "positions have a high loss that does not count.")(_failure(reference_start=0))


search_from_zero = mistake(
    "failure_position", "search-from-zero",
    es="La búsqueda empieza en T: el resultado nunca es menor que train_len.",
    en="The search starts at T: the result is never below train_len.")(_failure(search_start=0))


failure_nan_not_skipped = mistake(
    "failure_position", "failure-nan-not-skipped",
    es="Con posiciones sin objetivo (NaN), las medias deben saltarlas (torch.nanmean): con "
       "NaN ninguna comparación es cierta.",
    en="With positions without a target (NaN), the means must skip them (torch.nanmean): "
       "with NaN no comparison is true.")(_failure(mean=torch.mean))


greater_equal = mistake(
    "failure_position", "greater-equal",
    es="La pérdida falla cuando SUPERA referencia + tolerance (>), no cuando la iguala (>=).",
    en="The loss fails when it EXCEEDS reference + tolerance (>), not when it equals it "
       "(>=).")(_failure(crossed=lambda smooth, limit: smooth >= limit))


window_start = mistake(
    "failure_position", "window-start",
    es="Devuelve p, la posición donde la media móvil supera el umbral, no el inicio de su "
       "ventana (p − window + 1).",
    en="Return p, the position where the moving mean crosses the threshold, not the start "
       "of its window (p − window + 1).")(_failure(answer=lambda p, w: p - w + 1))


# --- needle_distance ----------------------------------------------------------------------------


def _distance(length: int, n_digits: int, before: int) -> int:
    return length - n_digits - 2 - before


@mistake("needle_distance", "truncated",
         es="w se calcula con round() de Python, como PasskeyTask, no con int(), que trunca.",
         en="w is computed with Python's round(), as PasskeyTask does, not with int(), which "
            "truncates.")
def truncated(length: int, depth: float, n_digits: int = 5) -> int:
    return _distance(length, n_digits, int(depth * (length - 2 * n_digits - 2)))


@mistake("needle_distance", "half-up",
         es="round() de Python redondea los medios al par (round(2.5) = 2): no redondees "
            "siempre hacia arriba.",
         en="Python's round() rounds halves to even (round(2.5) = 2): do not always round half "
            "up.")
def half_up(length: int, depth: float, n_digits: int = 5) -> int:
    return _distance(length, n_digits, math.floor(depth * (length - 2 * n_digits - 2) + 0.5))


@mistake("needle_distance", "off-by-one",
         es="La distancia sale una posición más larga: cuenta desde QUERY (índice length − k), "
            "el token que predice d_1, hasta la cifra d_1 de la aguja (índice w + 2), no hasta "
            "MARK ni desde el token predicho.",
         en="The distance comes out one position too long: count from QUERY (index length − k), "
            "the token that predicts d_1, to the needle's digit d_1 (index w + 2), not to MARK "
            "nor from the predicted token.")
def off_by_one(length: int, depth: float, n_digits: int = 5) -> int:
    return _distance(length, n_digits, round(depth * (length - 2 * n_digits - 2))) + 1


@mistake("needle_distance", "digits-fixed",
         es="La clave tiene n_digits cifras (k), no siempre 5: k entra en el relleno "
            "F = length − 2k − 2 y en la distancia length − k − 2 − w.",
         en="The passkey has n_digits digits (k), not always 5: k enters the filler "
            "F = length − 2k − 2 and the distance length − k − 2 − w.")
def digits_fixed(length: int, depth: float, n_digits: int = 5) -> int:
    return _distance(length, 5, round(depth * (length - 12)))
