# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: nbgrader,tags,-all
#     formats: py:percent
#     notebook_metadata_filter: kernelspec,-all
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade_id": "intro", "locked": true}
# # Laboratorio 17.06 · Posiciones en 2-D y visión
# *Lab 17.06 · 2-D positions and vision*
#
# **[es]** Un Vision Transformer corta la imagen en una rejilla de parches y los pone en fila: la
# posición de cada parche es una fila y una columna, no un solo número. En este laboratorio
# construyes la codificación sinusoidal 2-D, interpolas una tabla aprendida de ViT a otra
# resolución y ves qué se pierde, aplicas la RoPE 2-D axial y compruebas que la atención depende
# del desplazamiento 2-D, y añades el tiempo como un eje más de posición (vídeo y audio).
#
# **[en]** A Vision Transformer cuts the image into a grid of patches and lines them up: each
# patch's position is a row and a column, not a single number. In this lab you build the 2-D
# sinusoidal encoding, interpolate a learned ViT table to another resolution and see what is lost,
# apply axial 2-D RoPE and check that attention depends on the 2-D offset, and add time as one
# more position axis (video and audio).
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/17/06-two-d-and-vision.md` · `docs_en/17/06-two-d-and-vision.md`.
# 2. Completa / complete `sinusoidal_2d`, `interpolate_grid` y/and `apply_rope_2d` en/in
#    `src/minimodel/positional/two_d.py`. `apply_rope_2d` usa tus `rope_cos_sin` y `apply_rotary`
#    del laboratorio 17.03 / uses your `rope_cos_sin` and `apply_rotary` from lab 17.03.
# 3. Comprueba tu código / check your code: `make check LAB=17.06`.
# 4. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Las celdas marcadas
#    `TU CÓDIGO` / `YOUR CODE` son tuyas; las de pruebas están bloqueadas.

# %% nbgrader={"grade_id": "setup", "locked": true}
import matplotlib.pyplot as plt
import torch

from minimodel.labkit import reload_edited_modules, save_figure, sized
from minimodel.positional.two_d import (
    apply_rope_2d,
    grid_positions,
    interpolate_grid,
    sinusoidal_2d,
)

torch.set_printoptions(precision=4, sci_mode=False, linewidth=100)


def sinusoidal_at(positions: torch.Tensor, d: int, base: float = 10000.0) -> torch.Tensor:
    """1-D interleaved sinusoidal encoding (lesson 17.01) at real-valued positions: (N,) -> (N, d)."""
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = positions.double()[:, None] * inv_freq
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. La codificación sinusoidal 2-D / The 2-D sinusoidal encoding
#
# **[es]** El parche de la fila $r$ y la columna $c$ recibe
# $\mathrm{PE}(r, c) = [\,\mathrm{PE}_{d/2}(r) \mid \mathrm{PE}_{d/2}(c)\,]$: la primera mitad es la
# codificación 1-D de la fila con anchura $d/2$ y la segunda, la de la columna. Los parches se
# numeran fila a fila. Como cada mitad es una tabla sinusoidal,
# $\mathrm{PE}(r, c) \cdot \mathrm{PE}(r', c') = f(r - r') + f(c - c')$: el producto escalar solo
# depende del desplazamiento 2-D.
#
# **[en]** The patch at row $r$ and column $c$ gets
# $\mathrm{PE}(r, c) = [\,\mathrm{PE}_{d/2}(r) \mid \mathrm{PE}_{d/2}(c)\,]$: the first half is the
# 1-D encoding of the row with width $d/2$ and the second half that of the column. Patches are
# numbered row by row. Since each half is a sinusoidal table,
# $\mathrm{PE}(r, c) \cdot \mathrm{PE}(r', c') = f(r - r') + f(c - c')$: the dot product depends
# only on the 2-D offset.

# %% nbgrader={"grade_id": "two-d", "locked": true}
H, W, d = 8, 8, 64
pe2 = sinusoidal_2d(H, W, d)
print(pe2.shape, pe2.dtype)
print("PE(0, 1) con d = 8 / with d = 8:", sinusoidal_2d(2, 2, 8)[1])

similarity = pe2 @ pe2.T  # (64, 64)
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), layout="constrained")
axes[0].imshow(pe2, aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1)
axes[0].set_title("PE 2-D: filas = parches / rows = patches")
axes[0].set_xlabel("dimensión / dimension")
for ax, (r, c) in zip(axes[1:], ((3, 4), (0, 0)), strict=True):
    ax.imshow(similarity[r * W + c].reshape(H, W), cmap="viridis")
    ax.set_title(f"PE({r}, {c}) · PE(r', c')")
    ax.set_xlabel("c'")
    ax.set_ylabel("r'")
save_figure(fig, "17_06_sinusoidal_2d")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-two-d", "locked": true, "points": 2}
rows, cols = grid_positions(H, W)
assert pe2.shape == (H * W, d) and pe2.dtype == torch.float32, "forma (H*W, d), float32 / shape (H*W, d), float32"
assert torch.allclose(pe2[:, : d // 2].double(), sinusoidal_at(rows, d // 2), atol=1e-6), "primera mitad = fila / first half = row"
assert torch.allclose(pe2[:, d // 2 :].double(), sinusoidal_at(cols, d // 2), atol=1e-6), "segunda mitad = columna / second half = column"
assert torch.isclose(similarity[0 * W + 1, 2 * W + 3], similarity[5 * W + 2, 7 * W + 4], atol=1e-4), "solo el desplazamiento / only the offset"
### BEGIN HIDDEN TESTS
rect = sinusoidal_2d(3, 5, 12, base=100.0)
r3, c5 = grid_positions(3, 5)
assert torch.allclose(rect.double(), torch.cat((sinusoidal_at(r3, 6, 100.0), sinusoidal_at(c5, 6, 100.0)), 1), atol=1e-6)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part1b-md", "locked": true}
# **[es]** MAE (`get_2d_sincos_pos_embed`) usa las mismas frecuencias pero otro orden de
# columnas: primero la **columna** y después la fila, y cada mitad como `[senos | cosenos]`.
# Escribe `to_mae_layout(d)`: la permutación `perm` tal que `pe2[:, perm]` es la tabla de MAE.
#
# **[en]** MAE (`get_2d_sincos_pos_embed`) uses the same frequencies but another column order:
# the **column** first and then the row, and each half as `[sines | cosines]`. Write
# `to_mae_layout(d)`: the permutation `perm` such that `pe2[:, perm]` is MAE's table.

# %% nbgrader={"grade_id": "mae-layout", "solution": true}
def to_mae_layout(d: int) -> torch.Tensor:
    """LongTensor (d,): our column index for each column of MAE's layout."""
    ### BEGIN SOLUTION
    half = d // 2

    def sin_then_cos(start: int) -> torch.Tensor:
        return torch.cat((torch.arange(start, start + half, 2), torch.arange(start + 1, start + half, 2)))

    return torch.cat((sin_then_cos(half), sin_then_cos(0)))
    ### END SOLUTION


# %% nbgrader={"grade_id": "mae-check", "locked": true}
mae_row = sinusoidal_2d(2, 2, 8)[:, to_mae_layout(8)][1]
print("MAE, G = 2, D = 8, parche / patch (r=0, c=1):", mae_row)

# %% nbgrader={"grade": true, "grade_id": "test-mae", "locked": true, "points": 1}
assert sorted(to_mae_layout(8).tolist()) == list(range(8)), "una permutación / a permutation"
assert torch.allclose(mae_row, torch.tensor([0.8415, 0.0100, 0.5403, 1.0, 0.0, 0.0, 1.0, 1.0]), atol=1e-4), "la fila de MAE no tiene los valores esperados / the MAE row does not have the expected values"
### BEGIN HIDDEN TESTS
import numpy as np


def mae_reference(grid_size, dim):
    def one(pos, dd):
        omega = 1.0 / 10000 ** (np.arange(dd // 2) / (dd / 2.0))
        out = np.outer(pos, omega)
        return np.concatenate([np.sin(out), np.cos(out)], axis=1)

    grid = np.stack(np.meshgrid(np.arange(grid_size, dtype=float), np.arange(grid_size, dtype=float)), 0)
    return np.concatenate([one(grid[0].reshape(-1), dim // 2), one(grid[1].reshape(-1), dim // 2)], axis=1)


assert np.allclose(sinusoidal_2d(5, 5, 16)[:, to_mae_layout(16)].numpy(), mae_reference(5, 16), atol=1e-6)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. Interpolar una tabla aprendida / Interpolating a learned table
#
# **[es]** ViT-B/16 preentrenado a $224 \times 224$ tiene una rejilla de $14 \times 14$ parches y una
# tabla aprendida de $1 + 196 = 197$ filas (la primera, del token CLS). Al ajustarlo a
# $384 \times 384$ la rejilla pasa a $24 \times 24$ y hacen falta $577$ filas: se interpola la
# rejilla como si fuera una imagen de $D$ canales. Con `align_corners=False`, la celda $i$ de la
# rejilla nueva toma el valor de la posición $(i + \tfrac12)\,\tfrac{h}{h'} - \tfrac12$ de la vieja.
# Para ver qué se pierde, usamos como tabla "aprendida" una sinusoidal 2-D, que sabemos evaluar en
# posiciones no enteras. Escribe `sampled_positions(old, new)` con esa fórmula.
#
# **[en]** ViT-B/16 pretrained at $224 \times 224$ has a grid of $14 \times 14$ patches and a
# learned table of $1 + 196 = 197$ rows (the first one for the CLS token). Fine-tuning it at
# $384 \times 384$ makes the grid $24 \times 24$ and needs $577$ rows: the grid is interpolated as an
# image with $D$ channels. With `align_corners=False`, cell $i$ of the new grid takes the value at
# position $(i + \tfrac12)\,\tfrac{h}{h'} - \tfrac12$ of the old one. To see what is lost, we use a
# 2-D sinusoidal table as the "learned" one, since we can evaluate it at non-integer positions.
# Write `sampled_positions(old, new)` with that formula.

# %% nbgrader={"grade_id": "sampled-positions", "solution": true}
def sampled_positions(old: int, new: int) -> torch.Tensor:
    """float64 (new,): the old-grid coordinate that each new cell samples (align_corners=False)."""
    ### BEGIN SOLUTION
    return (torch.arange(new, dtype=torch.float64) + 0.5) * old / new - 0.5
    ### END SOLUTION


# %% nbgrader={"grade_id": "interpolate", "locked": true}
old, new, D = 14, sized(full=24, test=20), 64
torch.manual_seed(0)
cls = torch.randn(1, D)
learned = torch.cat((cls, sinusoidal_2d(old, old, D)), dim=0)  # (1 + 196, D)
resized = interpolate_grid(learned, (new, new), num_prefix_tokens=1)
print(tuple(learned.shape), "->", tuple(resized.shape))

# Lo que "debería" salir: la función evaluada en las posiciones muestreadas (sin los bordes).
# What "should" come out: the function evaluated at the sampled positions (without the borders).
s = sampled_positions(old, new)
inside = (s >= 0) & (s <= old - 1)
exact_rows = sinusoidal_at(s, D // 2)  # (new, D/2); each column is the same along the other axis
got_rows = resized[1:].reshape(new, new, D)[:, new // 2, : D // 2].double()  # one column of patches
error = (got_rows - exact_rows)[inside].abs().amax(dim=0)  # per dimension
print("error máximo por pareja (rápida -> lenta) / max error per pair (fast -> slow):")
print(error.reshape(-1, 2).amax(dim=1))

fig, ax = plt.subplots(figsize=(7, 3.4))
ax.semilogy(error.reshape(-1, 2).amax(dim=1), marker="o")
ax.set_xlabel("pareja de frecuencias i / frequency pair i")
ax.set_ylabel("error de interpolación / interpolation error")
ax.set_title(f"{old}x{old} -> {new}x{new}, bicúbica / bicubic")
save_figure(fig, "17_06_interpolation_error")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-interpolate", "locked": true, "points": 3}
assert resized.shape == (1 + new * new, D), "forma (1 + h'w', D) / shape (1 + h'w', D)"
assert torch.equal(resized[0], learned[0]), "el CLS no se interpola / CLS is not interpolated"
assert torch.allclose(sampled_positions(14, 24)[:2], torch.tensor([-0.20833333, 0.375], dtype=torch.float64)), "sampled_positions(14, 24) debe empezar en -0.2083, 0.375 / sampled_positions(14, 24) must start at -0.2083, 0.375"
assert error[0] > 10 * error[-2], "las frecuencias altas pierden más / high frequencies lose more"
assert error[-2] < 1e-3, "las frecuencias bajas casi no pierden (< 1e-3) / low frequencies lose almost nothing (< 1e-3)"
### BEGIN HIDDEN TESTS
same = interpolate_grid(learned, (old, old), num_prefix_tokens=1)
assert torch.allclose(same, learned, atol=1e-5), "mismo tamaño = identidad / same size = identity"
rect = torch.randn(2 * 3, 4)
assert interpolate_grid(rect, (4, 6), old_hw=(2, 3)).shape == (24, 4)
assert torch.allclose(sampled_positions(4, 2), torch.tensor([0.5, 2.5], dtype=torch.float64))
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] Con una tabla sinusoidal 2-D bastaría recalcularla para la
# rejilla de $24 \times 24$. ¿Por qué eso no es lo mismo que interpolar, y por qué un modelo
# entrenado a $14 \times 14$ podría preferir la versión interpolada? · [en] With a 2-D sinusoidal
# table it would be enough to recompute it for the $24 \times 24$ grid. Why is that not the same as
# interpolating, and why might a model trained at $14 \times 14$ prefer the interpolated version?

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Recalcular da a la rejilla nueva las posiciones $0, \dots, 23$: los parches del borde
# derecho e inferior reciben posiciones que el modelo nunca vio (extrapolación) y la misma zona de
# la imagen cambia de número. Interpolar conserva el rango $0, \dots, 13$ y solo lo muestrea más
# fino: cada zona de la imagen mantiene la posición que tenía, a costa de un paso más corto entre
# parches vecinos que el visto en el entrenamiento. Para un modelo entrenado a $14 \times 14$ lo
# segundo suele ser menos extraño; por eso ViT y DeiT interpolan y después ajustan unas cuantas
# épocas a la resolución nueva.
#
# [en] Recomputing gives the new grid positions $0, \dots, 23$: the patches on the right and bottom
# edges get positions the model never saw (extrapolation), and the same area of the image changes
# number. Interpolating keeps the range $0, \dots, 13$ and only samples it more finely: each area of
# the image keeps its position, at the price of a shorter step between neighbouring patches than in
# training. For a model trained at $14 \times 14$ the second is usually less strange; that is why
# ViT and DeiT interpolate and then fine-tune for a few epochs at the new resolution.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. RoPE 2-D axial / Axial 2-D RoPE
#
# **[es]** La RoPE 2-D axial divide las dimensiones rotadas en dos bloques: el primero gira con la
# fila y el segundo con la columna. Así, $\langle R(r, c)\,q,\ R(r', c')\,k \rangle$ depende solo de
# $(r' - r,\ c' - c)$. Compáralo con una RoPE 1-D sobre el índice del parche, $n = rW + c$: dos
# parches vecinos en la imagen pueden estar lejos en $n$, y al revés.
#
# **[en]** Axial 2-D RoPE splits the rotated dimensions into two blocks: the first turns with the
# row and the second with the column. Then $\langle R(r, c)\,q,\ R(r', c')\,k \rangle$ depends only
# on $(r' - r,\ c' - c)$. Compare it with a 1-D RoPE over the patch index, $n = rW + c$: two patches
# that are neighbours in the image can be far apart in $n$, and the other way round.

# %% nbgrader={"grade_id": "rope-2d", "locked": true}
G, D_head = 6, 32
inv_freq = 100.0 ** (-torch.arange(0, D_head // 2, 2, dtype=torch.float32) / (D_head // 2))  # (8,): 4F = D_head
rows, cols = grid_positions(G, G)
torch.manual_seed(1)
q_vec = torch.randn(D_head)
k_vec = q_vec + 0.5 * torch.randn(D_head)  # una clave parecida a la consulta / a key similar to the query
q = apply_rope_2d(q_vec.expand(1, 1, G * G, D_head), rows, cols, inv_freq)
k = apply_rope_2d(k_vec.expand(1, 1, G * G, D_head), rows, cols, inv_freq)
logits = (q @ k.transpose(-2, -1))[0, 0]  # (36, 36): the same two vectors at every position
print("normas conservadas / norms kept:", torch.allclose(q.norm(dim=-1), q_vec.norm().expand(G * G), atol=1e-5))

# La misma idea en 1-D sobre el índice n = r G + c (dos bloques con la misma posición n).
# The same idea in 1-D over the index n = r G + c (both blocks with the same position n).
n = rows * G + cols
q1 = apply_rope_2d(q_vec.expand(1, 1, G * G, D_head), n, n, inv_freq)
k1 = apply_rope_2d(k_vec.expand(1, 1, G * G, D_head), n, n, inv_freq)
logits_1d = (q1 @ k1.transpose(-2, -1))[0, 0]

a, b = 2 * G + 5, 3 * G + 0  # (2, 5) -> (3, 0): n crece en 1 / n grows by 1
c_, e_ = 2 * G + 3, 2 * G + 4  # (2, 3) -> (2, 4): n crece en 1 / n grows by 1
print("1-D: logit((2,5)->(3,0)) =", round(logits_1d[a, b].item(), 4), " logit((2,3)->(2,4)) =", round(logits_1d[c_, e_].item(), 4))
print("2-D: logit((2,5)->(3,0)) =", round(logits[a, b].item(), 4), " logit((2,3)->(2,4)) =", round(logits[c_, e_].item(), 4))

centre = (G // 2) * G + G // 2
fig, axes = plt.subplots(1, 2, figsize=(8, 3.6), layout="constrained")
axes[0].imshow(logits[centre].reshape(G, G).detach(), cmap="viridis")
axes[0].set_title("RoPE 2-D: consulta en el centro / query at the centre")
axes[1].imshow(logits_1d[centre].reshape(G, G).detach(), cmap="viridis")
axes[1].set_title("RoPE 1-D sobre n / over n")
save_figure(fig, "17_06_rope_2d")
plt.show()

# %% [markdown] nbgrader={"grade_id": "spread-md", "locked": true}
# **[es]** Comprueba la propiedad relativa con números. Escribe `largest_spread(matrix, key)`:
# agrupa las entradas de `matrix` (forma `(N, N)`) que tienen el mismo valor en `key` (misma forma)
# y devuelve, como `float`, el mayor `max - min` de un grupo. Si la matriz depende solo de la
# clave, el resultado es casi 0.
#
# **[en]** Check the relative property with numbers. Write `largest_spread(matrix, key)`: group the
# entries of `matrix` (shape `(N, N)`) that have the same value in `key` (same shape) and return,
# as a `float`, the largest `max - min` within a group. If the matrix depends only on the key, the
# result is almost 0.

# %% nbgrader={"grade_id": "spread", "solution": true}
def largest_spread(matrix: torch.Tensor, key: torch.Tensor) -> float:
    """Largest (max - min) of matrix over the groups of entries with equal key."""
    ### BEGIN SOLUTION
    spread = 0.0
    for value in key.unique():
        group = matrix[key == value]
        spread = max(spread, (group.max() - group.min()).item())
    return spread
    ### END SOLUTION


# %% nbgrader={"grade_id": "spread-check", "locked": true}
d_row = rows[None, :] - rows[:, None]  # (36, 36): r' - r
d_col = cols[None, :] - cols[:, None]
offset_2d = (d_row + G) * (2 * G + 1) + (d_col + G)  # one number per 2-D offset
offset_n = n[None, :] - n[:, None]  # the 1-D offset along the raster order
spread_2d = largest_spread(logits.detach(), offset_2d)
spread_2d_by_n = largest_spread(logits.detach(), offset_n)
spread_1d_by_n = largest_spread(logits_1d.detach(), offset_n)
print(f"RoPE 2-D, agrupada por (dr, dc) / grouped by (dr, dc): {spread_2d:.2e}")
print(f"RoPE 2-D, agrupada por dn / grouped by dn:             {spread_2d_by_n:.2e}")
print(f"RoPE 1-D, agrupada por dn / grouped by dn:             {spread_1d_by_n:.2e}")

# %% nbgrader={"grade": true, "grade_id": "test-rope-2d", "locked": true, "points": 3}
assert q.shape == (1, 1, G * G, D_head) and q.dtype == torch.float32, "q debe ser (1, 1, G*G, D_head) en float32 / q must be (1, 1, G*G, D_head) in float32"
assert torch.allclose(apply_rope_2d(q_vec.expand(1, 1, 1, D_head), torch.zeros(1, dtype=torch.long), torch.zeros(1, dtype=torch.long), inv_freq)[0, 0, 0], q_vec), "(0, 0) = identidad / identity"
assert isinstance(spread_2d, float), "largest_spread devuelve un float / returns a float"
assert spread_2d < 1e-4, "2-D: solo el desplazamiento (dr, dc) / only the offset (dr, dc)"
assert spread_1d_by_n < 1e-4 and spread_2d_by_n > 0.1, "1-D solo ve dn / 1-D only sees dn"
assert abs(logits_1d[a, b] - logits_1d[c_, e_]) < 1e-4 and abs(logits[a, b] - logits[c_, e_]) > 1e-3, "1-D confunde los dos pares de casillas y 2-D los distingue / 1-D confuses the two pairs of cells and 2-D tells them apart"
### BEGIN HIDDEN TESTS
assert largest_spread(torch.tensor([[1.0, 5.0], [2.0, 3.0]]), torch.tensor([[0, 1], [1, 0]])) == 3.0
x = torch.randn(2, 3, 4, 20)
r4, c4 = torch.tensor([0, 1, 2, 3]), torch.tensor([3, 2, 1, 0])
out = apply_rope_2d(x, r4, c4, inv_freq[:4])
assert torch.equal(out[..., 16:], x[..., 16:]), "el resto pasa sin tocar / the rest passes through"
assert torch.allclose(out.norm(dim=-1), x.norm(dim=-1), atol=1e-5)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. El tiempo como eje de posición / Time as a position axis
#
# **[es]** Un vídeo añade un eje: el parche $(t, r, c)$ es el de la fila $r$ y la columna $c$ del
# fotograma $t$. Una forma sencilla (factorizada) es concatenar una codificación del tiempo y otra
# del espacio. Escribe `video_positions(frames, height, width, d_time, d_space)`, que devuelve una
# tabla `(frames * height * width, d_time + d_space)` con los tokens ordenados por fotograma y,
# dentro de cada uno, fila a fila: `[PE_1D(t) de anchura d_time | sinusoidal_2d(r, c) de anchura
# d_space]`. Usa `sinusoidal_at` y `sinusoidal_2d`.
#
# **[en]** A video adds an axis: patch $(t, r, c)$ is the one at row $r$ and column $c$ of frame
# $t$. A simple (factorised) option is to concatenate an encoding of time and one of space. Write
# `video_positions(frames, height, width, d_time, d_space)`, returning a table
# `(frames * height * width, d_time + d_space)` with the tokens ordered by frame and, inside each
# one, row by row: `[PE_1D(t) of width d_time | sinusoidal_2d(r, c) of width d_space]`. Use
# `sinusoidal_at` and `sinusoidal_2d`.

# %% nbgrader={"grade_id": "video", "solution": true}
def video_positions(frames: int, height: int, width: int, d_time: int, d_space: int) -> torch.Tensor:
    """float32 (frames * height * width, d_time + d_space): [time | 2-D space] per token."""
    ### BEGIN SOLUTION
    time = sinusoidal_at(torch.arange(frames), d_time).float()  # (frames, d_time)
    space = sinusoidal_2d(height, width, d_space)  # (height * width, d_space)
    n = height * width
    return torch.cat(
        (time.repeat_interleave(n, dim=0), space.repeat(frames, 1)), dim=1
    )
    ### END SOLUTION


# %% nbgrader={"grade_id": "video-check", "locked": true}
video = video_positions(4, 3, 3, 16, 32)
print(tuple(video.shape))
print("mismo parche, fotogramas 0 y 2: parte espacial igual / same patch, frames 0 and 2: same space part:",
      torch.equal(video[4, 16:], video[2 * 9 + 4, 16:]))

# Audio: la posición puede ser un instante en segundos. Un espectrograma con pasos de 10 ms y otro
# con pasos de 20 ms muestrean la misma curva si la posición es el tiempo y no el índice.
# Audio: the position can be an instant in seconds. A spectrogram with 10 ms steps and another with
# 20 ms steps sample the same curve if the position is the time and not the index.
t10 = torch.arange(0, 100) * 0.010
t20 = torch.arange(0, 50) * 0.020
scale = 100.0  # posiciones = segundos * 100 / positions = seconds * 100
pe10, pe20 = sinusoidal_at(t10 * scale, 16), sinusoidal_at(t20 * scale, 16)
print("instantes comunes, misma codificación / shared instants, same encoding:", torch.allclose(pe10[::2], pe20))
by_index = sinusoidal_at(torch.arange(50.0), 16)
print("por índice, 20 ms no coincide con 10 ms / by index, 20 ms differs from 10 ms:", not torch.allclose(sinusoidal_at(torch.arange(0, 100, 2.0), 16), by_index))

# %% nbgrader={"grade": true, "grade_id": "test-video", "locked": true, "points": 2}
assert video.shape == (4 * 9, 48) and video.dtype == torch.float32, "video debe ser (4*9, 48) en float32 / video must be (4*9, 48) in float32"
assert torch.equal(video[4, 16:], video[2 * 9 + 4, 16:]), "espacio igual entre fotogramas / same space across frames"
assert torch.equal(video[9, :16], video[17, :16]), "tiempo igual dentro de un fotograma / same time within a frame"
assert torch.allclose(video[9:18, 16:], sinusoidal_2d(3, 3, 32)), "cada fotograma lleva la tabla 2-D en sus últimas 32 columnas / every frame carries the 2-D table in its last 32 columns"
### BEGIN HIDDEN TESTS
v = video_positions(2, 1, 2, 4, 8)
assert torch.allclose(v[:, :4].double(), sinusoidal_at(torch.tensor([0, 0, 1, 1]), 4), atol=1e-6)
assert torch.allclose(v[:, 4:], sinusoidal_2d(1, 2, 8).repeat(2, 1))
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] En la RoPE 1-D sobre $n = rW + c$, ¿qué pares de parches
# reciben el mismo logit que dos vecinos horizontales? ¿Por qué eso es un problema para una imagen
# y no para un texto? · [en] In 1-D RoPE over $n = rW + c$, which pairs of patches get the same
# logit as two horizontal neighbours? Why is that a problem for an image and not for a text?

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 1}
# ### BEGIN SOLUTION
# [es] Todos los pares con $\Delta n = 1$, y entre ellos el último parche de una fila y el primero
# de la siguiente, que en la imagen están en lados opuestos. Además, dos vecinos verticales están a
# $\Delta n = W$, tan lejos como dos parches separados $W$ columnas en la misma fila si la rejilla
# fuese más ancha. En un texto el orden lineal es la estructura real; en una imagen la vecindad es
# 2-D, y una codificación 1-D la deforma y depende de la anchura de la rejilla, que cambia con la
# resolución.
#
# [en] Every pair with $\Delta n = 1$, among them the last patch of a row and the first one of the
# next, which lie on opposite sides of the image. Besides, two vertical neighbours are at
# $\Delta n = W$, as far as two patches $W$ columns apart in the same row would be on a wider grid.
# In a text the linear order is the real structure; in an image neighbourhood is 2-D, and a 1-D
# encoding distorts it and depends on the width of the grid, which changes with the resolution.
# ### END SOLUTION
