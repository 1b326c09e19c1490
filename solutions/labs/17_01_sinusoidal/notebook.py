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
# # Laboratorio 17.01 · Codificación posicional sinusoidal
# *Lab 17.01 · Sinusoidal positional encoding*
#
# **[es]** En este laboratorio construyes la tabla sinusoidal de Vaswani et al. (2017) y compruebas
# con números las propiedades que la lección deriva: el desplazamiento es una rotación, el producto
# escalar depende solo de la distancia y decae oscilando, y el módulo admite un desplazamiento
# (`offset`) para generar con caché KV.
#
# **[en]** In this lab you build the sinusoidal table of Vaswani et al. (2017) and check with
# numbers the properties the lesson derives: a shift is a rotation, the dot product depends only on
# the distance and decays while oscillating, and the module accepts an `offset` for generation with
# a KV cache.
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/17/01-sinusoidal.md` · `docs_en/17/01-sinusoidal.md`.
# 2. Completa / complete `sinusoidal_pe` y/and `SinusoidalPositionalEncoding.forward` en/in
#    `src/minimodel/positional/sinusoidal.py`.
# 3. Comprueba tu código / check your code: `make check LAB=17.01`.
# 4. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Las celdas marcadas
#    `TU CÓDIGO` / `YOUR CODE` son tuyas; las de pruebas están bloqueadas.

# %% nbgrader={"grade_id": "setup", "locked": true}
import matplotlib.pyplot as plt
import numpy as np
import torch

from minimodel.labkit import reload_edited_modules, save_figure, sized
from minimodel.positional.sinusoidal import SinusoidalPositionalEncoding, sinusoidal_pe

np.set_printoptions(precision=3, suppress=True)

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. La tabla / The table
#
# **[es]** Cada fila es la codificación de una posición $p$; la columna $2i$ guarda
# $\sin(p\,\omega_i)$ y la $2i+1$ guarda $\cos(p\,\omega_i)$, con $\omega_i = 10000^{-2i/d}$.
# Las columnas de la izquierda giran deprisa y las de la derecha casi no cambian.
#
# **[en]** Each row encodes one position $p$; column $2i$ holds $\sin(p\,\omega_i)$ and column
# $2i+1$ holds $\cos(p\,\omega_i)$, with $\omega_i = 10000^{-2i/d}$. Columns on the left turn
# quickly; columns on the right barely move.

# %% nbgrader={"grade_id": "heatmap", "locked": true}
pe = sinusoidal_pe(64, 32)
print(pe.shape, pe.dtype)
print("PE(0) =", pe[0])

fig, ax = plt.subplots(figsize=(7, 5))
image = ax.imshow(pe, aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1)
ax.set_xlabel("dimensión / dimension")
ax.set_ylabel("posición p / position p")
ax.set_title("PE sinusoidal, T=64, d=32")
fig.colorbar(image, ax=ax)
save_figure(fig, "17_01_heatmap")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-table", "locked": true, "points": 2}
assert pe.shape == (64, 32), "la forma debe ser (64, 32) / shape must be (64, 32)"
assert pe.dtype == np.float32, "el dtype debe ser float32 / dtype must be float32"
assert np.allclose(pe[0, 0::2], 0) and np.allclose(pe[0, 1::2], 1), "PE(0) debe ser [0, 1, 0, 1, ...] / PE(0) must be [0, 1, 0, 1, ...]"
assert np.allclose((pe**2).sum(axis=1), 16, atol=1e-5), "cada fila debe cumplir ||PE(p)||^2 = d/2 / every row must satisfy ||PE(p)||^2 = d/2"
### BEGIN HIDDEN TESTS
small = sinusoidal_pe(5, 6, base=100.0)
angles = np.arange(5)[:, None] * 100.0 ** (-np.arange(0, 6, 2) / 6)
assert np.allclose(small[:, 0::2], np.sin(angles), atol=1e-6)
assert np.allclose(small[:, 1::2], np.cos(angles), atol=1e-6)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. El desplazamiento es una rotación / A shift is a rotation
#
# **[es]** Escribe `shift_matrix(delta, d)`: la matriz $M(\Delta)$ de tamaño $d \times d$ tal que
# $\mathrm{PE}(p+\Delta) = M(\Delta)\,\mathrm{PE}(p)$ para toda posición $p$. Es diagonal por
# bloques; el bloque $i$ actúa sobre el par $(\sin p\omega_i, \cos p\omega_i)$:
#
# **[en]** Write `shift_matrix(delta, d)`: the $d \times d$ matrix $M(\Delta)$ such that
# $\mathrm{PE}(p+\Delta) = M(\Delta)\,\mathrm{PE}(p)$ for every position $p$. It is block
# diagonal; block $i$ acts on the pair $(\sin p\omega_i, \cos p\omega_i)$:
#
# $$
# \begin{pmatrix} \sin((p+\Delta)\omega_i) \\ \cos((p+\Delta)\omega_i) \end{pmatrix}
# = \begin{pmatrix} \cos \Delta\omega_i & \sin \Delta\omega_i \\
#                   -\sin \Delta\omega_i & \cos \Delta\omega_i \end{pmatrix}
#   \begin{pmatrix} \sin p\omega_i \\ \cos p\omega_i \end{pmatrix}
# $$

# %% nbgrader={"grade_id": "shift-matrix", "solution": true}
def shift_matrix(delta: int, d: int, base: float = 10000.0) -> np.ndarray:
    """Block-diagonal (d, d) float64 matrix M with PE(p + delta) = M @ PE(p)."""
    ### BEGIN SOLUTION
    omega = base ** (-np.arange(0, d, 2) / d)  # (d/2,)
    c, s = np.cos(delta * omega), np.sin(delta * omega)
    m = np.zeros((d, d))
    m[0::2, 0::2] = np.diag(c)
    m[0::2, 1::2] = np.diag(s)
    m[1::2, 0::2] = np.diag(-s)
    m[1::2, 1::2] = np.diag(c)
    return m
    ### END SOLUTION


# %% nbgrader={"grade_id": "shift-check", "locked": true}
M = shift_matrix(5, 32)
shifted = pe[:-5] @ M.T  # fila p -> M @ PE(p) / row p -> M @ PE(p)
print("max |PE(p+5) - M(5) PE(p)| =", np.abs(shifted - pe[5:]).max())
print("M(5) es ortogonal / is orthogonal:", np.allclose(M @ M.T, np.eye(32)))

# %% nbgrader={"grade": true, "grade_id": "test-shift", "locked": true, "points": 3}
assert M.shape == (32, 32), "M debe ser (d, d) / M must be (d, d)"
assert np.allclose(pe[5:], pe[:-5] @ M.T, atol=1e-5), "debe cumplirse PE(p+5) = M(5) PE(p) / PE(p+5) = M(5) PE(p) must hold"
assert np.allclose(M @ M.T, np.eye(32)), "M es una rotación / M is a rotation"
### BEGIN HIDDEN TESTS
table = sinusoidal_pe(40, 12, base=50.0).astype(np.float64)
for step in (1, 7, 13):
    rotation = shift_matrix(step, 12, base=50.0)
    assert np.allclose(table[step:], table[:-step] @ rotation.T, atol=1e-5)
assert np.allclose(shift_matrix(3, 12) @ shift_matrix(4, 12), shift_matrix(7, 12))
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. El producto escalar decae con la distancia / The dot product decays with distance
#
# **[es]** Como $\sin a \sin b + \cos a \cos b = \cos(a-b)$, el producto escalar entre dos filas
# solo depende de la distancia $k$: $\mathrm{PE}(p)\cdot\mathrm{PE}(p+k) = \sum_i \cos(k\,\omega_i)$.
# Calcula `dots[k] = PE(0)·PE(k)` con la tabla y, en `closed_form[k]`, la suma de cosenos
# $\sum_i \cos(k\,\omega_i)$, para compararlos (las dos con forma `(T_long,)`).
#
# **[en]** Since $\sin a \sin b + \cos a \cos b = \cos(a-b)$, the dot product of two rows depends
# only on the distance $k$: $\mathrm{PE}(p)\cdot\mathrm{PE}(p+k) = \sum_i \cos(k\,\omega_i)$.
# Compute `dots[k] = PE(0)·PE(k)` from the table and, in `closed_form[k]`, the sum of cosines
# $\sum_i \cos(k\,\omega_i)$, to compare them (both of shape `(T_long,)`).

# %% nbgrader={"grade_id": "dots", "solution": true}
T_long, d_long = sized(full=1024, test=256), 64
pe_long = sinusoidal_pe(T_long, d_long)
### BEGIN SOLUTION
dots = pe_long.astype(np.float64) @ pe_long[0].astype(np.float64)  # (T_long,)
omega = 10000.0 ** (-np.arange(0, d_long, 2) / d_long)
closed_form = np.cos(np.arange(T_long)[:, None] * omega).sum(axis=1)
### END SOLUTION

# %% nbgrader={"grade_id": "dots-plot", "locked": true}
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(dots, label="PE(0)·PE(k)")
ax.axhline(0, color="gray", lw=0.5)
ax.set_xlabel("distancia k / distance k")
ax.set_ylabel("producto escalar / dot product")
ax.set_title(f"d = {d_long}: empieza en d/2 = {d_long // 2} / starts at d/2 = {d_long // 2}")
ax.legend()
save_figure(fig, "17_01_dot_decay")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-dots", "locked": true, "points": 2}
assert dots.shape == (T_long,), "dots debe tener una entrada por distancia / one entry per distance"
assert np.isclose(dots[0], d_long / 2), "PE(0)·PE(0) debe valer d/2 / PE(0)·PE(0) must equal d/2"
assert np.allclose(dots, closed_form, atol=1e-4), "dots debe coincidir con closed_form, la suma de cos(k w_i) / dots must match closed_form, the sum of cos(k w_i)"
### BEGIN HIDDEN TESTS
assert np.allclose(closed_form, np.cos(np.outer(np.arange(T_long), omega)).sum(axis=1))
assert dots[1] < dots[0] and dots[16] < dots[1]
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] ¿Por qué la curva oscila en vez de bajar de forma monótona?
# ¿Qué pasaría con una única frecuencia? · [en] Why does the curve oscillate instead of
# decreasing monotonically? What would a single frequency give?

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Cada término $\cos(k\omega_i)$ es periódico; con una sola frecuencia el producto volvería a
# valer $d/2$ cada $2\pi/\omega$ posiciones. Con frecuencias geométricas los términos se desfasan
# entre sí: para $k$ pequeño todos valen casi 1 y la suma es grande; para $k$ grande las fases
# rápidas se reparten y se cancelan, y solo quedan las lentas, que todavía valen cerca de 1. Las
# oscilaciones aparecen cuando varias frecuencias vuelven a estar casi en fase a la vez.
#
# [en] Each term $\cos(k\omega_i)$ is periodic; with a single frequency the product would return
# to $d/2$ every $2\pi/\omega$ positions. With geometric frequencies the terms drift out of phase:
# for small $k$ all are close to 1 and the sum is large; for large $k$ the fast phases spread out
# and cancel, leaving the slow ones, still close to 1. The ripples appear when several frequencies
# come back nearly into phase at the same time.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. El módulo y el `offset` / The module and the `offset`
#
# **[es]** Al generar con caché KV, el modelo procesa primero el *prompt* y luego un token cada
# vez. El bloque nuevo empieza en la posición `offset` (los tokens ya guardados), no en 0.
# Comprueba que sumar la codificación por trozos con el `offset` correcto da lo mismo que sumarla
# a la secuencia entera.
#
# **[en]** When generating with a KV cache, the model first processes the prompt and then one
# token at a time. The new chunk starts at position `offset` (the tokens already cached), not at
# 0. Check that adding the encoding chunk by chunk with the right `offset` gives the same result as
# adding it to the whole sequence.

# %% nbgrader={"grade_id": "module-offset", "locked": true}
torch.manual_seed(0)
encoder = SinusoidalPositionalEncoding(d_model=32, max_len=128)
x = torch.randn(2, 10, 32)
full = encoder(x)
chunked = torch.cat([encoder(x[:, :6]), encoder(x[:, 6:9], offset=6), encoder(x[:, 9:], offset=9)], dim=1)
wrong = torch.cat([encoder(x[:, :6]), encoder(x[:, 6:])], dim=1)  # offset olvidado / forgotten
print("por trozos == entero / chunked == full:", torch.allclose(chunked, full))
print("sin offset, error máximo / without offset, max error:", (wrong - full).abs().max().item())
print("bfloat16 in -> out:", encoder(x.to(torch.bfloat16)).dtype)
try:
    encoder(torch.zeros(1, 8, 32), offset=124)
except ValueError as error:
    print(error)

# %% nbgrader={"grade": true, "grade_id": "test-module", "locked": true, "points": 2}
assert torch.allclose(chunked, full, atol=1e-6), "offset: por trozos == entero / chunked == full"
assert encoder(x.to(torch.bfloat16)).dtype == torch.bfloat16, "mantén el dtype / keep the dtype"
assert torch.allclose(encoder(torch.zeros(1, 3, 32), offset=4)[0], torch.from_numpy(sinusoidal_pe(7, 32)[4:])), "con offset=4 el módulo debe sumar las filas 4..6 de la tabla / with offset=4 the module must add rows 4..6 of the table"
### BEGIN HIDDEN TESTS
other = SinusoidalPositionalEncoding(d_model=8, max_len=20, base=100.0)
y = torch.randn(3, 2, 5, 8, dtype=torch.float64)
expected = y + torch.from_numpy(sinusoidal_pe(20, 8, base=100.0)[11:16]).double()
assert torch.allclose(other(y, offset=11), expected)
assert other(y, offset=11).dtype == torch.float64
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part5-md", "locked": true}
# ## 5. La disposición concatenada / The concatenated layout
#
# **[es]** Algunas bibliotecas guardan primero todos los senos y después todos los cosenos
# (`[sin | cos]`). Con las mismas frecuencias, es la misma tabla con las columnas permutadas.
#
# **[en]** Some libraries store all the sines first and then all the cosines (`[sin | cos]`). With
# the same frequencies, it is the same table with its columns permuted.

# %% nbgrader={"grade_id": "concat", "locked": true}
perm = np.concatenate([np.arange(0, 32, 2), np.arange(1, 32, 2)])
concatenated = pe[:, perm]
print("PE(1) intercalada / interleaved :", pe[1, :6], "...")
print("PE(1) concatenada / concatenated:", concatenated[1, :3], "...", concatenated[1, 16:19], "...")

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] Cargas en tu modelo los pesos de otro entrenado con la
# disposición concatenada y no permutas las columnas. ¿Falla con un error? ¿Qué observarías?
# · [en] You load into your model the weights of another one trained with the concatenated layout
# and you do not permute the columns. Does it fail with an error? What would you observe?

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 1}
# ### BEGIN SOLUTION
# [es] No hay ningún error: las formas coinciden. El modelo recibe posiciones que no reconoce
# (sus pesos esperan senos donde ahora llegan cosenos), así que la pérdida sube y el texto
# generado empeora en silencio. Por eso las pruebas deben comparar valores, no solo formas.
#
# [en] There is no error: the shapes match. The model receives positions it does not recognise
# (its weights expect sines where cosines now arrive), so the loss goes up and the generated text
# gets worse silently. That is why tests must compare values, not only shapes.
# ### END SOLUTION
