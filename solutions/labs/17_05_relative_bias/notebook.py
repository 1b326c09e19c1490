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
# # Laboratorio 17.05 · Sesgos de posición relativa: T5 y Swin
# *Lab 17.05 · Relative position biases: T5 and Swin*
#
# **[es]** Un sesgo relativo suma a cada logit de atención un número aprendido que depende solo
# de la posición relativa entre consulta y clave. En este laboratorio implementas las cubetas
# logarítmicas de T5 (bidireccionales y causales) y un módulo de sesgo relativo, comparas los
# embeddings relativos de Shaw con el sesgo escalar y construyes el índice relativo 2-D de Swin.
#
# **[en]** A relative bias adds to each attention logit a learned number that depends only on
# the relative position between query and key. In this lab you implement T5's logarithmic
# buckets (bidirectional and causal) and a relative-bias module, compare Shaw's relative
# embeddings with the scalar bias, and build Swin's 2-D relative index.
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/17/05-relative-bias.md` · `docs_en/17/05-relative-bias.md`.
# 2. Completa / complete `relative_position_bucket`, `RelativePositionBias.forward` y/and
#    `swin_relative_index` en/in `src/minimodel/positional/relative_bias.py`.
# 3. Comprueba tu código / check your code: `make check LAB=17.05`.
# 4. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Las celdas marcadas
#    `TU CÓDIGO` / `YOUR CODE` son tuyas; las de pruebas están bloqueadas.

# %% nbgrader={"grade_id": "setup", "locked": true}
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from minimodel.labkit import reload_edited_modules, save_figure, sized
from minimodel.positional.relative_bias import (
    RelativePositionBias,
    relative_position_bucket,
    swin_relative_index,
)

torch.set_printoptions(precision=4, sci_mode=False, linewidth=100)

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. Las cubetas de T5 / T5's buckets
#
# **[es]** T5 mide la posición relativa como `clave - consulta` (negativa para las claves del
# pasado) y la reparte en 32 cubetas: las distancias pequeñas tienen cubeta propia y las grandes
# comparten cubetas cada vez más anchas, en escala logarítmica, hasta `max_distance = 128`. En modo
# bidireccional, la mitad de las cubetas es para las claves anteriores y la otra mitad para las
# posteriores; en modo causal, todas son para el pasado y cualquier clave futura cae en la 0.
#
# **[en]** T5 measures the relative position as `key - query` (negative for keys in the past) and
# spreads it over 32 buckets: small distances get a bucket of their own and large ones share
# buckets that grow wider, on a log scale, up to `max_distance = 128`. In bidirectional mode, half
# the buckets are for earlier keys and half for later ones; in causal mode, all of them are for
# the past and any future key falls in bucket 0.

# %% nbgrader={"grade_id": "buckets", "locked": true}
rel = torch.tensor([-1000, -128, -64, -32, -16, -9, -8, -7, -1, 0, 1, 7, 8, 16, 32, 64, 127])
print("rel           ", rel.tolist())
print("bidireccional ", relative_position_bucket(rel, bidirectional=True).tolist())
print("causal        ", relative_position_bucket(rel, bidirectional=False).tolist())

span = torch.arange(-160, 161)
fig, ax = plt.subplots(figsize=(8, 3.8))
ax.step(span, relative_position_bucket(span, bidirectional=True), where="mid", label="bidireccional / bidirectional")
ax.step(span, relative_position_bucket(span, bidirectional=False), where="mid", label="causal")
for x in (-128, 128):
    ax.axvline(x, color="gray", lw=0.6, ls="--")
ax.set_xlabel("posición relativa clave - consulta / relative position key - query")
ax.set_ylabel("cubeta / bucket")
ax.set_title("T5: 32 cubetas, max_distance = 128 / 32 buckets, max_distance = 128")
ax.legend()
save_figure(fig, "17_05_buckets")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-buckets", "locked": true, "points": 3}
b_bi = relative_position_bucket(rel, bidirectional=True)
b_causal = relative_position_bucket(rel, bidirectional=False)
assert b_bi.dtype == torch.long and b_bi.shape == rel.shape, "LongTensor con la forma de la entrada / with the input's shape"
assert b_bi.tolist() == [15, 15, 14, 12, 10, 8, 8, 7, 1, 0, 17, 23, 24, 26, 28, 30, 31], "las cubetas bidireccionales no son las esperadas / the bidirectional buckets are not the expected ones"
assert b_causal.tolist() == [31, 31, 26, 21, 16, 9, 8, 7, 1, 0, 0, 0, 0, 0, 0, 0, 0], "las cubetas causales no son las esperadas / the causal buckets are not the expected ones"
### BEGIN HIDDEN TESTS
import math


def t5_bucket(r, bidirectional, num_buckets, max_distance):
    out = 0
    if bidirectional:
        num_buckets //= 2
        out += num_buckets if r > 0 else 0
        n = abs(r)
    else:
        n = max(-r, 0)
    exact = num_buckets // 2
    if n < exact:
        return out + n
    scaled = torch.log(torch.tensor(n / exact, dtype=torch.float32)) / math.log(max_distance / exact)
    return out + min(exact + int(scaled * (num_buckets - exact)), num_buckets - 1)


for nb, md in ((32, 128), (16, 50), (64, 300)):
    for bid in (True, False):
        r = torch.arange(-400, 401)
        got = relative_position_bucket(r, bidirectional=bid, num_buckets=nb, max_distance=md)
        assert got.tolist() == [t5_bucket(int(x), bid, nb, md) for x in r], (nb, md, bid)
assert relative_position_bucket(torch.zeros(2, 3, 4, dtype=torch.int32), bidirectional=True).shape == (2, 3, 4)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. ¿Cuántas distancias caben en cada cubeta? / How many distances per bucket?
#
# **[es]** Escribe `bucket_starts(bidirectional)`: para las claves del pasado
# (`rel = -n`, `n = 0, 1, 2, ...`), la distancia `n` más pequeña que cae en cada cubeta, usando
# tu `relative_position_bucket` con los valores por defecto. Devuelve un diccionario
# `{cubeta: primera distancia}`. La lección deduce los límites a mano:
# $n_k = \lceil e \cdot (D/e)^{k/(n_b - e)} \rceil$, con $e$ cubetas exactas.
#
# **[en]** Write `bucket_starts(bidirectional)`: for keys in the past (`rel = -n`,
# `n = 0, 1, 2, ...`), the smallest distance `n` that falls in each bucket, using your
# `relative_position_bucket` with the default values. Return a dictionary
# `{bucket: first distance}`. The lesson derives the boundaries by hand:
# $n_k = \lceil e \cdot (D/e)^{k/(n_b - e)} \rceil$, with $e$ exact buckets.

# %% nbgrader={"grade_id": "bucket-starts", "solution": true}
def bucket_starts(bidirectional: bool) -> dict[int, int]:
    """{bucket: smallest distance n >= 0 whose key (rel = -n) falls in it}."""
    ### BEGIN SOLUTION
    n = torch.arange(0, 1000)
    buckets = relative_position_bucket(-n, bidirectional=bidirectional)
    starts = {}
    for distance, bucket in zip(n.tolist(), buckets.tolist(), strict=True):
        starts.setdefault(bucket, distance)
    return starts
    ### END SOLUTION


# %% nbgrader={"grade_id": "bucket-starts-check", "locked": true}
for mode in (True, False):
    starts = bucket_starts(mode)
    name = "bidireccional / bidirectional" if mode else "causal"
    print(name, {b: n for b, n in starts.items() if n >= 8})

# %% nbgrader={"grade": true, "grade_id": "test-bucket-starts", "locked": true, "points": 2}
bi = bucket_starts(True)
assert [bi[b] for b in range(8, 16)] == [8, 12, 16, 23, 32, 46, 64, 91], "bidireccional / bidirectional"
causal_starts = bucket_starts(False)
assert causal_starts[31] == 113 and causal_starts[16] == 16, "causal: la última empieza en 113 / the last starts at 113"
### BEGIN HIDDEN TESTS
assert sorted(bi) == list(range(16)) and sorted(causal_starts) == list(range(32))
assert all(bi[b] == b for b in range(8)) and all(causal_starts[b] == b for b in range(16))
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] Las distancias 113 y 5000 comparten cubeta en un decodificador
# T5. ¿Qué consecuencia tiene para un modelo que se usa con contextos más largos que los del
# entrenamiento? Compáralo con ALiBi. · [en] Distances 113 and 5000 share a bucket in a T5
# decoder. What does that mean for a model used with longer contexts than in training? Compare it
# with ALiBi.

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Todas las claves a distancia 113 o más reciben el mismo sesgo aprendido: el modelo no
# distingue una clave a 200 tokens de otra a 5000, y más allá de ese punto el sesgo deja de
# ordenar las claves por cercanía. Nunca se sale de la tabla (siempre hay cubeta), así que no hay
# error ni posiciones sin ver; lo que cambia con contextos largos es que hay muchas más claves en
# esa última cubeta, todas con el mismo sesgo, y la atención puede repartirse entre ellas más de
# lo que se vio al entrenar. ALiBi, en cambio, sigue penalizando linealmente a cualquier
# distancia: las claves lejanas pesan cada vez menos y la distribución de atención apenas cambia.
#
# [en] Every key at distance 113 or more gets the same learned bias: the model cannot tell a key
# 200 tokens back from one 5000 tokens back, and beyond that point the bias no longer orders keys
# by closeness. The table never runs out (there is always a bucket), so there is no error and no
# unseen position; what changes with long contexts is that many more keys land in that last
# bucket, all with the same bias, and attention can spread over them more than it did in
# training. ALiBi, instead, keeps penalising linearly at any distance: far keys weigh less and
# less and the attention distribution barely changes.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. El módulo de sesgo relativo / The relative-bias module
#
# **[es]** `RelativePositionBias(n_heads)` guarda una tabla `nn.Embedding(num_buckets, n_heads)`:
# un escalar aprendido por cubeta y cabeza. Su `forward(q_len, k_len)` devuelve el sesgo
# `(H, q_len, k_len)`, con las consultas alineadas al final de las claves, como en la lección
# 17.04. Para verlo, ponemos en la tabla el número de cada cubeta: el sesgo pasa a ser la matriz
# de cubetas. Después lo usamos con `scaled_dot_product_attention`, añadiendo la máscara causal.
#
# **[en]** `RelativePositionBias(n_heads)` stores a table `nn.Embedding(num_buckets, n_heads)`: one
# learned scalar per bucket and head. Its `forward(q_len, k_len)` returns the bias
# `(H, q_len, k_len)`, with the queries aligned to the end of the keys, as in lesson 17.04. To see
# it, we put each bucket's number in the table: the bias becomes the matrix of buckets. Then we use
# it with `scaled_dot_product_attention`, adding the causal mask.

# %% nbgrader={"grade_id": "module", "locked": true}
H = 4
module = RelativePositionBias(H, bidirectional=True)
print(module)
print("parámetros / parameters:", sum(p.numel() for p in module.parameters()))
with torch.no_grad():
    module.bias.weight.copy_(torch.arange(32.0)[:, None].expand(32, H))
T = sized(full=48, test=24)
bias = module(T, T)
print("forma / shape:", tuple(bias.shape))
print(bias[0, :6, :6])

fig, ax = plt.subplots(figsize=(4.6, 4))
image = ax.imshow(bias[0].detach(), cmap="viridis")
ax.set_xlabel("clave j / key j")
ax.set_ylabel("consulta i / query i")
ax.set_title("cubeta de (j - i) / bucket of (j - i)")
fig.colorbar(image, ax=ax, fraction=0.046)
save_figure(fig, "17_05_bias_matrix")
plt.show()

# Con una caché: una consulta tras T - 1 claves recibe la última fila.
# With a cache: one query after T - 1 keys gets the last row.
print("última fila / last row:", torch.equal(module(1, T), bias[:, -1:]))

torch.manual_seed(0)
decoder = RelativePositionBias(H, bidirectional=False)
q, k, v = (torch.randn(2, H, T, 16) for _ in range(3))
causal = torch.full((T, T), float("-inf")).triu(1)
mask = (decoder(T, T) + causal).detach()
out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
manual = (q @ k.transpose(-2, -1) / 16**0.5 + mask).softmax(-1) @ v
print("SDPA == manual:", torch.allclose(out, manual, atol=1e-6))

# %% nbgrader={"grade": true, "grade_id": "test-module", "locked": true, "points": 3}
rel_matrix = torch.arange(T)[None, :] - torch.arange(T)[:, None]
assert bias.shape == (H, T, T), "forma (H, q_len, k_len) / shape (H, q_len, k_len)"
assert torch.equal(bias[2], relative_position_bucket(rel_matrix, bidirectional=True).float()), "tabla[cubeta(j - i)] / table[bucket(j - i)]"
assert torch.equal(module(1, T), bias[:, -1:]), "consultas al final / queries at the end"
assert torch.allclose(out, manual, atol=1e-6), "el módulo debe coincidir con el cálculo a mano / the module must match the computation by hand"
### BEGIN HIDDEN TESTS
small = RelativePositionBias(3, num_buckets=8, max_distance=20, bidirectional=False)
got = small(2, 6)
query = torch.tensor([4, 5])[:, None]
key = torch.arange(6)[None, :]
expected = small.bias.weight[relative_position_bucket(key - query, bidirectional=False, num_buckets=8, max_distance=20)].permute(2, 0, 1)
assert torch.equal(got, expected)
got.sum().backward()
assert small.bias.weight.grad is not None, "diferenciable / differentiable"
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. Shaw frente al sesgo escalar / Shaw versus the scalar bias
#
# **[es]** Shaw et al. (2018) aprenden un *vector* $a_r \in \mathbb{R}^d$ por distancia
# recortada $r = \mathrm{clip}(j - i, -K, K)$ y lo suman a la clave:
# $e_{ij} = q_i \cdot (k_j + a_{r})/\sqrt{d}$. El término de posición, $q_i \cdot a_r$, depende de
# la consulta; el de T5 es un escalar fijo. Escribe `shaw_logits(q, k, table, K)` sin construir el
# tensor $(T, T, d)$: calcula $q\,A^\top$, de forma $(T, 2K+1)$, y recoge con `gather` la columna
# de cada par. Una versión directa, lenta, está debajo para comparar.
#
# **[en]** Shaw et al. (2018) learn a *vector* $a_r \in \mathbb{R}^d$ per clipped distance
# $r = \mathrm{clip}(j - i, -K, K)$ and add it to the key: $e_{ij} = q_i \cdot (k_j + a_{r})/\sqrt{d}$.
# The position term, $q_i \cdot a_r$, depends on the query; T5's is a fixed scalar. Write
# `shaw_logits(q, k, table, K)` without building the $(T, T, d)$ tensor: compute $q\,A^\top$, of
# shape $(T, 2K+1)$, and `gather` each pair's column. A direct, slow version is below to compare.

# %% nbgrader={"grade_id": "shaw", "solution": true}
def shaw_logits(q: torch.Tensor, k: torch.Tensor, table: torch.Tensor, K: int) -> torch.Tensor:
    """q, k (T, d); table (2K + 1, d), row r + K for distance r -> logits (T, T)."""
    ### BEGIN SOLUTION
    T, d = q.shape
    r = (torch.arange(T)[None, :] - torch.arange(T)[:, None]).clamp(-K, K) + K  # (T, T)
    position = (q @ table.T).gather(1, r)  # (T, T): q_i . a_{r(i, j)}
    return (q @ k.T + position) / d**0.5
    ### END SOLUTION


# %% nbgrader={"grade_id": "shaw-check", "locked": true}
def shaw_direct(q, k, a):
    """a (T, T, d): una fila de la tabla por par / one table row per pair."""
    return ((q[:, None, :] * (k[None, :, :] + a)).sum(-1)) / q.shape[-1] ** 0.5


torch.manual_seed(1)
T_s, d_s, K = sized(full=64, test=32), 16, 4
q, k, table = torch.randn(T_s, d_s), torch.randn(T_s, d_s), torch.randn(2 * K + 1, d_s)
r = (torch.arange(T_s)[None, :] - torch.arange(T_s)[:, None]).clamp(-K, K) + K  # fila de cada par / each pair's row
print("eficiente == directa / efficient == direct:", torch.allclose(shaw_logits(q, k, table, K), shaw_direct(q, k, table[r]), atol=1e-5))

# Si todas las consultas fueran el mismo vector u, el término de Shaw sería un sesgo escalar.
# If every query were the same vector u, Shaw's term would be a scalar bias.
u = torch.randn(d_s)
same_q = u.expand(T_s, d_s)
scalar = (table @ u) / d_s**0.5  # un número por distancia / one number per distance
as_bias = same_q @ k.T / d_s**0.5 + scalar[r]
print("consulta fija == sesgo escalar / fixed query == scalar bias:", torch.allclose(shaw_logits(same_q, k, table, K), as_bias, atol=1e-5))
print(f"memoria directa / direct memory: T*T*d = {T_s * T_s * d_s} números / numbers;  eficiente / efficient: T*(2K+1) = {T_s * (2 * K + 1)}")

# %% nbgrader={"grade": true, "grade_id": "test-shaw", "locked": true, "points": 2}
logits = shaw_logits(q, k, table, K)
assert logits.shape == (T_s, T_s), "forma (T, T) / shape (T, T)"
assert torch.allclose(logits, shaw_direct(q, k, table[r]), atol=1e-5), "shaw_logits debe coincidir con el cálculo directo / shaw_logits must match the direct computation"
assert torch.allclose(shaw_logits(same_q, k, table, K), as_bias, atol=1e-5), "con una consulta fija, Shaw es un sesgo escalar / with a fixed query, Shaw is a scalar bias"
### BEGIN HIDDEN TESTS
q2, k2, t2 = torch.randn(7, 3), torch.randn(7, 3), torch.randn(5, 3)
r2 = (torch.arange(7)[None, :] - torch.arange(7)[:, None]).clamp(-2, 2) + 2
assert torch.allclose(shaw_logits(q2, k2, t2, 2), shaw_direct(q2, k2, t2[r2]), atol=1e-5)
assert torch.allclose(shaw_logits(q2, k2, torch.zeros(5, 3), 2), q2 @ k2.T / 3**0.5, atol=1e-6)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part5-md", "locked": true}
# ## 5. El índice relativo de Swin / Swin's relative index
#
# **[es]** Swin calcula la atención dentro de ventanas de $M_h \times M_w$ parches. Entre dos
# parches de una ventana hay un desplazamiento 2-D $(\Delta_r, \Delta_c)$ = consulta − clave, con
# $\Delta_r \in [-(M_h - 1), M_h - 1]$ y lo mismo para las columnas: $(2M_h - 1)(2M_w - 1)$
# desplazamientos posibles, cada uno con un sesgo aprendido por cabeza. `swin_relative_index`
# numera esos desplazamientos; con él, el sesgo de la ventana es `tabla[índice]`.
#
# **[en]** Swin computes attention inside windows of $M_h \times M_w$ patches. Between two patches
# of a window there is a 2-D offset $(\Delta_r, \Delta_c)$ = query − key, with
# $\Delta_r \in [-(M_h - 1), M_h - 1]$ and likewise for columns: $(2M_h - 1)(2M_w - 1)$ possible
# offsets, each with a learned bias per head. `swin_relative_index` numbers those offsets; with
# it, the window's bias is `table[index]`.

# %% nbgrader={"grade_id": "swin", "locked": true}
print(swin_relative_index(2, 2))
index7 = swin_relative_index(7, 7)
print("ventana / window 7x7:", tuple(index7.shape), "valores / values", int(index7.min()), "..", int(index7.max()))
n_heads = 3
swin_table = torch.randn((2 * 7 - 1) * (2 * 7 - 1), n_heads)  # (169, nH)
window_bias = swin_table[index7].permute(2, 0, 1)  # (nH, 49, 49)
print("sesgo de la ventana / window bias:", tuple(window_bias.shape))

# Una tabla legible: sesgo = -(|dr| + |dc|) para el desplazamiento de cada fila de la tabla.
# A readable table: bias = -(|dr| + |dc|) for the offset of each table row.
offsets = torch.arange(169)
manhattan = -((offsets // 13 - 6).abs() + (offsets % 13 - 6).abs()).float()
fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), layout="constrained")
axes[0].imshow(index7, cmap="viridis")
axes[0].set_title("índice / index (49 x 49)")
for ax, token, es, en in ((axes[1], 24, "central", "centre"), (axes[2], 0, "de la esquina", "corner")):
    ax.imshow(manhattan[index7[token]].reshape(7, 7), cmap="viridis")
    ax.set_title(f"parche {es} / {en} patch")
save_figure(fig, "17_05_swin_index")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-swin", "locked": true, "points": 2}
assert swin_relative_index(2, 2).tolist() == [[4, 3, 1, 0], [5, 4, 2, 1], [7, 6, 4, 3], [8, 7, 5, 4]], "swin_relative_index(2, 2) no da la tabla esperada / swin_relative_index(2, 2) does not give the expected table"
assert index7.shape == (49, 49) and index7.dtype == torch.long, "index7 debe ser (49, 49) de tipo torch.long / index7 must be (49, 49) of dtype torch.long"
assert torch.all(index7.diagonal() == 84), "diagonal = centro de la tabla / centre of the table"
assert torch.all(index7 + index7.T == 168), "desplazamientos opuestos / opposite offsets"
### BEGIN HIDDEN TESTS
idx = swin_relative_index(2, 3)
rows, cols = torch.arange(6) // 3, torch.arange(6) % 3
expected = (rows[:, None] - rows[None, :] + 1) * 5 + (cols[:, None] - cols[None, :] + 2)
assert torch.equal(idx, expected)
assert swin_relative_index(1, 1).tolist() == [[0]]
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] T5 usa `clave - consulta` y Swin `consulta - clave`. ¿Importa
# para entrenar desde cero? ¿Y al cargar una tabla entrenada con la otra convención? · [en] T5
# uses `key - query` and Swin `query - key`. Does it matter when training from scratch? And when
# loading a table trained with the other convention?

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 1}
# ### BEGIN SOLUTION
# [es] Para entrenar desde cero da igual: la tabla se aprende y cada desplazamiento acaba con su
# sesgo, se numere como se numere. Al cargar una tabla entrenada con la otra convención, sí
# importa: cada desplazamiento leería el sesgo de su opuesto (la tabla queda reflejada), el
# modelo atendería hacia el lado equivocado y nada daría error, porque las formas coinciden. Hay
# que reindexar la tabla, o comprobar con un ejemplo pequeño que el sesgo de (consulta, clave)
# sale igual que en la implementación original.
#
# [en] When training from scratch it makes no difference: the table is learned and each offset
# ends up with its bias, however it is numbered. When loading a table trained with the other
# convention it does matter: each offset would read the bias of its opposite (the table is
# mirrored), the model would attend to the wrong side and nothing would raise an error, because
# the shapes match. Re-index the table, or check on a small example that the bias of
# (query, key) comes out as in the original implementation.
# ### END SOLUTION
