"""Visible checks for lab 17.04 (ALiBi). Students may read these; the grader's differ."""

from __future__ import annotations

import torch

from minimodel.selfcheck.compare import CheckList, StudentModule, expect_array
from minimodel.selfcheck.snapshots import Snapshots

checks = CheckList()
alibi = StudentModule("alibi")
snap = Snapshots("17.04")

# The slopes the bias checks start from, as alibi_slopes gives them for 4, 3 and 2 heads: the
# bias is judged on its own, whatever the student's alibi_slopes returns.
SLOPES = {
    4: torch.tensor([2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8]),
    3: torch.tensor([2.0**-4, 2.0**-8, 2.0**-2]),
    2: torch.tensor([2.0**-4, 2.0**-8]),
}


@checks.add("alibi_slopes", "4 cabezas: 1/4, 1/16, 1/64, 1/256", "4 heads: 1/4, 1/16, 1/64, 1/256")
def slopes_power_of_two() -> None:
    snap.expect(alibi.alibi_slopes(4), "alibi_slopes(4)")


@checks.add("alibi_slopes", "32 cabezas y 1 cabeza", "32 heads and 1 head")
def slopes_thirty_two_and_one() -> None:
    snap.expect(alibi.alibi_slopes(32), "alibi_slopes(32)")
    expect_array(alibi.alibi_slopes(1), torch.tensor([2.0**-8]), name="alibi_slopes(1)")


@checks.add("alibi_slopes", "10 y 48 cabezas (no son potencia de dos)",
            "10 and 48 heads (not powers of two)")
def slopes_not_power_of_two() -> None:
    for n in (10, 48):
        snap.expect(alibi.alibi_slopes(n), f"alibi_slopes({n})")


@checks.add("alibi_bias", "causal cuadrado: -m (i - j) y -inf en el futuro",
            "square causal: -m (i - j) and -inf in the future")
def bias_causal_square() -> None:
    snap.expect(alibi.alibi_bias(6, 6, SLOPES[4]), "alibi_bias(6, 6, alibi_slopes(4))")


@checks.add("alibi_bias", "consultas alineadas al final (caché KV)",
            "queries aligned to the end (KV cache)")
def bias_end_aligned() -> None:
    snap.expect(alibi.alibi_bias(2, 7, SLOPES[3]), "alibi_bias(2, 7, alibi_slopes(3))")


@checks.add("alibi_bias", "simétrico: -m |i - j| (codificadores)",
            "symmetric: -m |i - j| (encoders)")
def bias_symmetric() -> None:
    snap.expect(alibi.alibi_bias(3, 5, SLOPES[2], causal=False),
                "alibi_bias(3, 5, alibi_slopes(2), causal=False)")
