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
# # Laboratorio 17.00 · Por qué hace falta la posición
# *Lab 17.00 · Why position is needed*
#
# **[es]** La autoatención, por sí sola, no sabe en qué orden llegan los tokens: si los barajas,
# sus salidas salen barajadas de la misma forma y nada más. En este laboratorio lo compruebas con
# números, ves que basta añadir posiciones (o una máscara causal) para romper esa simetría, y
# distingues las codificaciones absolutas de las relativas según dónde entra la posición.
#
# **[en]** Self-attention on its own does not know the order in which tokens arrive: shuffle
# them and its outputs come out shuffled the same way, and that is all. In this lab you check it
# with numbers, see that adding positions (or a causal mask) is enough to break that symmetry,
# and tell absolute from relative encodings by where position enters.
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/17/00-why-position.md` · `docs_en/17/00-why-position.md`.
# 2. Completa / complete `permutation_equivariance_gap` en/in
#    `src/minimodel/positional/equivariance.py`.
# 3. Comprueba tu código / check your code: `make check LAB=17.00`.
# 4. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Las celdas marcadas
#    `TU CÓDIGO` / `YOUR CODE` son tuyas; las de pruebas están bloqueadas.

# %% nbgrader={"grade_id": "setup", "locked": true}
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from minimodel.labkit import reload_edited_modules, save_figure, sized
from minimodel.positional.equivariance import permutation_equivariance_gap

torch.set_printoptions(precision=4, sci_mode=False)

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. Autoatención a mano / Self-attention by hand
#
# **[es]** Escribe `self_attention(x, w_q, w_k, w_v, causal=False)` para una sola cabeza:
# $Q = XW_Q$, $K = XW_K$, $V = XW_V$ y
# $\mathrm{Attn}(X) = \mathrm{softmax}\big(QK^\top/\sqrt{d_k} + M\big)\,V$, donde el softmax va
# por filas y $M$ vale $-\infty$ por encima de la diagonal cuando `causal=True` (cada token solo
# ve los anteriores y a sí mismo) y $0$ en el resto. `x` tiene forma `(B, T, d)`.
#
# **[en]** Write `self_attention(x, w_q, w_k, w_v, causal=False)` for a single head:
# $Q = XW_Q$, $K = XW_K$, $V = XW_V$ and
# $\mathrm{Attn}(X) = \mathrm{softmax}\big(QK^\top/\sqrt{d_k} + M\big)\,V$, where the softmax
# runs along rows and $M$ is $-\infty$ above the diagonal when `causal=True` (each token sees
# only the earlier ones and itself) and $0$ elsewhere. `x` has shape `(B, T, d)`.

# %% nbgrader={"grade_id": "self-attention", "solution": true}
def self_attention(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    causal: bool = False,
) -> torch.Tensor:
    """One attention head: x (B, T, d), weights (d, d_k) -> output (B, T, d_k)."""
    ### BEGIN SOLUTION
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    logits = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5  # (B, T, T)
    if causal:
        T = x.shape[-2]
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        logits = logits.masked_fill(future, float("-inf"))
    return logits.softmax(dim=-1) @ v
    ### END SOLUTION


# %% nbgrader={"grade_id": "attention-data", "locked": true}
torch.manual_seed(0)
B, T, d = 4, 8, 16
w_q, w_k, w_v = (torch.randn(d, d) / d**0.5 for _ in range(3))
x = torch.randn(B, T, d)
out = self_attention(x, w_q, w_k, w_v)
print("forma / shape:", tuple(out.shape))

# %% nbgrader={"grade": true, "grade_id": "test-self-attention", "locked": true, "points": 2}
q, k, v = x @ w_q, x @ w_k, x @ w_v
assert out.shape == (B, T, d), "la salida debe ser (B, T, d_k) / output must be (B, T, d_k)"
assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-5), "sin máscara / no mask"
causal_out = self_attention(x, w_q, w_k, w_v, causal=True)
assert torch.allclose(causal_out, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-5), "tu atención causal no coincide con F.scaled_dot_product_attention(is_causal=True) / your causal attention does not match F.scaled_dot_product_attention(is_causal=True)"
### BEGIN HIDDEN TESTS
x3 = torch.randn(2, 5, 6, dtype=torch.float64)
w3 = [torch.randn(6, 3, dtype=torch.float64) for _ in range(3)]
q3, k3, v3 = (x3 @ w for w in w3)
assert torch.allclose(self_attention(x3, *w3), F.scaled_dot_product_attention(q3, k3, v3))
assert torch.allclose(
    self_attention(x3, *w3, causal=True), F.scaled_dot_product_attention(q3, k3, v3, is_causal=True)
)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. Equivariante, no invariante / Equivariant, not invariant
#
# **[es]** Si $P$ es una matriz de permutación, la lección demuestra que
# $\mathrm{Attn}(PX) = P\,\mathrm{Attn}(X)$ cuando no hay posiciones ni máscara. En código,
# permutar las filas es indexar con `perm`: la fila $t$ de `x[:, perm]` es la fila `perm[t]` de
# `x`. Tu función `permutation_equivariance_gap(layer, x, perm)` mide
# $\max |\mathrm{layer}(PX) - P\,\mathrm{layer}(X)|$: casi cero si la capa es equivariante.
# Compárala con la diferencia sin volver a permutar la salida, que mide la *invarianza*.
#
# **[en]** If $P$ is a permutation matrix, the lesson proves that
# $\mathrm{Attn}(PX) = P\,\mathrm{Attn}(X)$ when there are neither positions nor a mask. In code,
# permuting the rows is indexing with `perm`: row $t$ of `x[:, perm]` is row `perm[t]` of `x`.
# Your function `permutation_equivariance_gap(layer, x, perm)` measures
# $\max |\mathrm{layer}(PX) - P\,\mathrm{layer}(X)|$: almost zero if the layer is equivariant.
# Compare it with the difference without permuting the output back, which measures *invariance*.

# %% nbgrader={"grade_id": "equivariance", "locked": true}
perm = torch.randperm(T)
print("perm =", perm.tolist())


def attention(z):
    return self_attention(z, w_q, w_k, w_v)


gap = permutation_equivariance_gap(attention, x, perm)
not_invariant = (attention(x[:, perm]) - attention(x)).abs().max().item()
mean_pooled = (attention(x[:, perm]).mean(dim=1) - attention(x).mean(dim=1)).abs().max().item()
print(f"max |Attn(PX) - P Attn(X)|         = {gap:.2e}   (equivariante / equivariant)")
print(f"max |Attn(PX) - Attn(X)|           = {not_invariant:.2e}   (no invariante / not invariant)")
print(f"max |mean_t Attn(PX) - mean_t Attn(X)| = {mean_pooled:.2e}   (invariante / invariant)")

# Un bloque Transformer completo (atención + MLP + LayerNorm + residuales) tampoco ve el orden.
# A whole Transformer block (attention + MLP + LayerNorm + residuals) does not see order either.
block = torch.nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=32, dropout=0.0, batch_first=True)
block.eval()
block_gap = permutation_equivariance_gap(block, x, perm)
print(f"bloque Transformer / Transformer block: {block_gap:.2e}")

# %% nbgrader={"grade": true, "grade_id": "test-equivariance", "locked": true, "points": 2}
assert isinstance(gap, float), "permutation_equivariance_gap devuelve un float / returns a float"
assert gap < 1e-5, "la atención sin posiciones es equivariante / attention without positions is equivariant"
assert not_invariant > 0.1, "pero no es invariante / but it is not invariant"
assert mean_pooled < 1e-5 and block_gap < 1e-5, "sin posiciones, permutar los tokens solo permuta las salidas / without positions, permuting the tokens only permutes the outputs"
### BEGIN HIDDEN TESTS
identity_gap = permutation_equivariance_gap(lambda z: z, x, perm)
assert identity_gap == 0.0
ramp = torch.arange(T, dtype=torch.float32)[:, None]
assert abs(permutation_equivariance_gap(lambda z: z + ramp, x, perm) - (torch.arange(T) - perm).abs().max().item()) < 1e-5
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. Añadir posiciones rompe la simetría / Adding positions breaks the symmetry
#
# **[es]** Ahora sumamos a cada fila un vector que depende de su posición, $X + E$, con una tabla
# $E$ cualquiera (aquí aleatoria, como una tabla aprendida sin entrenar). Al permutar los tokens,
# las posiciones se quedan en su sitio: el token que pasa de la posición 2 a la 5 recibe otro
# vector. Mide el desvío con tu función.
#
# **[en]** Now we add to each row a vector that depends on its position, $X + E$, with any table
# $E$ (random here, like an untrained learned table). When the tokens are permuted, the positions
# stay where they are: the token that moves from position 2 to position 5 receives another vector.
# Measure the gap with your function.

# %% nbgrader={"grade_id": "positions", "locked": true}
table = torch.randn(64, d)  # una fila por posición / one row per position


def attention_with_positions(z):
    return self_attention(z + table[: z.shape[1]], w_q, w_k, w_v)


gap_positions = permutation_equivariance_gap(attention_with_positions, x, perm)
print(f"con posiciones / with positions: {gap_positions:.3f}")

# %% nbgrader={"grade": true, "grade_id": "test-positions", "locked": true, "points": 1}
assert gap_positions > 0.1, "las posiciones rompen la equivarianza / positions break equivariance"
### BEGIN HIDDEN TESTS
assert permutation_equivariance_gap(attention_with_positions, x, torch.arange(T)) == 0.0
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. La máscara causal también la rompe / The causal mask breaks it too
#
# **[es]** Sin ninguna codificación posicional, pon `causal=True` y mide el desvío. Después,
# mira qué información da la máscara por sí sola: con $W_Q = W_K = 0$ todos los logits valen 0 y
# cada token promedia los valores que ve. Si solo el primer token (un marcador de inicio) tiene
# valor 1 y los demás 0, la salida en la posición $t$ es $1/(t+1)$ con máscara y $1/T$ sin ella.
#
# **[en]** With no positional encoding at all, set `causal=True` and measure the gap. Then look
# at what information the mask alone gives: with $W_Q = W_K = 0$ every logit is 0 and each token
# averages the values it sees. If only the first token (a start marker) has value 1 and the rest 0,
# the output at position $t$ is $1/(t+1)$ with the mask and $1/T$ without it.

# %% nbgrader={"grade_id": "causal", "locked": true}
def causal_attention(z):
    return self_attention(z, w_q, w_k, w_v, causal=True)


gap_causal = permutation_equivariance_gap(causal_attention, x, perm)
print(f"máscara causal, sin posiciones / causal mask, no positions: {gap_causal:.3f}")

T_long = sized(full=64, test=32)
marker = torch.zeros(1, T_long, 1)
marker[0, 0, 0] = 1.0  # el primer token es el marcador / the first token is the marker
zero, one = torch.zeros(1, 1), torch.ones(1, 1)
counted = self_attention(marker, zero, zero, one, causal=True)[0, :, 0]
flat = self_attention(marker, zero, zero, one)[0, :, 0]
print("causal, t = 0..5:", counted[:6])

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(counted, marker="o", ms=3, label="causal: 1/(t+1)")
ax.plot(flat, label=f"sin máscara / no mask: 1/T = {1 / T_long:.3f}")
ax.set_xlabel("posición t / position t")
ax.set_ylabel("salida / output")
ax.set_title("Sin posiciones, la máscara causal deja contar / Without positions, the mask lets it count")
ax.legend()
save_figure(fig, "17_00_causal_count")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-causal", "locked": true, "points": 1}
assert gap_causal > 0.1, "la máscara causal rompe la equivarianza / the causal mask breaks it"
assert torch.allclose(counted, 1 / torch.arange(1, T_long + 1)), "la salida causal del token t debe ser 1/(t+1) / the causal output of token t must be 1/(t+1)"
assert torch.allclose(flat, torch.full((T_long,), 1 / T_long)), "sin máscara, cada salida debe ser 1/T / without a mask, every output must be 1/T"
### BEGIN HIDDEN TESTS
last_prefix = torch.cat([torch.randperm(T - 1), torch.tensor([T - 1])])
assert torch.allclose(causal_attention(x[:, last_prefix])[:, -1], causal_attention(x)[:, -1], atol=1e-5)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] Un modelo causal sin codificación posicional, ¿puede saber en
# qué posición está cada token? ¿Y un codificador bidireccional sin posiciones? Apóyate en la
# figura. · [en] Can a causal model with no positional encoding know the position of each token?
# And a bidirectional encoder with no positions? Use the figure.

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] El causal sí puede: la máscara hace que el token $t$ vea exactamente $t+1$ tokens, así que
# una cabeza que promedia de forma uniforme produce $1/(t+1)$, una cantidad distinta en cada
# posición que las capas siguientes pueden leer. La salida en $t$ no depende del orden de los
# tokens anteriores, pero sí de cuántos hay. El bidireccional no: sin máscara y sin posiciones es
# equivariante, así que todos los tokens iguales reciben la misma salida y solo puede tratar la
# secuencia como un multiconjunto.
#
# [en] The causal one can: the mask makes token $t$ see exactly $t+1$ tokens, so a head that
# averages uniformly outputs $1/(t+1)$, a different quantity at every position that later layers
# can read. The output at $t$ does not depend on the order of the earlier tokens, but it does
# depend on how many there are. The bidirectional one cannot: without a mask and without
# positions it is equivariant, so equal tokens receive equal outputs and it can only treat the
# sequence as a multiset.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part5-md", "locked": true}
# ## 5. Dónde entra la posición: absoluta o relativa / Where position enters: absolute or relative
#
# **[es]** Las codificaciones entran por uno de tres sitios: se **suman a la entrada** (sinusoidal,
# aprendida), **rotan $Q$ y $K$** (RoPE) o se **suman a los logits** (ALiBi, sesgo relativo). Abajo
# tienes una versión mínima de cada una. Una codificación es *relativa* si los logits entre dos
# tokens dependen solo de su distancia: desplazar toda la secuencia `offset` posiciones no los
# cambia. Escribe `offset_spread(hook, x, offsets)`: el máximo de
# $|\text{logits}(\text{offset}) - \text{logits}(0)|$ sobre los `offsets` dados.
#
# **[en]** Encodings enter at one of three places: they are **added to the input** (sinusoidal,
# learned), they **rotate $Q$ and $K$** (RoPE) or they are **added to the logits** (ALiBi, relative
# bias). Below is a minimal version of each. An encoding is *relative* if the logits between two
# tokens depend only on their distance: shifting the whole sequence by `offset` positions does not
# change them. Write `offset_spread(hook, x, offsets)`: the maximum of
# $|\text{logits}(\text{offset}) - \text{logits}(0)|$ over the given `offsets`.

# %% nbgrader={"grade_id": "hooks", "locked": true}
inv_freq = 100.0 ** (-torch.arange(0, d, 2) / d)  # (d/2,)


def rotate_pairs(z, positions):
    """Rotate pair (2i, 2i+1) of row t by positions[t] * inv_freq[i] (lesson 17.03)."""
    angles = positions[:, None].float() * inv_freq  # (T, d/2)
    pairs = torch.view_as_complex(z.reshape(*z.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(pairs * torch.polar(torch.ones_like(angles), angles)).flatten(-2)


def distance_bias(positions):
    """-0.5 |i - j|: a fixed penalty that grows with the distance (lesson 17.04)."""
    return -0.5 * (positions[None, :] - positions[:, None]).abs().float()


def attention_logits(z, hook=None, offset=0):
    """Logits (B, T, T) of one head, with position entering through `hook`."""
    positions = offset + torch.arange(z.shape[1])
    if hook == "input":
        z = z + table[positions]
    q, k = z @ w_q, z @ w_k
    if hook == "qk":
        q, k = rotate_pairs(q, positions), rotate_pairs(k, positions)
    logits = q @ k.transpose(-2, -1) / d**0.5
    if hook == "logits":
        logits = logits + distance_bias(positions)
    return logits


def attend(z, hook=None):
    """The output of that head (no mask); with hook='input' the values carry positions too."""
    values = (z + table[: z.shape[1]] if hook == "input" else z) @ w_v
    return attention_logits(z, hook).softmax(dim=-1) @ values


# %% nbgrader={"grade_id": "offset-spread", "solution": true}
def offset_spread(hook, z, offsets) -> float:
    """max over offsets of max |attention_logits(z, hook, offset) - attention_logits(z, hook, 0)|."""
    ### BEGIN SOLUTION
    start = attention_logits(z, hook, 0)
    return max((attention_logits(z, hook, o) - start).abs().max().item() for o in offsets)
    ### END SOLUTION


# %% nbgrader={"grade_id": "hooks-table", "locked": true}
offsets = [1, 5, 20, 50]
rows = {}
print(f"{'hook':<8} {'P-gap':>8} {'offset spread':>14}")
for hook in (None, "input", "qk", "logits"):
    rows[hook] = (
        permutation_equivariance_gap(lambda z, h=hook: attend(z, h), x, perm),
        offset_spread(hook, x, offsets),
    )
    print(f"{hook!s:<8} {rows[hook][0]:8.2e} {rows[hook][1]:14.2e}")

# %% nbgrader={"grade": true, "grade_id": "test-hooks", "locked": true, "points": 2}
assert rows[None][0] < 1e-5 and rows[None][1] == 0.0, "sin posición / no position"
assert all(rows[h][0] > 0.1 for h in ("input", "qk", "logits")), "las tres formas de añadir la posición rompen la equivarianza / all three ways of adding position break equivariance"
assert rows["input"][1] > 0.1, "sumar una tabla a la entrada es absoluto / input table is absolute"
assert rows["qk"][1] < 1e-4 and rows["logits"][1] < 1e-4, "rotar Q/K y el sesgo en los logits solo dependen de la distancia / rotating Q/K and the logit bias depend only on the distance"
### BEGIN HIDDEN TESTS
assert offset_spread("input", x, [0]) == 0.0
assert abs(offset_spread("input", x, [3, 7]) - max(offset_spread("input", x, [3]), offset_spread("input", x, [7]))) < 1e-6
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] Con `hook="input"` la posición se suma a $X$ antes de calcular
# $V$; con `hook="qk"` y `hook="logits"`, no. ¿Qué consecuencias tiene eso para la salida de la
# atención y para las capas siguientes? · [en] With `hook="input"` position is added to $X$ before
# $V$ is computed; with `hook="qk"` and `hook="logits"`, it is not. What does that imply for the
# output of attention and for the layers that follow?

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Con `hook="qk"` y `hook="logits"` la posición solo cambia los pesos de atención: decide
# *a quién* mira cada token, pero lo que se mezcla son valores $V = XW_V$ sin posición, y la
# salida no lleva ninguna huella directa de dónde estaba cada token. Por eso estas codificaciones
# se aplican de nuevo en cada capa. Con `hook="input"` la posición forma parte de $X$: cambia los
# logits (de forma absoluta, porque $E[p]$ depende de $p$ y no de la distancia) y además viaja en
# los valores, así que la salida de cada token lleva mezcladas las posiciones de los tokens que
# mira, y la conexión residual la lleva a las capas siguientes; basta con sumarla una vez.
#
# [en] With `hook="qk"` and `hook="logits"` position only changes the attention weights: it
# decides *whom* each token looks at, but what gets mixed are values $V = XW_V$ without position,
# and the output carries no direct trace of where each token was. That is why these encodings are
# applied again in every layer. With `hook="input"` position is part of $X$: it changes the logits
# (absolutely, because $E[p]$ depends on $p$ and not on the distance) and it also travels in the
# values, so each token's output carries a mixture of the positions of the tokens it looks at, and
# the residual connection takes it to the next layers; adding it once is enough.
# ### END SOLUTION
