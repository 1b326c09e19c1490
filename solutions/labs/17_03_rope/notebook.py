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
# # Laboratorio 17.03 · RoPE
# *Lab 17.03 · RoPE*
#
# **[es]** RoPE gira cada pareja de dimensiones de las consultas y las claves un ángulo
# proporcional a su posición. En este laboratorio compruebas que tu implementación coincide con
# otras dos formulaciones (números complejos y *rotate-half*), verificas la propiedad relativa con
# el signo correcto, conviertes un *checkpoint* de una convención a la otra, usas el módulo con
# caché KV y mides qué pasa si los ángulos se calculan en `bfloat16`.
#
# **[en]** RoPE turns each pair of dimensions of the queries and keys by an angle proportional to
# their position. In this lab you check that your implementation agrees with two other
# formulations (complex numbers and rotate-half), verify the relative property with the right
# sign, convert a checkpoint from one convention to the other, use the module with a KV cache and
# measure what happens if the angles are computed in `bfloat16`.
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/17/03-rope.md` · `docs_en/17/03-rope.md`.
# 2. Completa / complete `rope_frequencies`, `rope_cos_sin`, `apply_rotary`, `rope_permutation`
#    y/and `RotaryEmbedding` en/in `src/minimodel/positional/rope.py`.
# 3. Comprueba tu código / check your code: `make check LAB=17.03`.
# 4. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Las celdas marcadas
#    `TU CÓDIGO` / `YOUR CODE` son tuyas; las de pruebas están bloqueadas.

# %% nbgrader={"grade_id": "setup", "locked": true}
import matplotlib.pyplot as plt
import torch

from minimodel.labkit import reload_edited_modules, save_figure, sized
from minimodel.positional.rope import (
    RotaryEmbedding,
    apply_rope,
    rope_frequencies,
    rope_permutation,
)

torch.set_printoptions(precision=4, sci_mode=False)

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. Una rotación a mano / One rotation by hand
#
# **[es]** Con $d = 4$ hay dos parejas y dos frecuencias, $\theta_0 = 1$ y $\theta_1 = 0.01$. Gira
# $x = [1, 2, 3, 4]$ en la posición $p = 1$ con las dos convenciones. En la intercalada las
# parejas son $(x_0, x_1)$ y $(x_2, x_3)$; en la de mitades, $(x_0, x_2)$ y $(x_1, x_3)$. Los
# resultados deben coincidir con los de la lección.
#
# **[en]** With $d = 4$ there are two pairs and two frequencies, $\theta_0 = 1$ and
# $\theta_1 = 0.01$. Rotate $x = [1, 2, 3, 4]$ at position $p = 1$ with both conventions. In the
# interleaved one the pairs are $(x_0, x_1)$ and $(x_2, x_3)$; in the half one, $(x_0, x_2)$ and
# $(x_1, x_3)$. The results must match the lesson's.

# %% nbgrader={"grade_id": "by-hand", "locked": true}
inv_freq = rope_frequencies(4)
x = torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 1, 4)  # (B, H, T, D)
one = torch.tensor([1])
interleaved = apply_rope(x, one, inv_freq, convention="interleaved")
half = apply_rope(x, one, inv_freq, convention="half")
print("inv_freq   =", inv_freq)
print("interleaved:", interleaved.flatten())
print("half       :", half.flatten())

# %% nbgrader={"grade": true, "grade_id": "test-by-hand", "locked": true, "points": 2}
assert torch.allclose(inv_freq, torch.tensor([1.0, 0.01])), "las frecuencias deben ser theta_i = 10000^(-2i/d) / the frequencies must be theta_i = 10000^(-2i/d)"
assert torch.allclose(interleaved.flatten(), torch.tensor([-1.142640, 1.922076, 2.959851, 4.029800]), atol=1e-5), "la rotación intercalada no da los valores calculados a mano / the interleaved rotation does not give the values worked out by hand"
assert torch.allclose(half.flatten(), torch.tensor([-1.984111, 1.959901, 2.462378, 4.019800]), atol=1e-5), "la rotación por mitades no da los valores calculados a mano / the half-split rotation does not give the values worked out by hand"
### BEGIN HIDDEN TESTS
assert torch.allclose(apply_rope(x, torch.tensor([0]), inv_freq), x)
assert torch.allclose(rope_frequencies(8, base=100.0), 100.0 ** (-torch.arange(0, 8, 2) / 8))
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. Otras dos formulaciones / Two other formulations
#
# **[es]** Escribe dos versiones independientes y compáralas con `apply_rope`:
#
# - `rope_complex`: la pareja $(x_{2i}, x_{2i+1})$ es el número complejo $x_{2i} + i\,x_{2i+1}$ y
#   rotarla es multiplicarla por $e^{i p \theta_i}$ (usa `torch.view_as_complex` y `torch.polar`);
#   es la convención intercalada, como en el código de LLaMA de Meta.
# - `rope_rotate_half`: la fórmula de Hugging Face,
#   $x \odot \cos + \mathrm{rotate\_half}(x) \odot \sin$, con
#   $\mathrm{rotate\_half}([x_1 \mid x_2]) = [-x_2 \mid x_1]$ y los ángulos repetidos,
#   $[p\theta_0, \dots, p\theta_{d/2-1}, p\theta_0, \dots, p\theta_{d/2-1}]$; es la convención de
#   mitades.
#
# **[en]** Write two independent versions and compare them with `apply_rope`:
#
# - `rope_complex`: pair $(x_{2i}, x_{2i+1})$ is the complex number $x_{2i} + i\,x_{2i+1}$ and
#   rotating it is multiplying it by $e^{i p \theta_i}$ (use `torch.view_as_complex` and
#   `torch.polar`); this is the interleaved convention, as in Meta's LLaMA code.
# - `rope_rotate_half`: Hugging Face's formula,
#   $x \odot \cos + \mathrm{rotate\_half}(x) \odot \sin$, with
#   $\mathrm{rotate\_half}([x_1 \mid x_2]) = [-x_2 \mid x_1]$ and the angles repeated,
#   $[p\theta_0, \dots, p\theta_{d/2-1}, p\theta_0, \dots, p\theta_{d/2-1}]$; this is the half
#   convention.

# %% nbgrader={"grade_id": "formulations", "solution": true}
def rope_complex(x: torch.Tensor, positions: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """Interleaved RoPE as complex multiplication. x (B, H, T, D) float32, positions (T,)."""
    ### BEGIN SOLUTION
    angles = positions.float()[:, None] * inv_freq  # (T, D/2)
    turn = torch.polar(torch.ones_like(angles), angles)  # e^{i p theta}
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(pairs * turn).flatten(-2)
    ### END SOLUTION


def rope_rotate_half(x: torch.Tensor, positions: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """Half RoPE as Hugging Face writes it. x (B, H, T, D) float32, positions (T,)."""
    ### BEGIN SOLUTION
    angles = positions.float()[:, None] * inv_freq  # (T, D/2)
    angles = torch.cat([angles, angles], dim=-1)  # (T, D)
    x1, x2 = x.chunk(2, dim=-1)
    rotated = torch.cat([-x2, x1], dim=-1)
    return x * angles.cos() + rotated * angles.sin()
    ### END SOLUTION


# %% nbgrader={"grade_id": "formulations-check", "locked": true}
torch.manual_seed(0)
B, H, T, D = 2, 3, 16, 8
q = torch.randn(B, H, T, D)
positions = torch.arange(T)
f = rope_frequencies(D)
gap_complex = (rope_complex(q, positions, f) - apply_rope(q, positions, f, convention="interleaved")).abs().max()
gap_half = (rope_rotate_half(q, positions, f) - apply_rope(q, positions, f, convention="half")).abs().max()
print(f"complejos vs intercalada / complex vs interleaved: {gap_complex:.2e}")
print(f"rotate_half vs mitades / rotate_half vs half:      {gap_half:.2e}")

# %% nbgrader={"grade": true, "grade_id": "test-formulations", "locked": true, "points": 3}
assert gap_complex < 1e-5, "complejos = intercalada / complex = interleaved"
assert gap_half < 1e-5, "rotate_half = mitades / rotate_half = half"
### BEGIN HIDDEN TESTS
k6 = torch.randn(1, 2, 5, 6)
p6 = torch.tensor([3, 9, 27, 81, 243])
f6 = rope_frequencies(6, base=500.0)
assert torch.allclose(rope_complex(k6, p6, f6), apply_rope(k6, p6, f6), atol=1e-5)
assert torch.allclose(rope_rotate_half(k6, p6, f6), apply_rope(k6, p6, f6, convention="half"), atol=1e-5)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. Norma y propiedad relativa / Norm and the relative property
#
# **[es]** Una rotación no cambia la norma, y en la posición 0 no hace nada. Lo importante es el
# producto escalar: la lección deduce
# $\langle R_m q, R_n k\rangle = q^\top R_{n-m}\, k$, que solo depende de $n - m$. Escribe
# `relative_logit(q, k, delta, inv_freq)`, que calcula $q^\top R_{\delta}\, k$ **sin** llamar a
# `apply_rope`, con la fórmula por parejas de la lección:
# $\sum_i \big[\cos(\delta\theta_i)(q_{2i}k_{2i} + q_{2i+1}k_{2i+1}) + \sin(\delta\theta_i)(q_{2i+1}k_{2i} - q_{2i}k_{2i+1})\big]$.
#
# **[en]** A rotation does not change the norm, and at position 0 it does nothing. What matters
# is the dot product: the lesson derives
# $\langle R_m q, R_n k\rangle = q^\top R_{n-m}\, k$, which depends only on $n - m$. Write
# `relative_logit(q, k, delta, inv_freq)`, which computes $q^\top R_{\delta}\, k$ **without**
# calling `apply_rope`, with the lesson's pairwise formula:
# $\sum_i \big[\cos(\delta\theta_i)(q_{2i}k_{2i} + q_{2i+1}k_{2i+1}) + \sin(\delta\theta_i)(q_{2i+1}k_{2i} - q_{2i}k_{2i+1})\big]$.

# %% nbgrader={"grade_id": "relative-logit", "solution": true}
def relative_logit(q: torch.Tensor, k: torch.Tensor, delta: int, inv_freq: torch.Tensor) -> float:
    """q^T R_delta k for vectors q, k of shape (D,), interleaved pairs."""
    ### BEGIN SOLUTION
    angle = delta * inv_freq.double()
    q, k = q.double(), k.double()
    same = q[0::2] * k[0::2] + q[1::2] * k[1::2]
    cross = q[1::2] * k[0::2] - q[0::2] * k[1::2]
    return (angle.cos() * same + angle.sin() * cross).sum().item()
    ### END SOLUTION


# %% nbgrader={"grade_id": "relative-check", "locked": true}
def rotated_logit(q, k, m, n, inv_freq):
    """<R_m q, R_n k> with apply_rope: q at position m, k at position n."""
    qm = apply_rope(q.reshape(1, 1, 1, -1), torch.tensor([m]), inv_freq)
    kn = apply_rope(k.reshape(1, 1, 1, -1), torch.tensor([n]), inv_freq)
    return (qm * kn).sum().item()


torch.manual_seed(1)
qv, kv = torch.randn(D), torch.randn(D)
rotated = apply_rope(q, positions, f)
print("norma máxima cambiada / largest norm change:", (rotated.norm(dim=-1) - q.norm(dim=-1)).abs().max().item())
print("posición 0 / position 0:", torch.allclose(apply_rope(q, torch.zeros(T, dtype=torch.long), f), q))
for m, n in [(3, 5), (10, 12), (100, 102), (5, 3)]:
    print(f"m = {m:3d}, n = {n:3d}:  <R_m q, R_n k> = {rotated_logit(qv, kv, m, n, f):+.5f}")
print(f"q^T R_(+2) k = {relative_logit(qv, kv, 2, f):+.5f}    q^T R_(-2) k = {relative_logit(qv, kv, -2, f):+.5f}")

deltas = torch.arange(-64, 65)
curve = [relative_logit(qv, kv, int(delta), f) for delta in deltas]
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(deltas, curve, label=r"$q^\top R_{n-m}\,k$")
ax.plot(deltas, [relative_logit(qv, kv, -int(delta), f) for delta in deltas], "--", label=r"$q^\top R_{m-n}\,k$ (signo cambiado / flipped sign)")
ax.axvline(0, color="gray", lw=0.5)
ax.set_xlabel("n - m (clave menos consulta / key minus query)")
ax.set_ylabel("logit")
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize=8)
save_figure(fig, "17_03_relative")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-relative", "locked": true, "points": 3}
assert torch.allclose(rotated.norm(dim=-1), q.norm(dim=-1), atol=1e-5), "la norma se conserva / norm preserved"
for m, n in [(3, 5), (10, 12), (100, 102), (5, 3), (7, 40)]:
    rot, rel = rotated_logit(qv, kv, m, n, f), relative_logit(qv, kv, n - m, f)
    assert abs(rot - rel) < 1e-4, f"en (m, n) = ({m}, {n}), el logit rotado con apply_rope vale {rot:+.5f} y relative_logit(qv, kv, {n - m}, f) vale {rel:+.5f}: deben coincidir, y uno de los dos no calcula q^T R_(n-m) k con las parejas intercaladas (¿apply_rotary rota las parejas de la otra convención, o relative_logit usa otra fórmula?) / at (m, n) = ({m}, {n}), the rotated logit from apply_rope is {rot:+.5f} and relative_logit(qv, kv, {n - m}, f) is {rel:+.5f}: they must be equal, and one of them does not compute q^T R_(n-m) k with interleaved pairs (does apply_rotary rotate the other convention's pairs, or does relative_logit use another formula?)"
assert abs(relative_logit(qv, kv, 2, f) - relative_logit(qv, kv, -2, f)) > 1e-3, "el signo importa / sign matters"
### BEGIN HIDDEN TESTS
q12, k12 = torch.randn(12), torch.randn(12)
f12 = rope_frequencies(12, base=100.0)
for m, n in [(0, 9), (50, 41), (123, 200)]:
    assert abs(rotated_logit(q12, k12, m, n, f12) - relative_logit(q12, k12, n - m, f12)) < 1e-4
assert abs(relative_logit(q12, k12, 0, f12) - (q12 @ k12).item()) < 1e-5
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. De una convención a la otra / From one convention to the other
#
# **[es]** Con `perm = rope_permutation(D)` se cumple
# `apply_rope(x[..., perm], convention="half") == apply_rope(x, convention="interleaved")[..., perm]`.
# Para pasar un *checkpoint* entrenado con la convención intercalada a un código que usa la de
# mitades basta con permutar las filas de $W_Q$ y $W_K$ **dentro de cada cabeza**. Escribe
# `permute_heads(w, perm, n_heads)` para una matriz `w` de forma `(n_heads * D, d_model)` (la
# forma de `nn.Linear.weight`), y compara los *logits* de una capa de atención con y sin la
# permutación.
#
# **[en]** With `perm = rope_permutation(D)`,
# `apply_rope(x[..., perm], convention="half") == apply_rope(x, convention="interleaved")[..., perm]`.
# To move a checkpoint trained with the interleaved convention to code that uses the half one, it
# is enough to permute the rows of $W_Q$ and $W_K$ **within each head**. Write
# `permute_heads(w, perm, n_heads)` for a matrix `w` of shape `(n_heads * D, d_model)` (the shape
# of `nn.Linear.weight`), and compare the logits of an attention layer with and without the
# permutation.

# %% nbgrader={"grade_id": "permute-heads", "solution": true}
def permute_heads(w: torch.Tensor, perm: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Rows of w (n_heads * D, d_model) permuted by perm (D,) inside each head."""
    ### BEGIN SOLUTION
    D = perm.shape[0]
    return w.reshape(n_heads, D, -1)[:, perm].reshape(n_heads * D, -1)
    ### END SOLUTION


# %% nbgrader={"grade_id": "convert", "locked": true}
perm = rope_permutation(D)
print("perm =", perm.tolist())
same = apply_rope(q[..., perm], positions, f, convention="half")
print("half(x[perm]) == interleaved(x)[perm]:", torch.allclose(same, apply_rope(q, positions, f)[..., perm], atol=1e-6))

d_model, n_heads = 24, 3
torch.manual_seed(2)
w_q, w_k = torch.randn(n_heads * D, d_model) / d_model**0.5, torch.randn(n_heads * D, d_model) / d_model**0.5
hidden = torch.randn(1, T, d_model)


def logits(w_q, w_k, convention):
    """Attention logits (1, n_heads, T, T) with RoPE in the given convention."""
    heads_q = (hidden @ w_q.T).reshape(1, T, n_heads, D).transpose(1, 2)  # (1, H, T, D)
    heads_k = (hidden @ w_k.T).reshape(1, T, n_heads, D).transpose(1, 2)
    q_rot = apply_rope(heads_q, positions, f, convention=convention)
    k_rot = apply_rope(heads_k, positions, f, convention=convention)
    return q_rot @ k_rot.transpose(-2, -1) / D**0.5


trained = logits(w_q, w_k, "interleaved")  # como se entrenó / as it was trained
loaded_as_is = logits(w_q, w_k, "half")  # cargado sin más / loaded as is
converted = logits(permute_heads(w_q, perm, n_heads), permute_heads(w_k, perm, n_heads), "half")
print(f"sin permutar / not permuted: max |diferencia / difference| = {(loaded_as_is - trained).abs().max():.3f}")
print(f"permutado    / permuted:     max |diferencia / difference| = {(converted - trained).abs().max():.2e}")

# %% nbgrader={"grade": true, "grade_id": "test-convert", "locked": true, "points": 2}
assert (loaded_as_is - trained).abs().max() > 0.1, "sin permutar cambia / unpermuted differs"
assert torch.allclose(converted, trained, atol=1e-5), "permutado coincide / permuted matches"
### BEGIN HIDDEN TESTS
w = torch.arange(2 * 4 * 3).reshape(8, 3)
p4 = torch.tensor([0, 2, 1, 3])
assert torch.equal(permute_heads(w, p4, 2), w[[0, 2, 1, 3, 4, 6, 5, 7]])
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] Al cargar el *checkpoint* sin permutar, ¿da algún error? ¿Qué
# verías al generar texto? ¿Hace falta permutar también $W_V$ y $W_O$? · [en] When the checkpoint
# is loaded without permuting, is there an error? What would you see when generating text? Do
# $W_V$ and $W_O$ need permuting too?

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] No hay ningún error: las formas coinciden y todo se ejecuta. Pero cada cabeza gira parejas
# de dimensiones que no son las que se entrenaron juntas, así que los *logits* de atención son
# otros, la atención mira a sitios equivocados y el texto generado sale incoherente. $W_V$ y $W_O$
# no se tocan: RoPE no actúa sobre los valores, y la permutación de $W_Q$ y $W_K$ no cambia los
# productos escalares $q \cdot k$ (permutar las coordenadas de los dos vectores por igual los deja
# iguales), de modo que las salidas de la atención son exactamente las mismas.
#
# [en] There is no error: the shapes match and everything runs. But each head rotates pairs of
# dimensions that are not the ones trained together, so the attention logits are different,
# attention looks at the wrong places and the generated text comes out as gibberish. $W_V$ and
# $W_O$ are left alone: RoPE does not act on the values, and permuting $W_Q$ and $W_K$ does not
# change the dot products $q \cdot k$ (permuting the coordinates of both vectors the same way
# leaves them unchanged), so the outputs of attention are exactly the same.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part5-md", "locked": true}
# ## 5. Rotación parcial y caché KV / Partial rotation and KV cache
#
# **[es]** Con menos frecuencias que parejas (`2 * len(inv_freq) < D`) solo giran las primeras
# dimensiones y el resto pasa igual, como en GPT-NeoX. Después, `RotaryEmbedding` guarda las
# tablas de cosenos y senos y recibe un `offset`: al generar con caché KV, el bloque nuevo empieza
# en la posición `offset`. Las claves se guardan ya rotadas, así que rotar por trozos con el
# `offset` correcto debe dar lo mismo que rotar la secuencia entera.
#
# **[en]** With fewer frequencies than pairs (`2 * len(inv_freq) < D`) only the first dimensions
# turn and the rest pass through, as in GPT-NeoX. Then, `RotaryEmbedding` stores the cosine and
# sine tables and takes an `offset`: when generating with a KV cache, the new chunk starts at
# position `offset`. Keys are stored already rotated, so rotating chunk by chunk with the right
# `offset` must give the same as rotating the whole sequence.

# %% nbgrader={"grade_id": "partial-and-cache", "locked": true}
partial = apply_rope(q, positions, rope_frequencies(4), convention="half")
print("cola intacta / tail untouched:", torch.equal(partial[..., 4:], q[..., 4:]))

rotary = RotaryEmbedding(D, max_len=64)
whole = rotary(q)
chunked = torch.cat([rotary(q[:, :, :10]), rotary(q[:, :, 10:15], offset=10), rotary(q[:, :, 15:], offset=15)], dim=2)
restarted = torch.cat([rotary(q[:, :, :10]), rotary(q[:, :, 10:])], dim=2)  # offset olvidado / forgotten
print("por trozos == entero / chunked == whole:", torch.allclose(chunked, whole, atol=1e-6))
print("sin offset, error máximo / without offset, max error:", (restarted - whole).abs().max().item())
print("más allá de max_len / past max_len:", torch.allclose(rotary(q, offset=100), apply_rope(q, positions + 100, f), atol=1e-5))

# %% nbgrader={"grade": true, "grade_id": "test-partial-and-cache", "locked": true, "points": 2}
assert torch.equal(partial[..., 4:], q[..., 4:]), "rotación parcial / partial rotation"
assert torch.allclose(chunked, whole, atol=1e-6), "offset: por trozos == entero / chunked == whole"
assert (restarted - whole).abs().max() > 0.1, "sin offset el segundo trozo debería salir distinto / without the offset the second chunk should come out different"
### BEGIN HIDDEN TESTS
assert torch.allclose(rotary(q[:, :, 7:9], offset=7), whole[:, :, 7:9], atol=1e-6)
assert torch.allclose(partial[..., :4], apply_rope(q[..., :4], positions, rope_frequencies(4), convention="half"))
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part6-md", "locked": true}
# ## 6. Ángulos en `bfloat16` / Angles in `bfloat16`
#
# **[es]** `bfloat16` guarda 8 bits significativos: entre 256 y 512 solo representa los pares, y
# entre 4096 y 8192, uno de cada 32 enteros. Escribe `angles_in(dtype, positions, inv_freq)`: los
# ángulos $p\,\theta_i$ calculados **en** `dtype` (posiciones y frecuencias convertidas a `dtype`
# antes de multiplicar), devueltos en `float64` con forma `(T, D/2)`. Compara el error en
# `bfloat16` y en `float32` con los ángulos exactos, y comprueba que `apply_rope` con una entrada
# `bfloat16` no sufre el problema: calcula los ángulos en `float32` y solo redondea al final.
#
# **[en]** `bfloat16` keeps 8 significant bits: between 256 and 512 it only represents the even
# integers, and between 4096 and 8192, one integer in 32. Write
# `angles_in(dtype, positions, inv_freq)`: the angles $p\,\theta_i$ computed **in** `dtype`
# (positions and frequencies converted to `dtype` before multiplying), returned as `float64` with
# shape `(T, D/2)`. Compare the error in `bfloat16` and in `float32` with the exact angles, and
# check that `apply_rope` with a `bfloat16` input does not suffer from it: it computes the angles
# in `float32` and only rounds at the end.

# %% nbgrader={"grade_id": "angles-in", "solution": true}
def angles_in(dtype: torch.dtype, positions: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """Angles p * theta_i computed in `dtype`, returned as float64 of shape (T, F)."""
    ### BEGIN SOLUTION
    return (positions.to(dtype)[:, None] * inv_freq.to(dtype)[None, :]).double()
    ### END SOLUTION


# %% nbgrader={"grade_id": "bf16", "locked": true}
print("bfloat16: 257 ->", torch.tensor(257.0, dtype=torch.bfloat16).item(), "  4097 ->", torch.tensor(4097.0, dtype=torch.bfloat16).item())
D_big = 128
f_big = rope_frequencies(D_big)
exact_freq = 10000.0 ** (-torch.arange(0, D_big, 2, dtype=torch.float64) / D_big)
far = torch.arange(sized(full=32768, test=8192))
exact = far.double()[:, None] * exact_freq
error = {dtype: (angles_in(dtype, far, f_big) - exact).abs().max(dim=-1).values for dtype in (torch.bfloat16, torch.float32)}
for limit in (256, 4096, far.shape[0]):
    print(f"p < {limit:5d}: error máx. / max error  bf16 {error[torch.bfloat16][:limit].max():8.3f} rad   fp32 {error[torch.float32][:limit].max():.1e} rad")

fig, ax = plt.subplots(figsize=(7, 3.5))
for dtype, values in error.items():
    ax.loglog(far[1:], values[1:], ".", ms=1, label=str(dtype).replace("torch.", ""))
ax.set_xlabel("posición p / position p")
ax.set_ylabel("error del ángulo (rad) / angle error (rad)")
ax.set_title("Ángulos calculados en cada dtype / Angles computed in each dtype")
ax.legend(markerscale=8)
save_figure(fig, "17_03_bf16_angles")
plt.show()

# The reference with a bfloat16 input at large positions: float32 angles, rounded once.
torch.manual_seed(3)
x_bf16 = torch.randn(1, 2, 64, D_big).to(torch.bfloat16)
late = torch.arange(4096, 4096 + 64)
truth = rope_complex(x_bf16.double().float(), late, f_big).double()
ours = apply_rope(x_bf16, late, f_big)
print("apply_rope(bf16), error máx. / max error:", (ours.double() - truth).abs().max().item(), " dtype:", ours.dtype)
print("RotaryEmbedding.to(bfloat16).inv_freq:", RotaryEmbedding(D_big).to(torch.bfloat16).inv_freq.dtype)

# %% nbgrader={"grade": true, "grade_id": "test-bf16", "locked": true, "points": 2}
assert error[torch.bfloat16][4096:].max() > 1.0, "bf16: radianes de error / radians of error"
assert error[torch.float32].max() < 5e-3, "fp32: milésimas como mucho / thousandths at most"
assert ours.dtype == torch.bfloat16 and (ours.double() - truth).abs().max() < 0.05, "ours debe ser bfloat16 y quedar a menos de 0.05 del valor exacto / ours must be bfloat16 and within 0.05 of the exact value"
### BEGIN HIDDEN TESTS
small_angles = angles_in(torch.float32, torch.tensor([0, 1, 2]), torch.tensor([1.0, 0.5]))
assert small_angles.dtype == torch.float64 and small_angles.shape == (3, 2)
assert torch.equal(angles_in(torch.bfloat16, torch.tensor([257]), torch.tensor([1.0])), torch.tensor([[256.0]], dtype=torch.float64))
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] ¿Por qué el error de los ángulos en `bfloat16` crece con la
# posición? ¿Qué parejas sufren más, las rápidas o las lentas? ¿Por qué eso rompe la propiedad
# relativa? · [en] Why does the angle error in `bfloat16` grow with the position? Which pairs
# suffer most, the fast or the slow ones? Why does that break the relative property?

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Un formato de coma flotante tiene un número fijo de bits significativos, así que la
# separación entre valores representables crece con su tamaño: en `bfloat16` es $2^{e-7}$ para
# los números de $[2^e, 2^{e+1})$. El error de redondeo de un ángulo es, por tanto, proporcional
# al propio ángulo $p\,\theta_i$: crece con $p$ y es mayor en las parejas rápidas (las de
# $\theta_i$ grande). Con $\theta_0 = 1$ y $p \approx 4096$ el ángulo puede errar hasta 16
# radianes: es un número al azar, y las posiciones 4096 y 4097 reciben el mismo ángulo. La
# propiedad relativa exige que la diferencia entre los ángulos de $n$ y de $m$ sea exactamente
# $(n - m)\,\theta_i$; con errores que dependen de $p$ y no solo de $n - m$, los *logits*
# vuelven a depender de la posición absoluta, y de forma caótica. En `float32` el error a esas
# distancias se queda en milésimas de radián.
#
# [en] A floating-point format has a fixed number of significant bits, so the gap between
# representable values grows with their size: in `bfloat16` it is $2^{e-7}$ for the numbers in
# $[2^e, 2^{e+1})$. The rounding error of an angle is therefore proportional to the angle
# $p\,\theta_i$ itself: it grows with $p$ and is largest for the fast pairs (those with a large
# $\theta_i$). With $\theta_0 = 1$ and $p \approx 4096$ the angle can be off by up to 16 radians:
# it is a random number, and positions 4096 and 4097 get the same angle. The relative property
# needs the difference between the angles of $n$ and $m$ to be exactly $(n - m)\,\theta_i$; with
# errors that depend on $p$ and not only on $n - m$, the logits depend on the absolute position
# again, and chaotically. In `float32` the error at those distances stays at thousandths of a
# radian.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part7-md", "locked": true}
# ## 7. Tu RoPE dentro de un Llama de Hugging Face / Your RoPE inside a Hugging Face Llama
#
# **[es]** Las convenciones de este laboratorio son las de la biblioteca que usarás después.
# `tiny_llama` construye un `LlamaForCausalLM` de `transformers` a partir de un `LlamaConfig`:
# 2 capas, dimensión 64, 4 cabezas de 16 dimensiones y un vocabulario de 128 fichas, con pesos
# aleatorios (no se descarga nada). Hugging Face calcula las tablas de cosenos y senos una vez
# por pasada en `model.model.rotary_emb` y gira las consultas y las claves de cada capa con
# `apply_rotary_pos_emb`, que usa *rotate-half*: la convención de mitades.
# `llama_logits(model, tokens, rope, convention)` sustituye las dos piezas por las tuyas
# (`rope_cos_sin` y `apply_rotary` de tu `rope.py`) mientras calcula los *logits*. Con la
# convención de mitades deben salir los mismos *logits* que con el RoPE del propio modelo; con la
# intercalada, no. Después pasas el modelo a la disposición de Meta: con tu `permute_heads` y
# la permutación inversa de `rope_permutation`, reordenas las filas de `q_proj` y `k_proj` de cada
# cabeza y lo ejecutas con la convención intercalada.
#
# **[en]** This lab's conventions are those of the library you will use next. `tiny_llama`
# builds a `transformers` `LlamaForCausalLM` from a `LlamaConfig`: 2 layers, width 64, 4 heads of
# 16 dimensions and a vocabulary of 128 tokens, with random weights (nothing is downloaded).
# Hugging Face computes the cosine and sine tables once per pass in `model.model.rotary_emb` and
# rotates each layer's queries and keys with `apply_rotary_pos_emb`, which uses rotate-half: the
# half convention. `llama_logits(model, tokens, rope, convention)` replaces both pieces with yours
# (`rope_cos_sin` and `apply_rotary` from your `rope.py`) while it computes the logits. With the
# half convention the logits must equal those of the model's own RoPE; with the interleaved one,
# they must not. Then you move the model to Meta's layout: with your `permute_heads` and the
# inverse of `rope_permutation`, you reorder the rows of `q_proj` and `k_proj` in each head and
# run it with the interleaved convention.

# %% nbgrader={"grade_id": "llama", "locked": true}
import copy

import minimodel.positional.rope as my_rope
from minimodel.hf_llama import llama_logits, tiny_llama

llama = tiny_llama(seed=0)
n_heads, head_dim = llama.config.num_attention_heads, llama.config.head_dim
tokens = torch.randint(0, llama.config.vocab_size, (2, 12), generator=torch.Generator().manual_seed(4))
hf_logits = llama_logits(llama, tokens)  # su propio RoPE / its own RoPE
with_half = llama_logits(llama, tokens, my_rope, convention="half")
with_interleaved = llama_logits(llama, tokens, my_rope, convention="interleaved")

# De mitades a intercalada / from half to interleaved: x_half = x_interleaved[..., perm].
back = torch.argsort(rope_permutation(head_dim))
meta_layout = copy.deepcopy(llama)
with torch.no_grad():
    for layer in meta_layout.model.layers:
        for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj):
            proj.weight.copy_(permute_heads(proj.weight, back, n_heads))
as_meta = llama_logits(meta_layout, tokens, my_rope, convention="interleaved")

print(f"logits {tuple(hf_logits.shape)}, max |logit| = {hf_logits.abs().max():.2f}")
print(f"tu RoPE, mitades      / your RoPE, half:        max |diferencia / difference| = {(with_half - hf_logits).abs().max():.2e}")
print(f"tu RoPE, intercalada  / your RoPE, interleaved: max |diferencia / difference| = {(with_interleaved - hf_logits).abs().max():.2e}")
print(f"pesos de Meta, intercalada / Meta's layout, interleaved: max |diferencia / difference| = {(as_meta - hf_logits).abs().max():.2e}")

# %% nbgrader={"grade_id": "llama-check", "locked": true}
assert (with_half - hf_logits).abs().max() < 1e-4, "con la convención de mitades, tu RoPE debe dar los logits de Hugging Face / with the half convention, your RoPE must give Hugging Face's logits"
assert (with_interleaved - hf_logits).abs().max() > 0.1, "con la convención intercalada los logits deberían cambiar / with the interleaved convention the logits should change"
assert (as_meta - hf_logits).abs().max() < 1e-4, "con las filas de q_proj y k_proj permutadas, la convención intercalada debe dar los mismos logits / with the rows of q_proj and k_proj permuted, the interleaved convention must give the same logits"
print("[es] Los pesos de este Llama se hicieron para la convención de mitades: la dimensión i de cada cabeza gira junto a la i + 8. Con la intercalada giran juntas la 2i y la 2i + 1, parejas que los pesos no forman, así que los ángulos y los logits cambian sin ningún error de forma. Permutar las filas de q_proj y k_proj dentro de cada cabeza junta otra vez las parejas: q·k no cambia y los logits coinciden.")
print("[en] This Llama's weights were made for the half convention: dimension i of each head turns with i + 8. With the interleaved one, 2i and 2i + 1 turn together, pairs the weights do not form, so the angles and the logits change without any shape error. Permuting the rows of q_proj and k_proj inside each head brings the pairs together again: q·k does not change and the logits match.")
