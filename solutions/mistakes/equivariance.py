"""Classic mistakes in equivariance.py (lesson 17.00): what a student who makes each one writes.

See ``grader/mistakes.py``.
"""

import torch

from grader.mistakes import mistake
from minimodel.positional.equivariance import permutation_equivariance_gap as right_gap


@mistake("permutation_equivariance_gap", "inverse",
         es="Devolviste 3996, el valor de la permutación inversa. x[:, perm] pone en la fila t "
            "la fila perm[t] de x; permuta la salida igual: f(x)[:, perm].",
         en="You returned 3996, the value of the inverse permutation. x[:, perm] puts row "
            "perm[t] of x in row t; permute the output the same way: f(x)[:, perm].")
def inverse(layer, x: torch.Tensor, perm: torch.Tensor) -> float:
    return right_gap(layer, x, torch.argsort(perm))
