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
# # Laboratorio 17.04 · ALiBi: sesgos lineales en la atención
# *Lab 17.04 · ALiBi: attention with linear biases*
#
# **[es]** ALiBi no toca los embeddings ni las consultas y claves: suma a cada logit de atención
# una penalización proporcional a la distancia entre consulta y clave, con una pendiente fija
# distinta en cada cabeza. En este laboratorio calculas las pendientes (también cuando el número
# de cabezas no es potencia de dos), construyes el sesgo causal y el simétrico, lo usas con la
# atención de PyTorch (`scaled_dot_product_attention`) y lo contrastas con una atención escrita a
# mano. Al final mides por qué extrapola y qué precio se paga por ello.
#
# **[en]** ALiBi touches neither the embeddings nor the queries and keys: it adds to each
# attention logit a penalty proportional to the distance between query and key, with a fixed
# slope that differs from head to head. In this lab you compute the slopes (also when the number
# of heads is not a power of two), build the causal and the symmetric bias, use it with PyTorch's
# attention (`scaled_dot_product_attention`) and check it against an attention written by hand.
# Finally you measure why it extrapolates and what it costs.
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/17/04-alibi.md` · `docs_en/17/04-alibi.md`.
# 2. Completa / complete `alibi_slopes` y/and `alibi_bias` en/in
#    `src/minimodel/positional/alibi.py`.
# 3. Comprueba tu código / check your code: `make check LAB=17.04`.
# 4. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Las celdas marcadas
#    `TU CÓDIGO` / `YOUR CODE` son tuyas; las de pruebas están bloqueadas.

# %% nbgrader={"grade_id": "setup", "locked": true}
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from minimodel.labkit import reload_edited_modules, save_figure, sized
from minimodel.positional.alibi import alibi_bias, alibi_slopes

torch.set_printoptions(precision=4, sci_mode=False)

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. Las pendientes / The slopes
#
# **[es]** Con $H$ cabezas, potencia de dos, la cabeza $h = 1, \dots, H$ tiene pendiente
# $m_h = 2^{-8h/H}$: una sucesión geométrica que empieza en $2^{-8/H}$ y acaba en $2^{-8}$. Si
# $H$ no es potencia de dos, se toman las $c$ pendientes de $c = 2^{\lfloor \log_2 H \rfloor}$
# cabezas y se completan con las de posición par de la lista de $2c$ cabezas. Mira los
# exponentes: con 12 cabezas, las cuatro últimas caen entre las ocho primeras.
#
# **[en]** With $H$ heads, a power of two, head $h = 1, \dots, H$ has slope $m_h = 2^{-8h/H}$:
# a geometric sequence that starts at $2^{-8/H}$ and ends at $2^{-8}$. If $H$ is not a power of
# two, take the $c$ slopes of $c = 2^{\lfloor \log_2 H \rfloor}$ heads and complete them with the
# even-indexed slopes of the list for $2c$ heads. Look at the exponents: with 12 heads, the last
# four fall between the first eight.

# %% nbgrader={"grade_id": "slopes", "locked": true}
for n_heads in (8, 12, 6):
    slopes = alibi_slopes(n_heads)
    print(f"H = {n_heads:2d}  log2(m) =", torch.log2(slopes).tolist())

fig, ax = plt.subplots(figsize=(7, 3.5))
for n_heads, style in ((12, dict(marker="s", ls="--")), (8, dict(marker="o", ms=11, mfc="none")), (16, dict(marker="^"))):
    ax.plot(range(1, n_heads + 1), torch.log2(alibi_slopes(n_heads)), label=f"H = {n_heads}", **style)
ax.set_xlabel("cabeza h / head h")
ax.set_ylabel("log2(m_h)")
ax.set_title("Pendientes de ALiBi / ALiBi slopes")
ax.legend()
save_figure(fig, "17_04_slopes")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-slopes", "locked": true, "points": 2}
s8 = alibi_slopes(8)
assert s8.shape == (8,) and s8.dtype == torch.float32, "forma (H,) y float32 / shape (H,) and float32"
assert torch.allclose(s8, 2.0 ** -torch.arange(1.0, 9.0)), "con H=8 las pendientes deben ser 1/2, 1/4, ..., 1/256 / with H=8 the slopes must be 1/2, 1/4, ..., 1/256"
s12 = torch.log2(alibi_slopes(12))
assert torch.allclose(s12[8:], torch.tensor([-0.5, -1.5, -2.5, -3.5])), "H=12: las 4 últimas / the last 4"
### BEGIN HIDDEN TESTS
def closed_form(n):
    def p2(k):
        return [2 ** (-8 * (i + 1) / k) for i in range(k)]

    c = 2 ** math.floor(math.log2(n))
    return torch.tensor(p2(c) + p2(2 * c)[0::2][: n - c])


for n in (1, 2, 3, 5, 6, 7, 16, 20, 24, 40, 96):
    assert torch.allclose(alibi_slopes(n), closed_form(n).float(), rtol=1e-6), n
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. El sesgo: causal y simétrico / The bias: causal and symmetric
#
# **[es]** La consulta $i$ está en la posición $p_i$ y la clave $j$ en la posición $j$. El sesgo
# causal vale $-m_h\,(p_i - j)$ si $j \le p_i$ y $-\infty$ si la clave es futura; el simétrico,
# para codificadores, vale $-m_h\,|p_i - j|$. Cuando hay menos consultas que claves (caché KV),
# las consultas son las *últimas*: $p_i = k_\mathrm{len} - q_\mathrm{len} + i$.
#
# **[en]** Query $i$ sits at position $p_i$ and key $j$ at position $j$. The causal bias is
# $-m_h\,(p_i - j)$ when $j \le p_i$ and $-\infty$ when the key lies in the future; the symmetric
# one, for encoders, is $-m_h\,|p_i - j|$. When there are fewer queries than keys (KV cache), the
# queries are the *last* ones: $p_i = k_\mathrm{len} - q_\mathrm{len} + i$.

# %% nbgrader={"grade_id": "bias", "locked": true}
slopes8 = alibi_slopes(8)
causal = alibi_bias(8, 8, slopes8)
symmetric = alibi_bias(8, 8, slopes8, causal=False)
print("cabeza 0, causal / head 0, causal:\n", causal[0])
print("una consulta tras 7 claves en caché / one query after 7 cached keys:\n", alibi_bias(1, 8, slopes8)[0])

fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), layout="constrained")
panels = (
    (causal[0], "causal, m = 1/2"),
    (causal[7], "causal, m = 1/256"),
    (symmetric[0], "simétrico / symmetric, m = 1/2"),
)
for ax, (matrix, title) in zip(axes, panels, strict=True):
    shown = matrix.clone()
    shown[torch.isinf(shown)] = float("nan")  # -inf en blanco / -inf in white
    image = ax.imshow(shown, cmap="viridis", vmin=matrix[~torch.isinf(matrix)].min(), vmax=0)
    ax.set_title(title)
    ax.set_xlabel("clave j / key j")
    fig.colorbar(image, ax=ax, fraction=0.046)
axes[0].set_ylabel("consulta i / query i")
save_figure(fig, "17_04_bias")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-bias", "locked": true, "points": 2}
assert causal.shape == (8, 8, 8), "forma (H, q_len, k_len) / shape (H, q_len, k_len)"
assert torch.all(torch.diagonal(causal, dim1=1, dim2=2) == 0), "la diagonal del sesgo debe ser 0 / the diagonal of the bias must be 0"
assert torch.isinf(causal[:, 0, 1:]).all(), "claves futuras = -inf / future keys = -inf"
assert causal[0, 5, 2].item() == -1.5, "el sesgo en (5, 2) debe ser -m (i - j) = -(1/2)(5 - 2) / the bias at (5, 2) must be -m (i - j) = -(1/2)(5 - 2)"
assert torch.equal(symmetric[0, 2, 5], symmetric[0, 5, 2]), "simétrico / symmetric"
assert torch.equal(alibi_bias(1, 8, slopes8), causal[:, -1:, :]), "fila de decodificación / decoding row"
### BEGIN HIDDEN TESTS
s3 = alibi_slopes(3)
b = alibi_bias(2, 5, s3)
expected = torch.tensor([[-3.0, -2, -1, 0, float("-inf")], [-4.0, -3, -2, -1, 0]])
assert torch.equal(b, s3[:, None, None] * expected.clamp(max=0) + torch.where(torch.isinf(expected), expected, 0))
assert torch.allclose(alibi_bias(3, 6, s3, causal=False), -s3[:, None, None] * (torch.arange(3, 6)[:, None] - torch.arange(6)).abs())
assert alibi_bias(4, 4, s3).dtype == torch.float32
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. Con `scaled_dot_product_attention` / With `scaled_dot_product_attention`
#
# **[es]** La atención de PyTorch calcula $\mathrm{softmax}(QK^\top/\sqrt{d} + B)\,V$ cuando le
# pasas el sesgo $B$ como `attn_mask` de punto flotante. El sesgo se suma *después* de escalar:
# no se divide entre $\sqrt{d}$. Escribe `manual_attention(q, k, v, bias)` con esa fórmula, sin
# llamar a `scaled_dot_product_attention`, para comprobar que ambas coinciden.
#
# **[en]** PyTorch's attention computes $\mathrm{softmax}(QK^\top/\sqrt{d} + B)\,V$ when you pass
# the bias $B$ as a floating-point `attn_mask`. The bias is added *after* scaling: it is not
# divided by $\sqrt{d}$. Write `manual_attention(q, k, v, bias)` with that formula, without
# calling `scaled_dot_product_attention`, to check that both agree.

# %% nbgrader={"grade_id": "manual-attention", "solution": true}
def manual_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """q (B, H, Tq, D), k and v (B, H, Tk, D), bias (H, Tq, Tk) -> (B, H, Tq, D)."""
    ### BEGIN SOLUTION
    logits = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + bias  # (B, H, Tq, Tk)
    return logits.softmax(dim=-1) @ v
    ### END SOLUTION


# %% nbgrader={"grade_id": "sdpa", "locked": true}
torch.manual_seed(0)
B, H, T, D = 2, 8, 16, 32
q, k, v = (torch.randn(B, H, T, D) for _ in range(3))
bias = alibi_bias(T, T, alibi_slopes(H))
with_sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype))
by_hand = manual_attention(q, k, v, bias)
print("max |SDPA - manual| =", (with_sdpa - by_hand).abs().max().item())

# La documentación prohíbe combinar is_causal=True con attn_mask: por eso el -inf va dentro del sesgo.
# The documentation forbids combining is_causal=True with attn_mask: that is why the -inf lives in the bias.
try:
    F.scaled_dot_product_attention(q, k, v, attn_mask=bias, is_causal=True)
    print("esta llamada no lanzó error / this call raised no error")
except RuntimeError as error:
    print("RuntimeError:", str(error).splitlines()[0])

# Un paso de decodificación: la última consulta contra las T claves en caché.
# One decoding step: the last query against the T cached keys.
step = F.scaled_dot_product_attention(q[:, :, -1:], k, v, attn_mask=alibi_bias(1, T, alibi_slopes(H)))
print("paso == última fila / step == last row:", torch.allclose(step, with_sdpa[:, :, -1:], atol=1e-6))

# %% nbgrader={"grade": true, "grade_id": "test-sdpa", "locked": true, "points": 3}
assert by_hand.shape == (B, H, T, D), "forma (B, H, Tq, D) / shape (B, H, Tq, D)"
assert torch.allclose(by_hand, with_sdpa, atol=1e-5), "la atención a mano debe coincidir con SDPA / the attention by hand must match SDPA"
assert torch.allclose(step, with_sdpa[:, :, -1:], atol=1e-6), "el paso con caché debe coincidir con la última fila de la pasada completa / the cached step must match the last row of the full pass"
### BEGIN HIDDEN TESTS
q2, k2, v2 = torch.randn(1, 3, 2, 4), torch.randn(1, 3, 5, 4), torch.randn(1, 3, 5, 4)
b2 = alibi_bias(2, 5, alibi_slopes(3), causal=False)
assert torch.allclose(manual_attention(q2, k2, v2, b2), F.scaled_dot_product_attention(q2, k2, v2, attn_mask=b2), atol=1e-6)
zero = torch.zeros(1, 1, 3, 2)
ones = torch.arange(3.0).reshape(1, 1, 3, 1).expand(1, 1, 3, 2)
uniform = manual_attention(zero, zero, ones, torch.zeros(1, 3, 3))
assert torch.allclose(uniform, torch.ones(1, 1, 3, 2)), "softmax por filas / softmax along rows"
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. La forma de fila constante / The row-constant form
#
# **[es]** El código original de ALiBi no usa $-m\,(i - j)$ sino $+m\,j$, con la máscara causal
# aparte. Escribe `row_constant_bias(T, slopes, causal)` que devuelva $+m_h\,j$ (forma
# `(H, T, T)`), con $-\infty$ en las claves futuras si `causal=True`. Después compara los
# softmax de las dos formas, con y sin máscara.
#
# **[en]** The original ALiBi code does not use $-m\,(i - j)$ but $+m\,j$, with the causal mask
# apart. Write `row_constant_bias(T, slopes, causal)` returning $+m_h\,j$ (shape `(H, T, T)`),
# with $-\infty$ on future keys when `causal=True`. Then compare the softmax of both forms, with
# and without the mask.

# %% nbgrader={"grade_id": "row-constant", "solution": true}
def row_constant_bias(T: int, slopes: torch.Tensor, causal: bool = True) -> torch.Tensor:
    """+m_h * j for every query row, shape (H, T, T); -inf above the diagonal when causal."""
    ### BEGIN SOLUTION
    j = torch.arange(T, dtype=torch.float32)
    bias = slopes[:, None, None] * j[None, None, :] + torch.zeros(T, 1)  # (H, T, T)
    if causal:
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        bias = bias.masked_fill(future, float("-inf"))
    return bias
    ### END SOLUTION


# %% nbgrader={"grade_id": "row-constant-check", "locked": true}
logits = torch.randn(8, 12, 12)
s = alibi_slopes(8)
gap_causal = ((logits + row_constant_bias(12, s)).softmax(-1) - (logits + alibi_bias(12, 12, s)).softmax(-1)).abs().max()
gap_symmetric = (
    (logits + row_constant_bias(12, s, causal=False)).softmax(-1) - (logits + alibi_bias(12, 12, s, causal=False)).softmax(-1)
).abs().max()
print(f"causal:    max |diferencia / difference| = {gap_causal:.2e}")
print(f"simétrico / symmetric: max |diferencia / difference| = {gap_symmetric:.2e}")

# %% nbgrader={"grade": true, "grade_id": "test-row-constant", "locked": true, "points": 2}
rc = row_constant_bias(12, s)
assert rc.shape == (8, 12, 12), "forma (H, T, T) / shape (H, T, T)"
assert rc[0, 11, 4].item() == 2.0 and torch.isinf(rc[0, 4, 11]), "+m j = (1/2)(4); futuro / future = -inf"
assert gap_causal < 1e-6, "causal: el mismo softmax / the same softmax"
assert gap_symmetric > 1e-2, "simétrico: distinto / symmetric: different"
### BEGIN HIDDEN TESTS
rc3 = row_constant_bias(5, alibi_slopes(3), causal=False)
assert torch.allclose(rc3, alibi_slopes(3)[:, None, None] * torch.arange(5.0).expand(5, 5))
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] ¿Por qué las dos formas dan el mismo softmax con máscara
# causal y distinto sin ella? ¿Qué haría un codificador con $+m\,j$? · [en] Why do both forms
# give the same softmax with a causal mask and a different one without it? What would an encoder
# do with $+m\,j$?

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] En la fila $i$, $-m\,(i - j) = m\,j - m\,i$: las dos formas difieren en $-m\,i$, una
# constante para toda la fila, y el softmax no cambia si se suma la misma constante a todos sus
# logits. Con la máscara, las claves visibles son $j \le i$ y la penalización crece al alejarse
# hacia el pasado en ambos casos. Sin máscara, las claves $j > i$ también cuentan: $+m\,j$ premia
# las claves futuras y cuanto más lejos mejor, en lugar de penalizar la distancia en los dos
# sentidos como $-m\,|i - j|$. Un codificador con $+m\,j$ atendería sobre todo al final de la
# secuencia, sea cual sea la consulta.
#
# [en] In row $i$, $-m\,(i - j) = m\,j - m\,i$: both forms differ by $-m\,i$, a constant for the
# whole row, and softmax does not change when the same constant is added to all its logits. With
# the mask, the visible keys are $j \le i$ and in both cases the penalty grows towards the past.
# Without a mask, the keys $j > i$ count too: $+m\,j$ rewards future keys, the further the
# better, instead of penalising distance on both sides like $-m\,|i - j|$. An encoder with
# $+m\,j$ would attend mostly to the end of the sequence, whatever the query.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part5-md", "locked": true}
# ## 5. Por qué extrapola y qué cuesta / Why it extrapolates and what it costs
#
# **[es]** Quita el contenido: con $QK^\top = 0$, la última consulta reparte su atención solo
# según el sesgo, $w_k \propto e^{-m k}$ a distancia $k$. Escribe `attention_profile(slopes, T)`,
# que devuelve esos pesos (forma `(H, T)`, indexados por distancia $k = 0, \dots, T-1$), y
# `mass_beyond(weights, K)`, la fracción de atención a distancia $\ge K$ de cada cabeza. Usa
# `alibi_bias`.
#
# **[en]** Remove the content: with $QK^\top = 0$, the last query spreads its attention
# according to the bias alone, $w_k \propto e^{-m k}$ at distance $k$. Write
# `attention_profile(slopes, T)`, returning those weights (shape `(H, T)`, indexed by distance
# $k = 0, \dots, T-1$), and `mass_beyond(weights, K)`, the fraction of attention at distance
# $\ge K$ for each head. Use `alibi_bias`.

# %% nbgrader={"grade_id": "profile", "solution": true}
def attention_profile(slopes: torch.Tensor, T: int) -> torch.Tensor:
    """Softmax of the last query's bias row, reordered by distance: (H, T), row sums = 1."""
    ### BEGIN SOLUTION
    row = alibi_bias(1, T, slopes)[:, 0, :]  # (H, T): key j at distance T - 1 - j
    return row.softmax(dim=-1).flip(-1)
    ### END SOLUTION


def mass_beyond(weights: torch.Tensor, K: int) -> torch.Tensor:
    """Fraction of each head's attention at distance >= K: (H,)."""
    ### BEGIN SOLUTION
    return weights[:, K:].sum(dim=-1)
    ### END SOLUTION


# %% nbgrader={"grade_id": "profile-check", "locked": true}
T_train = sized(full=512, test=256)
T_long = 8 * T_train
s8 = alibi_slopes(8)
short, long = attention_profile(s8, T_train), attention_profile(s8, T_long)
print("masa a distancia >= 10 / mass at distance >= 10:", mass_beyond(long, 10))
print(f"cambio del perfil de T = {T_train} a T = {T_long} (variación total, por cabeza)")
print(f"profile change from T = {T_train} to T = {T_long} (total variation, per head)")
change = 0.5 * (long[:, :T_train] - short).abs().sum(-1) + 0.5 * long[:, T_train:].sum(-1)
print(change)

fig, ax = plt.subplots(figsize=(7, 3.8))
distance = torch.arange(T_long)
for h in range(8):
    ax.plot(distance[1:], 1 - long[h].cumsum(0)[:-1], label=f"m = 2^-{h + 1}")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_ylim(1e-6, 1.5)
ax.axvline(T_train, color="gray", ls="--", lw=0.8)
ax.set_xlabel("distancia K / distance K")
ax.set_ylabel("masa a distancia >= K / mass at distance >= K")
ax.set_title("Sin contenido, solo el sesgo / No content, bias only")
ax.legend(fontsize=7, ncol=2)
save_figure(fig, "17_04_window")
plt.show()

bytes_per_bias = 32 * 8192 * 8192 * 4
print(f"sesgo (32, 8192, 8192) en float32 / bias in float32: {bytes_per_bias / 2**30:.0f} GiB")

# %% nbgrader={"grade": true, "grade_id": "test-profile", "locked": true, "points": 2}
assert short.shape == (8, T_train), "forma (H, T) / shape (H, T)"
assert torch.allclose(short.sum(-1), torch.ones(8)), "cada fila suma 1 / each row sums to 1"
assert short[0, 0] > short[0, 1] > short[0, 2], "ordenado por distancia / ordered by distance"
assert abs(mass_beyond(long, 10)[0].item() - math.exp(-5)) < 1e-4, "con m = 1/2, la masa más allá de 10 debe ser e^(-10/2) / with m = 1/2, the mass beyond 10 must be e^(-10/2)"
assert change[0] < 1e-6 and change[-1] > 0.1, "la pendiente grande no nota la longitud / the large slope does not notice the length"
### BEGIN HIDDEN TESTS
w = attention_profile(torch.tensor([math.log(2.0)]), 3)
assert torch.allclose(w, torch.tensor([[4.0, 2.0, 1.0]]) / 7, atol=1e-6)
assert torch.allclose(mass_beyond(w, 1), torch.tensor([3.0 / 7]), atol=1e-6)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] Con 8 cabezas, la cabeza de pendiente $1/2$ deja fuera de
# los últimos 10 tokens menos del 1 % de su atención. ¿Por qué eso ayuda a extrapolar y qué
# precio tiene? Menciona también el coste de memoria del sesgo. · [en] With 8 heads, the head of
# slope $1/2$ leaves less than 1 % of its attention outside the last 10 tokens. Why does that
# help to extrapolate, and what is the price? Mention the memory cost of the bias too.

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Una secuencia más larga solo añade claves más lejanas, y el sesgo ya las penaliza tanto
# que apenas reciben peso: la distribución de atención de las cabezas de pendiente grande es la
# misma con la longitud de entrenamiento que con ocho veces más, así que el modelo no ve nada
# nuevo al pasar de esa longitud. Además el sesgo es una fórmula, definida para cualquier distancia, sin tabla
# que se acabe. El precio es que cada cabeza mira sobre todo una ventana de unos $1/m$ tokens: la
# información lejana solo llega por las pocas cabezas de pendiente pequeña (o capa a capa), y una
# tarea que necesita recuperar un dato de hace miles de tokens sale perjudicada aunque la
# perplejidad media no empeore. En memoria, un sesgo explícito ocupa $H \cdot T^2$ números:
# 8 GiB en float32 para 32 cabezas y 8192 tokens, y obliga a dejar la ruta causal fusionada de
# SDPA (a menos que el núcleo calcule el sesgo a partir de las pendientes).
#
# [en] A longer sequence only adds keys that are further away, and the bias already penalises
# them so much that they get almost no weight: the attention distribution of the heads with large
# slopes is the same at the training length as at eight times that length, so the model sees
# nothing new when it goes past it. Besides, the bias is a formula, defined for any distance, with no
# table that runs out. The price is that each head looks mostly at a window of about $1/m$
# tokens: far information only arrives through the few heads with small slopes (or layer after
# layer), and a task that must retrieve something from thousands of tokens back suffers even if
# the average perplexity does not get worse. In memory, an explicit bias holds $H \cdot T^2$
# numbers: 8 GiB in float32 for 32 heads and 8192 tokens, and it rules out SDPA's fused causal
# path (unless the kernel computes the bias from the slopes).
# ### END SOLUTION
