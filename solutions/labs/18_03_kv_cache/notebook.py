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
# # Laboratorio 18.03 · La caché KV: decodificación incremental exacta
# *Lab 18.03 · The KV cache: exact incremental decoding*
#
# **[es]** Al generar texto, cada token nuevo solo necesita su propia consulta: las claves y los
# valores de los tokens anteriores ya se calcularon y se guardan en la caché KV. En este
# laboratorio escribes, capa a capa y con los pesos de un Mini-GPT ya entrenado, el paso de
# decodificación con caché para las seis codificaciones del curso, y compruebas que da
# exactamente los mismos *logits* que recalcular la secuencia entera. Después reproduces los
# errores clásicos (posiciones que vuelven a 0, la máscara alineada arriba a la izquierda, claves
# giradas dos veces), mides sus síntomas y ves por qué el NTK dinámico no puede ser exacto con una
# caché de claves ya giradas. Al final mides la memoria y el tiempo que ahorra la caché.
#
# **[en]** When generating text, each new token only needs its own query: the keys and values of
# the earlier tokens were already computed and are kept in the KV cache. In this lab you write,
# layer by layer and with the weights of a trained Mini-GPT, the cached decoding step for the
# course's six encodings, and you check that it gives exactly the same logits as recomputing the
# whole sequence. Then you reproduce the classic bugs (positions that restart at 0, the top-left
# aligned mask, keys rotated twice), measure their symptoms, and see why dynamic NTK cannot be
# exact with a cache of already rotated keys. Finally you measure the memory and the time the
# cache saves.
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/18/03-kv-cache.md` · `docs_en/18/03-kv-cache.md`.
# 2. Completa / complete `chunk_positions`, `relative_positions`, `causal_mask_after_cache` y/and
#    `bias_rows_after_cache` en/in `src/minimodel/positional/cache_positions.py`.
# 3. Comprueba tu código / check your code: `make check LAB=18.03`.
# 4. Termina antes los laboratorios 17.01, 17.02, 17.03, 17.04 y 17.05: este cuaderno entrena y
#    decodifica con esas cinco codificaciones, y `make check LAB=18.03` dice cuáles faltan. La
#    parte 6 usa además el NTK dinámico de la lección 18.02 (sin él, se la salta). / First finish
#    labs 17.01, 17.02, 17.03, 17.04 and 17.05: this notebook trains and decodes with those five
#    encodings, and `make check LAB=18.03` says which are missing. Part 6 also uses the dynamic NTK
#    of lesson 18.02 (without it, it is skipped).
# 5. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Las celdas marcadas
#    `TU CÓDIGO` / `YOUR CODE` son tuyas; las de pruebas están bloqueadas.

# %% nbgrader={"grade_id": "setup", "locked": true}
import dataclasses
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from minimodel.data import load_data
from minimodel.encodings import COURSE as ENCODINGS  # the course's own encodings
from minimodel.generate import generate
from minimodel.kv_cache import KVCache
from minimodel.labkit import reload_edited_modules, save_figure, sized
from minimodel.model import GPT, GPTConfig
from minimodel.positional.cache_positions import (
    bias_rows_after_cache,
    causal_mask_after_cache,
    chunk_positions,
    relative_positions,
)
from minimodel.positional.relative_bias import relative_position_bucket
from minimodel.train import TrainConfig, train

torch.set_printoptions(precision=4, sci_mode=False)
torch.set_num_threads(1)  # the models are tiny: one thread is faster than several
LAB_START = time.perf_counter()

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. Dónde están los tokens nuevos / Where the new tokens are
#
# **[es]** Con `cache_len` tokens en la caché, un paso recibe `q_len` tokens nuevos y la atención
# recorre $k = \text{cache\_len} + q$ claves. Los tokens nuevos ocupan las posiciones
# $\text{cache\_len}, \dots, \text{cache\_len} + q - 1$; la consulta $i$ y la clave $j$ están a
# distancia relativa $j - (\text{cache\_len} + i)$, y la máscara causal son las **últimas** $q$
# filas de la máscara cuadrada de $k$ tokens. Mira tus funciones con una caché de 2 tokens y 3
# nuevos.
#
# **[en]** With `cache_len` tokens in the cache, a step receives `q_len` new tokens and attention
# runs over $k = \text{cache\_len} + q$ keys. The new tokens take positions
# $\text{cache\_len}, \dots, \text{cache\_len} + q - 1$; query $i$ and key $j$ are at relative
# position $j - (\text{cache\_len} + i)$, and the causal mask is the **last** $q$ rows of the
# square mask of $k$ tokens. Look at your functions with a cache of 2 tokens and 3 new ones.

# %% nbgrader={"grade_id": "positions", "locked": true}
print("chunk_positions(2, 3) =", chunk_positions(2, 3).tolist())
print("relative_positions(2, 3) =\n", relative_positions(2, 3))
print("causal_mask_after_cache(2, 3) =\n", causal_mask_after_cache(2, 3))
square = causal_mask_after_cache(0, 5)  # the full 5 x 5 mask, no cache
print("últimas 3 filas de la cuadrada / last 3 rows of the square one:",
      torch.equal(bias_rows_after_cache(square, 2, 3), causal_mask_after_cache(2, 3)))

# %% nbgrader={"grade": true, "grade_id": "test-positions", "locked": true, "points": 2}
assert chunk_positions(2, 3).tolist() == [2, 3, 4], "posiciones / positions 2, 3, 4"
assert chunk_positions(2, 3).dtype == torch.long, "chunk_positions debe devolver torch.long / chunk_positions must return torch.long"
assert relative_positions(2, 3)[:, -1].tolist() == [2, 1, 0], "última columna / last column"
assert relative_positions(2, 3)[0].tolist() == [-2, -1, 0, 1, 2], "relative_positions(2, 3)[0] debe ser [-2, -1, 0, 1, 2] / relative_positions(2, 3)[0] must be [-2, -1, 0, 1, 2]"
mask = causal_mask_after_cache(2, 3)
assert mask.shape == (3, 5) and mask[0, 2] == 0 and mask[0, 3] == float("-inf"), "la máscara tras la caché debe ser (3, 5) y tapar solo las claves futuras / the mask after the cache must be (3, 5) and hide only future keys"
assert (mask[-1] == 0).all(), "el último token lo ve todo / the last token sees everything"
assert torch.equal(bias_rows_after_cache(square, 2, 3), mask), "bias_rows_after_cache debe dar las últimas filas de la matriz cuadrada / bias_rows_after_cache must give the last rows of the square matrix"
### BEGIN HIDDEN TESTS
for cache_len, q_len in [(0, 1), (0, 6), (7, 1), (4, 3), (30, 2)]:
    k_len = cache_len + q_len
    full = torch.zeros(k_len, k_len).masked_fill(
        torch.ones(k_len, k_len, dtype=torch.bool).triu(1), float("-inf")
    )
    assert torch.equal(causal_mask_after_cache(cache_len, q_len), full[cache_len:])
    rel = torch.arange(k_len)[None, :] - torch.arange(cache_len, k_len)[:, None]
    assert torch.equal(relative_positions(cache_len, q_len), rel)
    table = torch.randn(2, k_len + 3, k_len + 3)
    assert torch.equal(bias_rows_after_cache(table, cache_len, q_len), table[:, cache_len:k_len, :k_len])
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. Seis modelos pequeños / Six small models
#
# **[es]** Entrenamos un Mini-GPT diminuto por codificación (2 capas, anchura 64, 4 cabezas,
# secuencias de 64 caracteres del código de la biblioteca estándar de Python). No hace falta que
# sean buenos: basta con que su atención haya aprendido a mirar a sitios concretos, para que un
# error de posiciones tenga consecuencias visibles. Es la mayor parte del laboratorio, que entero
# tarda unos 50 s en dos núcleos sin otra carga; en un equipo más lento u ocupado, el doble o más.
#
# **[en]** We train one tiny Mini-GPT per encoding (2 layers, width 64, 4 heads, sequences of 64
# characters of the Python standard library's source code). They need not be good: it is enough
# that their attention has learnt to look at specific places, so that a position bug has visible
# consequences. It is most of the lab, which takes about 50 s in all on two otherwise idle cores;
# on a slower or busy machine, twice that or more.

# %% nbgrader={"grade_id": "train", "locked": true}
data = load_data("stdlib")
T = 64
TRAINING = TrainConfig(
    steps=sized(full=300, test=6), batch_size=sized(full=16, test=4), warmup=sized(full=30, test=2)
)
models = {}
start = time.perf_counter()
for encoding in ENCODINGS:
    config = GPTConfig(
        vocab_size=data.vocab_size, block_size=T, n_layer=2, n_head=4, n_embd=64,
        positional=encoding,
    )
    result = train(config, TRAINING, data, progress=False)
    models[encoding] = result["model"]
    print(f"{encoding:<11} pérdida de validación / validation loss {result['val_loss']:.3f}")
print(f"{time.perf_counter() - start:.0f} s")

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. El paso de decodificación, escrito a mano / The decoding step, written out
#
# **[es]** `forward_chunk` (más abajo) repite lo que hace `GPT.forward`, pero con las posiciones a
# la vista: embeddings, las tres vías de entrada de la posición y, en cada capa, la atención sobre
# las claves guardadas más las nuevas. Le falta una pieza, que escribes tú: `chunk_bias(model, rel)`,
# el sesgo de atención de la codificación del modelo para unas posiciones relativas `rel` de forma
# `(q_len, k_len)` (clave − consulta), **sin** la máscara causal, con forma `(H, q_len, k_len)`:
#
# - ALiBi: $m_h \cdot \text{rel}$ (la distancia es $-\text{rel}$; las pendientes están en
#   `model.hooks.slopes`);
# - T5: la tabla aprendida `model.hooks.relative.bias` en la cubeta de cada `rel`
#   (`relative_position_bucket` con `bidirectional=False` y los `num_buckets` y `max_distance` de
#   `model.hooks.relative`), permutada a `(H, q_len, k_len)` y multiplicada por
#   `model.hooks.bias_scale` ($\sqrt{d_h}$: T5 no divide sus logits por $\sqrt{d_h}$);
# - las demás codificaciones no tienen sesgo: ceros.
#
# **[en]** `forward_chunk` (below) repeats what `GPT.forward` does, but with the positions in
# plain sight: embeddings, the three ways in for position and, in each layer, attention over the
# cached keys plus the new ones. One piece is missing, and you write it:
# `chunk_bias(model, rel)`, the attention bias of the model's encoding for relative positions
# `rel` of shape `(q_len, k_len)` (key − query), **without** the causal mask, of shape
# `(H, q_len, k_len)`:
#
# - ALiBi: $m_h \cdot \text{rel}$ (the distance is $-\text{rel}$; the slopes are in
#   `model.hooks.slopes`);
# - T5: the learnt table `model.hooks.relative.bias` at the bucket of each `rel`
#   (`relative_position_bucket` with `bidirectional=False` and the `num_buckets` and
#   `max_distance` of `model.hooks.relative`), permuted to `(H, q_len, k_len)` and multiplied by
#   `model.hooks.bias_scale` ($\sqrt{d_h}$: T5 does not divide its logits by $\sqrt{d_h}$);
# - the other encodings have no bias: zeros.


# %% nbgrader={"grade_id": "chunk-bias", "solution": true}
def chunk_bias(model: GPT, rel: torch.Tensor) -> torch.Tensor:
    """Attention bias (H, q_len, k_len) float32 of the model's encoding, without the mask."""
    ### BEGIN SOLUTION
    hooks, n_head = model.hooks, model.config.n_head
    if hooks.kind == "alibi":
        return hooks.slopes.float()[:, None, None] * rel  # -m * distance, distance = -rel
    if hooks.kind == "t5":
        table = hooks.relative
        buckets = relative_position_bucket(
            rel,
            bidirectional=False,
            num_buckets=table.num_buckets,
            max_distance=table.max_distance,
        )
        # T5 logits are not divided by sqrt(head_dim); the model scales its bias to match.
        return table.bias(buckets).permute(2, 0, 1).float() * hooks.bias_scale
    return torch.zeros(n_head, *rel.shape)
    ### END SOLUTION


# %% nbgrader={"grade_id": "forward-chunk", "locked": true}
def top_left_mask(q_len: int, k_len: int) -> torch.Tensor:
    """The mask of SDPA's is_causal=True: query i sees keys 0 .. i, whatever k_len is."""
    allowed = torch.ones(q_len, k_len, dtype=torch.bool).tril()
    return torch.zeros(q_len, k_len).masked_fill(~allowed, float("-inf"))


@torch.no_grad()
def forward_chunk(model, idx, cache, *, bug=None, keys="rotated"):
    """Logits (B, q_len, vocab) of the chunk idx (B, q_len) fed after the tokens in `cache`.

    bug: None (right), "restart" (the new tokens get positions 0 .. q_len-1 again) or
         "top-left" (the causal mask of SDPA's is_causal=True).
    keys (RoPE): "rotated" caches rotated keys (LLaMA); "raw" caches them unrotated and rotates
         every key at each step; "twice" caches rotated keys and rotates them all again (a bug).
    """
    B, q_len = idx.shape
    cache_len = cache.length
    k_len = cache_len + q_len
    hooks, H, C = model.hooks, model.config.n_head, model.config.n_embd
    positions = chunk_positions(cache_len, q_len)
    rel = relative_positions(cache_len, q_len)
    mask = causal_mask_after_cache(cache_len, q_len)
    if bug == "restart":
        positions = torch.arange(q_len)
        rel = torch.arange(k_len)[None, :] - positions[:, None]
    elif bug == "top-left":
        mask = top_left_mask(q_len, k_len)
    offset = int(positions[0])
    # hook 1 (sinusoidal, learned): the vectors of positions offset .. offset + q_len - 1
    x = hooks.add_to_input(model.wte(idx), offset=offset)
    bias = chunk_bias(model, rel) + mask  # hook 3, with the causal mask folded in
    for layer, block in enumerate(model.blocks):
        q, k, v = block.attn.c_attn(block.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, q_len, H, C // H).transpose(1, 2) for t in (q, k, v))
        # hook 2 (RoPE): rotate(q, k, offset) turns rows offset, offset + 1, ...; the identity
        # for the encodings that do not rotate
        if keys == "raw":
            q, _ = hooks.rotate(q, q, offset)
            k, v = cache.update(layer, k, v)
            _, k = hooks.rotate(k, k, 0)  # every key, from position 0
        else:
            q, k = hooks.rotate(q, k, offset)
            k, v = cache.update(layer, k, v)
            if keys == "twice":
                _, k = hooks.rotate(k, k, 0)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype))
        x = x + block.attn.c_proj(y.transpose(1, 2).reshape(B, q_len, C))
        x = x + block.mlp(block.ln_2(x))
    return model.lm_head(model.ln_f(x))


def cached_logits(model, idx, prefill, step=1, **options):
    """Feed idx[:, :prefill] at once, then chunks of `step` tokens; logits of every position."""
    cache = KVCache(model.config.n_layer)
    out = [forward_chunk(model, idx[:, :prefill], cache, **options)]
    for start in range(prefill, idx.size(1), step):
        out.append(forward_chunk(model, idx[:, start : start + step], cache, **options))
    return torch.cat(out, dim=1)


# %% nbgrader={"grade_id": "chunk-bias-check", "locked": true}
for encoding in ("alibi", "t5"):
    model = models[encoding]
    ours = chunk_bias(model, relative_positions(5, 3)) + causal_mask_after_cache(5, 3)
    theirs = model.hooks.attention_bias(3, 8)[0]  # what GPT.forward uses
    print(f"{encoding}: forma / shape {tuple(ours.shape)}, igual que el modelo / same as the model:",
          torch.allclose(ours, theirs))
print("rope:", chunk_bias(models["rope"], relative_positions(5, 3)).abs().max().item())

# %% nbgrader={"grade": true, "grade_id": "test-chunk-bias", "locked": true, "points": 2}
for encoding in ("alibi", "t5"):
    model = models[encoding]
    ours = chunk_bias(model, relative_positions(5, 3)) + causal_mask_after_cache(5, 3)
    assert ours.shape == (4, 3, 8), "forma / shape (H, q_len, k_len)"
    assert torch.allclose(ours, model.hooks.attention_bias(3, 8)[0]), f"{encoding}: el sesgo del trozo debe coincidir con las últimas filas del completo / {encoding}: the chunk's bias must match the last rows of the full one"
for encoding in ("none", "sinusoidal", "learned", "rope"):
    assert torch.equal(chunk_bias(models[encoding], relative_positions(2, 2)), torch.zeros(4, 2, 4)), f"{encoding}: sin sesgo en los logits, chunk_bias debe ser cero / {encoding}: no logit bias, chunk_bias must be zero"
### BEGIN HIDDEN TESTS
for encoding in ("alibi", "t5"):
    model = models[encoding]
    for cache_len, q_len in [(0, 7), (20, 1), (9, 4)]:
        k_len = cache_len + q_len
        got = chunk_bias(model, relative_positions(cache_len, q_len))
        got = got + causal_mask_after_cache(cache_len, q_len)
        assert torch.allclose(got, model.hooks.attention_bias(q_len, k_len)[0])
        square = model.hooks.attention_bias(k_len, k_len)[0]
        assert torch.allclose(got, square[:, cache_len:])
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. Exacto para todas las codificaciones / Exact for every encoding
#
# **[es]** Alimentamos 64 caracteres de validación de tres formas: enteros con `model(idx)` (la
# referencia), con un *prefill* de 24 tokens y luego de uno en uno, y con el mismo *prefill* y
# luego en trozos de 5 (consultas que son varias a la vez tras la caché). Las diferencias deben
# quedarse en el ruido de `float32`: el orden de las sumas cambia, nada más.
#
# **[en]** We feed 64 validation characters in three ways: all at once with `model(idx)` (the
# reference), with a 24-token prefill and then one at a time, and with the same prefill and then
# chunks of 5 (several queries at once after the cache). The differences must stay at the level
# of `float32` noise: the order of the sums changes, nothing else.

# %% nbgrader={"grade_id": "exact", "locked": true}
idx, targets = data.eval_batch("val", 2, T)
PREFILL = 24
exact = {}
for encoding, model in models.items():
    with torch.no_grad():
        full = model(idx)[0]
    one = (cached_logits(model, idx, PREFILL) - full).abs().max().item()
    five = (cached_logits(model, idx, PREFILL, step=5) - full).abs().max().item()
    exact[encoding] = max(one, five)
    print(f"{encoding:<11} máx |Δ logits| de uno en uno / one by one {one:.1e}, de 5 en 5 / by 5 {five:.1e}")

# %% nbgrader={"grade": true, "grade_id": "test-exact", "locked": true, "points": 3}
for encoding, difference in exact.items():
    assert difference < 1e-4, f"{encoding}: la caché no es exacta / the cache is not exact"
### BEGIN HIDDEN TESTS
other, _ = data.eval_batch("val", 3, 40)
for encoding, model in models.items():
    with torch.no_grad():
        full = model(other)[0]
    assert (cached_logits(model, other, 1, step=3) - full).abs().max() < 1e-4, encoding
    assert (cached_logits(model, other, 39) - full).abs().max() < 1e-4, encoding
rope_model = models["rope"]
with torch.no_grad():
    full = rope_model(other)[0]
assert (cached_logits(rope_model, other, 10, keys="raw") - full).abs().max() < 1e-4
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part5-md", "locked": true}
# ## 5. Los errores clásicos y sus síntomas / The classic bugs and their symptoms
#
# **[es]** Repetimos la decodificación con dos errores: **posiciones que vuelven a 0** (cada trozo
# nuevo se codifica como si empezara la secuencia; la máscara sigue bien) y **máscara arriba a la
# izquierda** (las posiciones están bien, pero la máscara es la de `is_causal=True`). Para cada
# codificación medimos la diferencia máxima de *logits* y la pérdida en los 40 caracteres
# decodificados, que pasa a ser la de un modelo peor sin que nada falle. Primero, una comprobación
# de que la segunda máscara es de verdad la de PyTorch.
#
# **[en]** We repeat the decoding with two bugs: **positions that restart at 0** (each new chunk is
# encoded as if the sequence started; the mask stays right) and **top-left mask** (the positions
# are right, but the mask is that of `is_causal=True`). For each encoding we measure the largest
# logit difference and the loss on the 40 decoded characters, which becomes that of a worse model
# without anything failing. First, a check that the second mask really is PyTorch's.

# %% nbgrader={"grade_id": "sdpa-top-left", "locked": true}
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, 2, n, 8, generator=g) for n in (1, 6, 6))
with_flag = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print("is_causal=True == máscara arriba-izquierda / top-left mask:",
      torch.allclose(with_flag, F.scaled_dot_product_attention(q, k, v, attn_mask=top_left_mask(1, 6))))
print("la consulta nueva solo ve la clave 0 / the new query only sees key 0:",
      torch.allclose(with_flag, v[:, :, :1]))


# %% nbgrader={"grade_id": "bugs", "locked": true}
def decoded_loss(logits):
    """Mean cross-entropy of the positions decoded after the prefill (teacher forcing)."""
    tail = logits[:, PREFILL:]
    return F.cross_entropy(tail.flatten(0, 1), targets[:, PREFILL:].flatten()).item()


symptoms = {}
print(f"{'':<11} {'pérdida / loss':>15} {'reinicio / restart':>28} {'arriba-izq. / top-left':>28}")
for encoding, model in models.items():
    with torch.no_grad():
        full = model(idx)[0]
    right = decoded_loss(full)
    cells = []
    for bug in ("restart", "top-left"):
        logits = cached_logits(model, idx, PREFILL, bug=bug)
        delta = (logits - full)[:, PREFILL:].abs().max().item()
        symptoms[encoding, bug] = (delta, decoded_loss(logits))
        cells.append(f"Δ {delta:7.1e}, {decoded_loss(logits):5.2f}")
    print(f"{encoding:<11} {right:>15.2f} " + " ".join(f"{c:>28}" for c in cells))


# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] En la tabla, reiniciar las posiciones no cambia nada con `none`
# ni con `alibi`, y sí con `t5`, aunque ALiBi y T5 son los dos sesgos relativos. Explica por qué
# en cada caso. ¿Qué te dice esto sobre probar una caché KV con una sola codificación? ·
# [en] In the table, restarting the positions changes nothing with `none` or `alibi`, but it does
# with `t5`, although ALiBi and T5 are both relative biases. Explain why in each case. What does
# this tell you about testing a KV cache with a single encoding?

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# [es] `none` no usa posiciones: solo la máscara, que sigue bien, así que da igual qué posición le
# atribuimos al token nuevo. En ALiBi, con las consultas desplazadas $c$ posiciones (las $c$ de la
# caché), cada fila del sesgo cambia en la constante $m_h\,c$: $m_h\,(j - i)$ frente a
# $m_h\,(j - (c + i))$. El *softmax* no cambia al sumar una constante a toda una fila, así que los
# pesos son los mismos. En T5 las distancias pasan por las cubetas, que no son lineales: con la
# consulta en 0, todas las claves guardadas quedan «en el futuro» ($\text{rel} > 0$), y en modo
# causal todas caen en la cubeta 0; el modelo pierde la distancia. Moraleja: un error de posiciones
# puede no dar ningún síntoma con una codificación (NoPE, ALiBi) y romper otra; una caché se prueba
# con todas, comparando *logits* con el cálculo completo.
#
# [en] `none` uses no positions: only the mask, which is still right, so the position attributed
# to the new token does not matter. In ALiBi, with the queries shifted by $c$ positions (the $c$
# cached ones), each row of the bias changes by the constant $m_h\,c$: $m_h\,(j - i)$ versus
# $m_h\,(j - (c + i))$. Softmax does not change when a constant is added to a whole row, so the
# weights are the same. In T5 the distances go through the buckets, which are not linear: with
# the query at 0, every cached key is "in the future" ($\text{rel} > 0$), and in causal mode they
# all fall into bucket 0; the model loses the distance. Moral: a position bug may show no symptom
# with one encoding (NoPE, ALiBi) and break another; a cache is tested with all of them, comparing
# logits with the full computation.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part6-md", "locked": true}
# ## 6. Las posiciones de las claves guardadas / The positions of the cached keys
#
# **[es]** Con RoPE, la caché del curso guarda las claves **ya giradas**, como LLaMA: cada clave
# lleva su posición dentro y no hay que volver a tocarla. Hay otra opción correcta, guardar las
# claves sin girar y girar todas en cada paso con sus posiciones $0, \dots, k-1$ (`keys="raw"`),
# que cuesta más. Mezclar las dos (guardar giradas y volver a girarlas, `keys="twice"`) gira dos
# veces las claves antiguas.
#
# Con el NTK dinámico (lección 18.02) las frecuencias dependen de la longitud actual: a partir de
# $L_0$ cambian en cada paso. Una clave girada y guardada se queda con las frecuencias del paso en
# que entró, mientras que recalcularlo todo la giraría con las de ahora. Comparamos, paso a paso y
# hasta $2L_0$, la caché del propio modelo y `keys="raw"` con recalcular la secuencia entera en
# cada paso. Fíjate en si `keys="raw"` llega a ser exacto.
#
# **[en]** With RoPE, the course's cache stores keys **already rotated**, as LLaMA does: each key
# carries its position inside and need not be touched again. There is another correct option:
# store the keys unrotated and rotate all of them at each step with their positions
# $0, \dots, k-1$ (`keys="raw"`), which costs more. Mixing the two (storing rotated keys and
# rotating them again, `keys="twice"`) rotates the old keys twice.
#
# With dynamic NTK (lesson 18.02) the frequencies depend on the current length: past $L_0$ they
# change at every step. A rotated key in the cache keeps the frequencies of the step at which it
# came in, while recomputing everything would rotate it with today's. We compare, step by step
# and up to $2L_0$, the model's own cache and `keys="raw"` against recomputing the whole sequence
# at every step. Watch whether `keys="raw"` gets to be exact.

# %% nbgrader={"grade_id": "keys", "locked": true}
rope_model = models["rope"]
with torch.no_grad():
    full = rope_model(idx)[0]
for keys in ("rotated", "raw", "twice"):
    delta = (cached_logits(rope_model, idx, PREFILL, keys=keys) - full).abs().max().item()
    print(f"keys={keys!r:<10} máx |Δ logits| = {delta:.1e}")


# %% nbgrader={"grade_id": "dynamic", "locked": true}
@torch.no_grad()
def stepwise_differences(model, tokens, prefill):
    """|Δ| per step between cached decoding and recomputing the sequence so far."""
    own, raw = KVCache(model.config.n_layer), KVCache(model.config.n_layer)
    model(tokens[:, :prefill], cache=own)
    forward_chunk(model, tokens[:, :prefill], raw, keys="raw")
    rows = []
    for t in range(prefill, tokens.size(1)):
        step = tokens[:, t : t + 1]
        recomputed = model(tokens[:, : t + 1])[0][:, -1]
        by_model = model(step, cache=own)[0][:, -1]
        by_raw = forward_chunk(model, step, raw, keys="raw")[:, -1]
        rows.append(((by_model - recomputed).abs().max().item(),
                     (by_raw - recomputed).abs().max().item()))
    return torch.tensor(rows)


long_idx, _ = data.eval_batch("val", 1, 2 * T)
dynamic_model = None
try:
    config = dataclasses.replace(rope_model.config, rope_scaling="dynamic_ntk", rope_scaling_factor=1.0)
    dynamic_model = GPT(config)
    dynamic_model.load_state_dict(rope_model.state_dict())
    dynamic_model.eval()
    steps = stepwise_differences(dynamic_model, long_idx, PREFILL)
except NotImplementedError:
    dynamic_model = None
    print("[es] Completa dynamic_ntk_scaling (lección 18.02) para ver esta parte.\n"
          "[en] Complete dynamic_ntk_scaling (lesson 18.02) to see this part.")
if dynamic_model is not None:
    positions = torch.arange(PREFILL, 2 * T)
    inside = positions < T
    print(f"hasta / up to L0={T}: caché del modelo / model's cache {steps[inside, 0].max():.1e}, "
          f"raw {steps[inside, 1].max():.1e}")
    print(f"después / past L0     : caché del modelo / model's cache {steps[~inside, 0].max():.1e}, "
          f"raw {steps[~inside, 1].max():.1e}")
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.semilogy(positions, steps[:, 0].clamp(min=1e-8), label="caché del modelo / model's cache (rotated)")
    ax.semilogy(positions, steps[:, 1].clamp(min=1e-8), label='keys="raw"')
    ax.axvline(T, color="gray", ls="--", lw=1)
    ax.set_xlabel("posición del token nuevo / position of the new token")
    ax.set_ylabel("máx |Δ logits| / max |Δ logits|")
    ax.set_title("NTK dinámico: caché frente a recálculo / dynamic NTK: cache vs recomputation")
    ax.legend()
    save_figure(fig, "18_03_dynamic_ntk")
    plt.show()

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] Con NTK dinámico, la caché del modelo deja de coincidir con el
# recálculo en cuanto la secuencia pasa de $L_0$, y `keys="raw"` se acerca mucho más, pero tampoco
# es exacto. ¿Es un error de posiciones? ¿Por qué no basta con guardar las claves sin girar? ¿Qué
# harías para generar textos largos con este escalado? · [en] With dynamic NTK, the model's cache
# stops matching the recomputation as soon as the sequence goes past $L_0$, and `keys="raw"` gets
# much closer but is not exact either. Is it a position bug? Why is storing unrotated keys not
# enough? What would you do to generate long texts with this scaling?

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] No es un error de posiciones: cada clave se giró con su posición correcta, pero con las
# frecuencias de la longitud que había cuando entró. El recálculo completo usa en cada paso las
# frecuencias de la longitud actual para todo, así que en cada paso es, en rigor, otro modelo.
# Guardar las claves sin girar y girarlas de nuevo arregla la primera capa, pero no las
# siguientes: las claves y los valores de la capa 2 salen de estados ocultos que la atención de la
# capa 1 calculó con las frecuencias de entonces. Solo recalcularlo todo en cada paso reproduce
# exactamente el modelo, con un coste cuadrático. En la práctica (Hugging Face) se acepta la
# diferencia y se guardan las claves giradas: la generación sigue siendo lineal por paso y la
# diferencia es pequeña frente a lo que ya cambia el propio escalado. Lo que no se debe hacer es
# evaluar la pérdida con la caché y decir que es la del recálculo.
#
# [en] It is not a position bug: each key was rotated with its right position, but with the
# frequencies of the length there was when it came in. Full recomputation uses, at each step, the
# frequencies of the current length for everything, so strictly speaking it is a different model
# at each step. Storing unrotated keys and rotating them again fixes the first layer, but not the
# next ones: the keys and values of layer 2 come from hidden states that layer 1's attention
# computed with the frequencies of that time. Only recomputing everything at each step reproduces
# the model exactly, at a quadratic cost. In practice (Hugging Face) the difference is accepted
# and rotated keys are cached: generation stays linear per step and the difference is small next
# to what the scaling itself already changes. What one must not do is evaluate the loss with the
# cache and report it as the recomputation's.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part7-md", "locked": true}
# ## 7. Memoria y tiempo / Memory and time
#
# **[es]** La caché guarda, en cada capa, una clave y un valor de anchura `n_embd` por token (las
# $H$ cabezas de $d_h$ dimensiones, $H d_h = $ `n_embd`). Escribe `kv_cache_bytes`: los bytes que
# ocupa para `batch` secuencias de `length` tokens. Luego lo comparamos con lo que ocupa de verdad
# una caché llena y medimos cuánto tarda generar con y sin caché.
#
# **[en]** In every layer the cache stores one key and one value of width `n_embd` per token (the
# $H$ heads of $d_h$ dimensions, $H d_h = $ `n_embd`). Write `kv_cache_bytes`: the bytes it takes
# for `batch` sequences of `length` tokens. Then we compare it with what a filled cache really
# takes and measure how long generating takes with and without the cache.


# %% nbgrader={"grade_id": "kv-bytes", "solution": true}
def kv_cache_bytes(n_layer: int, n_embd: int, length: int, batch: int = 1, bytes_per_value: int = 4) -> int:
    """Bytes of the keys and values of `batch` sequences of `length` tokens, all layers."""
    ### BEGIN SOLUTION
    return 2 * n_layer * batch * length * n_embd * bytes_per_value
    ### END SOLUTION


# %% nbgrader={"grade_id": "kv-bytes-check", "locked": true}
cache = KVCache(rope_model.config.n_layer)
with torch.no_grad():
    rope_model(idx, cache=cache)
measured = sum(t.numel() * t.element_size() for t in cache.keys + cache.values)
print("medido / measured:", measured, "B; fórmula / formula:", kv_cache_bytes(2, 64, T, batch=2), "B")
llama = kv_cache_bytes(32, 4096, 4096, bytes_per_value=2)
print(f"Llama-2-7B, 4096 tokens, bfloat16: {llama / 2**30:.2f} GiB "
      f"({llama / 4096 / 2**20:.2f} MiB por token / per token)")

# %% nbgrader={"grade": true, "grade_id": "test-kv-bytes", "locked": true, "points": 2}
assert kv_cache_bytes(2, 64, T, batch=2) == measured, "kv_cache_bytes no coincide con los bytes medidos / kv_cache_bytes does not match the measured bytes"
assert kv_cache_bytes(32, 4096, 4096, bytes_per_value=2) == 2**31, "32 capas, anchura 4096, 4096 posiciones en 16 bits: 2 GiB / 32 layers, width 4096, 4096 positions in 16 bits: 2 GiB"
### BEGIN HIDDEN TESTS
assert kv_cache_bytes(4, 128, 1024) == 4 * 2**20
assert kv_cache_bytes(1, 8, 3, batch=5, bytes_per_value=2) == 2 * 8 * 3 * 5 * 2
### END HIDDEN TESTS

# %% nbgrader={"grade_id": "timing", "locked": true}
lengths = [sized(full=128, test=16), sized(full=256, test=32), sized(full=512, test=48)]
seconds = {True: [], False: []}
start_token = idx[:1, :1]
for n in lengths:
    for use_cache in (True, False):
        tick = time.perf_counter()
        generate(rope_model, start_token, n, temperature=0, use_cache=use_cache)
        seconds[use_cache].append(time.perf_counter() - tick)
for n, with_cache, without in zip(lengths, seconds[True], seconds[False], strict=True):
    print(f"{n:>4} tokens: con caché / with cache {with_cache:6.2f} s, "
          f"sin caché / without {without:6.2f} s (x{without / with_cache:.1f})")
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(lengths, seconds[True], "o-", label="con caché / with cache")
ax.plot(lengths, seconds[False], "s-", label="sin caché / without cache")
ax.set_xlabel("tokens generados / generated tokens")
ax.set_ylabel("segundos / seconds")
ax.legend()
save_figure(fig, "18_03_generation_time")
plt.show()
print(f"laboratorio / lab: {time.perf_counter() - LAB_START:.0f} s")
