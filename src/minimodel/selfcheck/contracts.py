"""What a graded function must return, said once for the self-check and the grader.

When a function returns a value of the wrong kind (a tensor where a Python number is due, say),
``minimodel check`` and the grader's feedback explain it with the same words: both read this
table. A contract is keyed by the function it is about (scaling.py's methods share theirs, keyed
by the module) and by the code the feedback shows. Plain text only: the grader reads it without
loading PyTorch.
"""

from __future__ import annotations

CONTRACTS: dict[tuple[str, str], tuple[str, str]] = {
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
    ("scaling", "factor-type"): (
        "attention_factor debe ser un número de Python (float), no un tensor ni un array: el "
        "modelo lo pasa a apply_rope.",
        "attention_factor must be a Python number (float), not a tensor or an array: the model "
        "passes it to apply_rope.",
    ),
}


def broken(subject: str, code: str, name: str, returned: str) -> tuple[str, str]:
    """The self-check's words for the call ``name`` having returned ``returned`` (a type's name,
    or the value as the report shows it) against the contract ``(subject, code)``: what came
    back, then the contract."""
    es, en = CONTRACTS[subject, code]
    return f"{name} devolvió {returned}. {es}", f"{name} returned {returned}. {en}"
