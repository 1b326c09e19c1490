"""What a graded function must return, said once for the self-check and the grader.

When a function returns a value of the wrong kind (a tensor where a Python number is due, say),
``minimodel check`` and the grader's feedback explain it with the same words: both read this
table. A contract is keyed by the function it is about (scaling.py's methods share theirs, keyed
by the module) and by the code the feedback shows; a ``dtype-not-kept`` text names the dtypes
asked for and returned in its ``{dtypes}`` (:func:`not_kept`). Plain text only: the grader reads
it without loading PyTorch.

Both also recognise a classic mistake alike: a value is named after a mistake when it lies within
``MISTAKE_RTOL`` and ``MISTAKE_ATOL`` of what the mistake gives (``numpy.isclose``'s sense, NaN
only where the mistake gives NaN).
"""

from __future__ import annotations

MISTAKE_RTOL, MISTAKE_ATOL = 1e-3, 2e-3  # to recognise a known mistake, not to grade

CONTRACTS: dict[tuple[str, str], tuple[str, str]] = {
    ("sinusoidal_pe", "returns-tensor"): (
        "sinusoidal_pe devuelve un torch.Tensor; debe devolver un np.ndarray (el módulo lo "
        "convierte con torch.from_numpy).",
        "sinusoidal_pe returns a torch.Tensor; it must return an np.ndarray (the module converts "
        "it with torch.from_numpy).",
    ),
    ("sinusoidal_pe", "float64-output"): (
        "sinusoidal_pe devuelve float64; la tabla debe ser float32. Calcular en float64 está "
        "bien: convierte al final con .astype(np.float32).",
        "sinusoidal_pe returns float64; the table must be float32. Computing in float64 is fine: "
        "convert at the end with .astype(np.float32).",
    ),
    ("rope_frequencies", "float64-output"): (
        "rope_frequencies devuelve float64; debe devolver float32.",
        "rope_frequencies returns float64; it must return float32.",
    ),
    ("permutation_equivariance_gap", "returns-tensor"): (
        "permutation_equivariance_gap debe devolver un float de Python: termina con .item().",
        "permutation_equivariance_gap must return a Python float: end with .item().",
    ),
    ("permutation_equivariance_gap", "not-a-float"): (
        "permutation_equivariance_gap debe devolver un float de Python.",
        "permutation_equivariance_gap must return a Python float.",
    ),
    ("doubling_buckets", "not-ints"): (
        "doubling_buckets devuelve una lista de pares (inicio, fin) de enteros de Python, no "
        "tensores ni floats.",
        "doubling_buckets returns a list of (start, end) pairs of Python ints, not tensors or "
        "floats.",
    ),
    ("bucket_means", "not-float32"): (
        "bucket_means devuelve float32 sea cual sea el dtype de loss.",
        "bucket_means returns float32 whatever the dtype of loss.",
    ),
    ("failure_position", "not-int"): (
        "failure_position devuelve un int de Python (int(p)) o None, no un float ni un tensor.",
        "failure_position returns a Python int (int(p)) or None, not a float or a tensor.",
    ),
    ("needle_distance", "not-int"): (
        "needle_distance devuelve un int de Python, no un float ni un tensor ni un array.",
        "needle_distance returns a Python int, not a float, a tensor or an array.",
    ),
    ("scaling", "not-a-pair"): (
        "Cada método devuelve una tupla de dos elementos: (inv_freq, attention_factor).",
        "Every method returns a tuple of two elements: (inv_freq, attention_factor).",
    ),
    ("scaling", "float64-output"): (
        "inv_freq debe ser float32, como el de rope_frequencies; tu código devuelve float64.",
        "inv_freq must be float32, as rope_frequencies' is; your code returns float64.",
    ),
    ("scaling", "factor-type"): (
        "attention_factor debe ser un número de Python (float), no un tensor ni un array: el "
        "modelo lo pasa a apply_rope.",
        "attention_factor must be a Python number (float), not a tensor or an array: the model "
        "passes it to apply_rope.",
    ),
    ("SinusoidalPositionalEncoding.forward", "dtype-not-kept"): (
        "forward no conserva el dtype de x ({dtypes}). Convierte las filas con .to(dtype=x.dtype) "
        "antes de sumarlas.",
        "forward does not keep x's dtype ({dtypes}). Convert the rows with .to(dtype=x.dtype) "
        "before adding them.",
    ),
    ("LearnedPositionalEmbedding.forward", "dtype-not-kept"): (
        "forward no conserva el dtype de x ({dtypes}): pasa las filas de la tabla (float32) al "
        "dtype de x antes de sumarlas.",
        "forward does not keep x's dtype ({dtypes}): cast the table's rows (float32) to x's "
        "dtype before adding them.",
    ),
    ("interpolate_positions", "dtype-not-kept"): (
        "interpolate_positions no conserva el dtype de table ({dtypes}): puedes mezclar en "
        "float32 o float64, pero convierte el resultado al dtype de table al final.",
        "interpolate_positions does not keep table's dtype ({dtypes}): you may blend in float32 "
        "or float64, but cast the result back to table's dtype at the end.",
    ),
    ("apply_rotary", "dtype-not-kept"): (
        "apply_rotary no conserva el dtype de x ({dtypes}): calcula en float32 y convierte el "
        "resultado al dtype de x.",
        "apply_rotary does not keep x's dtype ({dtypes}): compute in float32 and convert the "
        "result to x's dtype.",
    ),
    ("interpolate_grid", "dtype-not-kept"): (
        "interpolate_grid no conserva el dtype de la tabla ({dtypes}): interpola en float32 (o en "
        "float64 si la tabla lo es) y devuelve el dtype de entrada.",
        "interpolate_grid does not keep the table's dtype ({dtypes}): interpolate in float32 (or "
        "in float64 for a float64 table) and return the input's dtype.",
    ),
    ("bias_rows_after_cache", "dtype-not-kept"): (
        "bias_rows_after_cache no conserva el dtype de table ({dtypes}): basta con indexarla, "
        "sin convertir nada.",
        "bias_rows_after_cache does not keep table's dtype ({dtypes}): indexing it is enough, "
        "with no conversion.",
    ),
}


# What the self-check's comparison of arrays sees (``compare.expect_array``) -> the contract that
# explains it: (the function, "kind <type>" or "dtype <dtype>", or "dtype" for any wrong dtype).
SEEN_AS: dict[tuple[str, str], tuple[str, str]] = {
    ("sinusoidal_pe", "kind Tensor"): ("sinusoidal_pe", "returns-tensor"),
    ("sinusoidal_pe", "dtype float64"): ("sinusoidal_pe", "float64-output"),
    ("rope_frequencies", "dtype float64"): ("rope_frequencies", "float64-output"),
    ("bucket_means", "dtype"): ("bucket_means", "not-float32"),
    **{(f"{method}_scaling", "dtype float64"): ("scaling", "float64-output")
       for method in ("linear", "ntk", "dynamic_ntk", "yarn", "llama3", "longrope")},
}


def seen(name: str, *signs: str) -> tuple[str, str] | None:
    """The contract that explains what the comparison of the value ``name`` (``"f(...)"``) saw:
    the first of ``signs`` (``"kind Tensor"``, ``"dtype float64"``, ``"dtype"``) known for ``f``."""
    function = name.split("(", 1)[0]
    return next((CONTRACTS[SEEN_AS[function, sign]] for sign in signs
                 if (function, sign) in SEEN_AS), None)


def not_kept(subject: str, pairs, *, returned: bool = True) -> tuple[str, str]:
    """The words of ``subject``'s ``dtype-not-kept`` contract for the ``(asked, returned)``
    dtypes ``pairs``: each pair once, as ``"bfloat16 → float32"`` (the input's dtype, then the
    output's), in order. With ``returned=False`` (the grader, on hidden cases) the dtype that
    came back is not named, since the student's code chose it and could have chosen it from the
    hidden input: ``"bfloat16 → otro dtype"``, each asked dtype once."""
    es, en = CONTRACTS[subject, "dtype-not-kept"]
    if not returned:
        asked = sorted({dtype for dtype, _ in pairs})
        return (es.format(dtypes=", ".join(f"{dtype} → otro dtype" for dtype in asked)),
                en.format(dtypes=", ".join(f"{dtype} → another dtype" for dtype in asked)))
    listed = ", ".join(f"{asked} → {got}" for asked, got in sorted(set(pairs)))
    return es.format(dtypes=listed), en.format(dtypes=listed)


def broken(subject: str, code: str, name: str, returned: str) -> tuple[str, str]:
    """The self-check's words for the call ``name`` having returned ``returned`` (a type's name,
    or the value as the report shows it) against the contract ``(subject, code)``: what came
    back, then the contract."""
    es, en = CONTRACTS[subject, code]
    return f"{name} devolvió {returned}. {es}", f"{name} returned {returned}. {en}"
