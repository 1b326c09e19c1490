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
# # Laboratorio 19.01 · El Mini-GPT de principio a fin
# *Lab 19.01 · The Mini-GPT end to end*
#
# **[es]** En este laboratorio conectas tus codificaciones de la Fase 17 al Mini-GPT, cada una por
# su nombre, y mides lo que cuestan. Cuentas los parámetros con una fórmula y la compruebas con el
# modelo, generas token a token con la caché KV y compruebas que da los mismos *logits* que la
# pasada completa, mides la memoria de las tablas y del sesgo de atención, y entrenas brevemente un
# modelo con cada codificación para comparar pérdida y velocidad.
#
# **[en]** In this lab you plug your Phase 17 encodings into the Mini-GPT, each one by its name,
# and measure what they cost. You count the parameters with a formula and check it against the
# model, generate token by token with the KV cache and check that it gives the same logits as the
# full pass, measure the memory of the tables and of the attention bias, and briefly train a model
# with each encoding to compare loss and speed.
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/19/01-mini-gpt.md` · `docs_en/19/01-mini-gpt.md`.
# 2. Este laboratorio no añade archivos: usa tus `sinusoidal.py`, `learned.py`, `rope.py`,
#    `alibi.py` y `relative_bias.py` (lecciones 17.01 a 17.05). / This lab adds no file: it uses
#    your `sinusoidal.py`, `learned.py`, `rope.py`, `alibi.py` and `relative_bias.py` (lessons
#    17.01 to 17.05).
# 3. Comprueba que encajan en el modelo / check that they plug into the model:
#    `make check LAB=19.01`.
# 4. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Entrenar los seis
#    modelos lleva unos minutos en dos núcleos. / Training the six models takes a few minutes on
#    two cores.

# %% nbgrader={"grade_id": "setup", "locked": true}
import dataclasses
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch

from minimodel.checkpoint import load_checkpoint
from minimodel.data import load_data
from minimodel.encodings import COURSE as ENCODINGS  # the course's own encodings
from minimodel.evaluate import allow_length
from minimodel.hooks import Bias, Embed, Rotate
from minimodel.implementation import resolve
from minimodel.kv_cache import KVCache
from minimodel.labkit import reload_edited_modules, save_figure, sized
from minimodel.model import GPT, GPTConfig
from minimodel.train import TrainConfig, train

LAB_START = time.perf_counter()
# The test run's models are tiny: a second thread only adds waiting.
torch.set_num_threads(sized(full=torch.get_num_threads(), test=1))
print("Codificaciones de / encodings from:", resolve())
print("ENCODINGS =", ENCODINGS)

data = load_data("stdlib")  # the Python standard library's sources, character by character
# The lesson's model: 4 layers, width 128, 4 heads, trained at 128 tokens.
LESSON = GPTConfig(vocab_size=data.vocab_size, block_size=128, n_layer=4, n_head=4, n_embd=128)
print("vocab_size =", data.vocab_size)

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. Cuántos parámetros / How many parameters
#
# **[es]** Escribe `expected_parameters(config)`: el número de parámetros del Mini-GPT descrito
# por `config`, con la fórmula de la lección,
# $N_{\text{params}} = V C + N\,(12 C^2 + 2 C) + C + N_{\text{pos}}$, donde $N_{\text{pos}}$
# depende de `config.positional` (la tabla aprendida tiene `block_size` filas; T5,
# `t5_num_buckets` escalares por cabeza). Sin construir el modelo: solo con los campos de
# `config` (suponemos `bias=False`, el valor por defecto).
#
# **[en]** Write `expected_parameters(config)`: the number of parameters of the Mini-GPT described
# by `config`, with the lesson's formula,
# $N_{\text{params}} = V C + N\,(12 C^2 + 2 C) + C + N_{\text{pos}}$, where $N_{\text{pos}}$
# depends on `config.positional` (the learned table has `block_size` rows; T5 has
# `t5_num_buckets` scalars per head). Without building the model: only from the fields of
# `config` (assume `bias=False`, the default).


# %% nbgrader={"grade_id": "parameters", "solution": true}
def expected_parameters(config: GPTConfig) -> int:
    """Trainable parameters of GPT(config), tied embeddings counted once (bias=False)."""
    ### BEGIN SOLUTION
    V, C, N, H = config.vocab_size, config.n_embd, config.n_layer, config.n_head
    total = V * C + N * (12 * C * C + 2 * C) + C
    if config.positional == "learned":
        total += config.block_size * C
    elif config.positional == "t5":
        total += config.t5_num_buckets * H
    return total
    ### END SOLUTION


# %% nbgrader={"grade_id": "parameters-table", "locked": true}
counted = {}
for name in ENCODINGS:
    config = dataclasses.replace(LESSON, positional=name)
    counted[name] = (expected_parameters(config), GPT(config).num_parameters())
print(f"{'':<12}{'fórmula / formula':>18}{'modelo / model':>16}")
for name, (formula, model_count) in counted.items():
    print(f"{name:<12}{formula:>18,}{model_count:>16,}")

# %% nbgrader={"grade": true, "grade_id": "test-parameters", "locked": true, "points": 3}
for name, (formula, model_count) in counted.items():
    assert formula == model_count, f"{name}: la fórmula da {formula} y el modelo {model_count} / {name}: the formula gives {formula} and the model {model_count}"
assert counted["none"][0] == 800_128, "sin codificación: V C + N (12 C^2 + 2 C) + C con V=98, C=128, N=4 / no encoding: V C + N (12 C^2 + 2 C) + C with V=98, C=128, N=4"
assert counted["learned"][0] - counted["none"][0] == 128 * 128, "learned añade block_size * C parámetros / learned adds block_size * C parameters"
### BEGIN HIDDEN TESTS
for name in ENCODINGS:
    other = GPTConfig(
        vocab_size=50, block_size=40, n_layer=3, n_head=6, n_embd=48, positional=name,
        t5_num_buckets=16, max_len=64,
    )
    assert expected_parameters(other) == GPT(other).num_parameters(), name
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. Cada codificación por su nombre, y la caché KV / Each encoding by name, and the KV cache
#
# **[es]** `GPTConfig(positional=nombre)` basta para cambiar de codificación; el modelo importa tu
# archivo de `minimodel.positional` y lo conecta a uno de los tres puntos de enganche. Escribe
# `cached_logits(model, idx, prompt_len)`: pasa los `prompt_len` primeros tokens de `idx` de una
# vez a través de una `KVCache` nueva (el llenado) y luego el resto de uno en uno, como al generar;
# devuelve los *logits* de todas las posiciones concatenados, forma `(B, T, V)`. Sin gradientes.
#
# **[en]** `GPTConfig(positional=name)` is all it takes to change the encoding; the model imports
# your file from `minimodel.positional` and plugs it into one of the three hooks. Write
# `cached_logits(model, idx, prompt_len)`: feed the first `prompt_len` tokens of `idx` at once
# through a new `KVCache` (the prefill), then the rest one at a time, as when generating; return
# the logits of every position concatenated, shape `(B, T, V)`. No gradients.


# %% nbgrader={"grade_id": "cached", "solution": true}
def cached_logits(model: GPT, idx: torch.Tensor, prompt_len: int) -> torch.Tensor:
    """Logits (B, T, V) of idx (B, T): a prefill of prompt_len tokens, then one token per step."""
    ### BEGIN SOLUTION
    cache = KVCache(model.config.n_layer)
    with torch.no_grad():
        chunks = [model(idx[:, :prompt_len], cache=cache)[0]]
        for t in range(prompt_len, idx.size(1)):
            chunks.append(model(idx[:, t : t + 1], cache=cache)[0])
    return torch.cat(chunks, dim=1)
    ### END SOLUTION


# %% nbgrader={"grade_id": "cached-check", "locked": true}
def hook_of(model: GPT) -> str:
    """Which of the three hooks the model's encoding uses."""
    hooks = model.hooks
    if isinstance(hooks, Embed):
        return "1 · entrada / input"
    if isinstance(hooks, Rotate):
        return "2 · q, k"
    if isinstance(hooks, Bias):
        return "3 · logits"
    return "ninguno / none"


SMALL = GPTConfig(vocab_size=data.vocab_size, block_size=64, n_layer=2, n_head=4, n_embd=64)
idx = torch.randint(1, data.vocab_size, (2, 36), generator=torch.Generator().manual_seed(0))
differences = {}
for name in ENCODINGS:
    torch.manual_seed(0)
    model = GPT(dataclasses.replace(SMALL, positional=name)).eval()
    with torch.no_grad():
        full = model(idx)[0]
    cached = cached_logits(model, idx, prompt_len=20)
    differences[name] = (cached - full).abs().max().item()
    print(f"{name:<12}{hook_of(model):<22} max |cached - full| = {differences[name]:.1e}")

# %% nbgrader={"grade": true, "grade_id": "test-cached", "locked": true, "points": 3}
torch.manual_seed(0)
check_model = GPT(dataclasses.replace(SMALL, positional="rope")).eval()
assert cached_logits(check_model, idx, 20).shape == (2, 36, data.vocab_size), "forma / shape (B, T, V)"
for name, difference in differences.items():
    assert difference < 2e-5, f"{name}: los logits con caché no coinciden / cached logits differ"
### BEGIN HIDDEN TESTS
short = torch.randint(1, data.vocab_size, (3, 17), generator=torch.Generator().manual_seed(5))
for name in ("sinusoidal", "alibi", "t5"):
    torch.manual_seed(1)
    m = GPT(dataclasses.replace(SMALL, positional=name)).eval()
    with torch.no_grad():
        want = m(short)[0]
    for prompt_len in (1, 9, 17):
        got = cached_logits(m, short, prompt_len)
        assert got.shape == want.shape and torch.allclose(got, want, atol=2e-5), (name, prompt_len)
        assert not got.requires_grad
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. Memoria / Memory
#
# **[es]** Escribe `encoding_memory(model, length)`: los bytes que necesita la codificación del
# modelo, en un diccionario con tres entradas. `"parameters"`: los parámetros de `model.hooks`;
# `"tables"`: sus *buffers* (las tablas precalculadas); `"bias"`: el sesgo de atención de una
# pasada sobre `length` tokens (`model.hooks.attention_bias(length, length)`; 0 si es `None`).
# Cuenta los bytes con `numel()` y `element_size()`.
#
# **[en]** Write `encoding_memory(model, length)`: the bytes the model's encoding needs, in a
# dictionary with three entries. `"parameters"`: the parameters of `model.hooks`; `"tables"`: its
# buffers (the precomputed tables); `"bias"`: the attention bias of one pass over `length` tokens
# (`model.hooks.attention_bias(length, length)`; 0 when it is `None`). Count bytes with `numel()`
# and `element_size()`.


# %% nbgrader={"grade_id": "memory", "solution": true}
def encoding_memory(model: GPT, length: int) -> dict[str, int]:
    """Bytes of the encoding's parameters, tables (buffers) and per-pass bias at `length`."""
    ### BEGIN SOLUTION
    hooks = model.hooks
    parameters = sum(p.numel() * p.element_size() for p in hooks.parameters())
    tables = sum(b.numel() * b.element_size() for b in hooks.buffers())
    bias = hooks.attention_bias(length, length)
    per_pass = 0 if bias is None else bias.numel() * bias.element_size()
    return {"parameters": parameters, "tables": tables, "bias": per_pass}
    ### END SOLUTION


# %% nbgrader={"grade_id": "memory-table", "locked": true}
lesson_models = {name: GPT(dataclasses.replace(LESSON, positional=name)) for name in ENCODINGS}
memory = {name: encoding_memory(m, 1024) for name, m in lesson_models.items()}
print(f"{'':<12}{'parámetros / parameters':>24}{'tablas / tables':>17}{'sesgo / bias (T=1024)':>23}")
for name, found in memory.items():
    print(f"{name:<12}{found['parameters']:>24,}{found['tables']:>17,}{found['bias']:>23,}")

lengths = [128, 256, 512, 1024, 2048][: sized(full=5, test=3)]
fig, ax = plt.subplots(figsize=(6.5, 4))
for name in ("sinusoidal", "learned", "rope", "alibi", "t5"):
    totals = [sum(encoding_memory(lesson_models[name], L).values()) for L in lengths]
    ax.plot(lengths, totals, marker="o", label=name)
ax.set_xscale("log", base=2)
ax.set_yscale("log", base=2)
ax.set_xlabel("longitud de la pasada / length of the pass")
ax.set_ylabel("bytes")
ax.set_title("Memoria de la codificación / memory of the encoding")
ax.legend()
save_figure(fig, "19_01_memory")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-memory", "locked": true, "points": 2}
C, H, MAX_LEN = LESSON.n_embd, LESSON.n_head, LESSON.max_len
assert set(memory["none"]) == {"parameters", "tables", "bias"}, "tres entradas / three entries"
assert memory["none"] == {"parameters": 0, "tables": 0, "bias": 0}, "none no guarda parámetros, tablas ni sesgo / none stores no parameters, tables or bias"
assert memory["sinusoidal"]["tables"] == MAX_LEN * C * 4, "sinusoidal: una tabla max_len x C en float32 / sinusoidal: a max_len x C float32 table"
assert memory["learned"]["parameters"] == 128 * C * 4, "learned: block_size x C parámetros en float32 / learned: block_size x C float32 parameters"
assert memory["alibi"]["bias"] == H * 1024**2 * 4, "alibi: un sesgo H x T x T en float32 / alibi: an H x T x T float32 bias"
### BEGIN HIDDEN TESTS
assert memory["rope"]["tables"] == (2 * MAX_LEN + 1) * (C // H // 2) * 4
assert memory["t5"] == {"parameters": 32 * H * 4, "tables": 0, "bias": H * 1024**2 * 4}
assert memory["alibi"]["tables"] == H * 4 and memory["alibi"]["parameters"] == 0
assert encoding_memory(lesson_models["t5"], 100)["bias"] == H * 100 * 100 * 4
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. Un entrenamiento breve con cada codificación / A brief training run with each encoding
#
# **[es]** Seis modelos, iguales salvo la codificación: mismos datos, misma semilla y, por tanto,
# mismos pesos iniciales fuera de `hooks`. Con el tamaño por defecto son 300 pasos de 16 secuencias
# de 128 caracteres, unos minutos en total. En la ejecución de prueba (`MINIMODEL_LAB_SIZE=test`)
# el modelo es diminuto y apenas se entrena: sus números no significan nada.
#
# **[en]** Six models, identical except for the encoding: same data, same seed and hence the same
# initial weights outside `hooks`. At the default size this is 300 steps of 16 sequences of 128
# characters, a few minutes in all. In the test run (`MINIMODEL_LAB_SIZE=test`) the model is tiny
# and barely trained: its numbers mean nothing.

# %% nbgrader={"grade_id": "train", "locked": true}
MODEL = GPTConfig(
    vocab_size=data.vocab_size,
    block_size=sized(full=128, test=64),
    n_layer=sized(full=4, test=2),
    n_head=4,
    n_embd=sized(full=128, test=64),
)
TRAINING = TrainConfig(
    steps=sized(full=300, test=6),
    batch_size=sized(full=16, test=4),
    warmup=sized(full=30, test=2),
    seed=0,
    checkpoint_every=0,
    eval_sequences=sized(full=16, test=4),
)
runs = Path(tempfile.mkdtemp(prefix="lab19_01_"))  # checkpoints only to read the loss history
trained = {}
for name in ENCODINGS:
    result = train(
        dataclasses.replace(MODEL, positional=name),
        TRAINING,
        data,
        out=runs / name,
        label=f"{name:<11}",
    )
    history = load_checkpoint(runs / name / "checkpoint.pt")["loss_history"]
    trained[name] = {**result, "history": history}

print(f"{'':<12}{'parámetros':>11}{'pérdida val.':>14}{'tokens/s':>10}{'s':>7}")
print(f"{'':<12}{'parameters':>11}{'val. loss':>14}{'':>10}{'':>7}")
for name, r in trained.items():
    print(
        f"{name:<12}{r['model'].num_parameters():>11,}{r['val_loss']:>14.4f}"
        f"{r['tokens_per_s']:>10,.0f}{r['seconds']:>7.1f}"
    )

fig, ax = plt.subplots(figsize=(7, 4))
window = sized(full=20, test=2)
for name, r in trained.items():
    smooth = np.convolve(r["history"], np.ones(window) / window, mode="valid")
    ax.plot(np.arange(len(smooth)) + window, smooth, label=name)
ax.set_xlabel("paso / step")
ax.set_ylabel(f"pérdida (media de {window} pasos) / loss (mean of {window} steps)")
ax.set_title(f"Entrenamiento a T = {MODEL.block_size} / training at T = {MODEL.block_size}")
ax.legend()
save_figure(fig, "19_01_training")
plt.show()

# %% [markdown] nbgrader={"grade_id": "part5-md", "locked": true}
# ## 5. Tiempo, medido con cuidado / Time, measured carefully
#
# **[es]** Los tokens por segundo del entrenamiento se midieron uno detrás de otro: si la máquina
# estaba ocupada durante uno de ellos, ese sale perjudicado. Aquí repetimos la medida intercalando
# las codificaciones por rondas (como las medidas de tiempo de la lección) y nos quedamos con la
# ronda más rápida de cada una, a la longitud de entrenamiento y a cuatro veces esa longitud.
#
# **[en]** The training tokens per second were measured one after another: if the machine was
# busy during one of them, that one suffers. Here we repeat the measurement interleaving the
# encodings in rounds (as the lesson's timings do) and keep each one's fastest round, at the
# training length and at four times that length.

# %% nbgrader={"grade_id": "timing", "locked": true}
def step_seconds(length: int, rounds: int, batch_size: int = 4) -> dict[str, float]:
    """Fastest forward + backward (seconds) of each encoding's trained model, interleaved."""
    x = torch.randint(1, data.vocab_size, (batch_size, length))
    models = {}
    for name, r in trained.items():
        models[name] = allow_length(r["model"], length)  # a longer table for learned
    best = {name: float("inf") for name in models}
    for _ in range(rounds):
        for name, model in models.items():
            start = time.perf_counter()
            _, loss = model(x, x)
            loss.backward()
            best[name] = min(best[name], time.perf_counter() - start)
            model.zero_grad(set_to_none=True)
    return best


timings = {}
for factor in (1, 4):
    timings[factor] = step_seconds(factor * MODEL.block_size, rounds=sized(full=5, test=1))
print(f"{'':<12}" + "".join(f"{f'{f}x: ms':>10}{'x none':>8}" for f in timings))
for name in ENCODINGS:
    cells = "".join(
        f"{1e3 * t[name]:>10.1f}{t[name] / t['none']:>8.2f}" for t in timings.values()
    )
    print(f"{name:<12}{cells}")
print(f"Laboratorio completo / whole lab: {time.perf_counter() - LAB_START:.0f} s")

# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] La codificación sinusoidal no tiene ni un parámetro y, sin
# embargo, sus tablas ocupan más que la tabla aprendida. ¿Por qué? ¿Qué cambiaría si la calculara
# sobre la marcha en cada pasada? · [en] The sinusoidal encoding has not a single parameter, and
# yet its tables take more memory than the learned table. Why? What would change if it were
# computed on the fly at every pass?

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] La tabla sinusoidal se precalcula para `max_len` = 8192 posiciones, para poder evaluar y
# generar mucho más allá de la longitud de entrenamiento; la aprendida solo tiene `block_size` =
# 128 filas, porque no puede tener más filas útiles que posiciones vistas. Son $8192 \cdot 128
# \cdot 4$ B = 4 MiB frente a 64 KiB. Es memoria fija (no crece con el lote ni se guarda en el
# punto de control). Calcularla sobre la marcha ahorraría esa memoria a cambio de unos senos y
# cosenos por pasada, $T \cdot C$ de ellos: poco tiempo comparado con los bloques, pero repetido
# en cada paso de generación. Con un contexto corto se podría reducir `max_len`.
#
# [en] The sinusoidal table is precomputed for `max_len` = 8192 positions, so that the model can
# be evaluated and generate far beyond the training length; the learned one only has
# `block_size` = 128 rows, since it cannot have more useful rows than positions seen. That is
# $8192 \cdot 128 \cdot 4$ B = 4 MiB against 64 KiB. It is fixed memory (it does not grow with
# the batch and is not saved in the checkpoint). Computing it on the fly would save that memory
# in exchange for some sines and cosines per pass, $T \cdot C$ of them: little time compared with
# the blocks, but repeated at every generation step. With a short context, `max_len` could simply
# be reduced.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] Según tus medidas de la parte 5, ¿qué codificaciones cuestan
# más tiempo que `none` y por qué? ¿Cómo cambia la diferencia de $1\times$ a $4\times$ la
# longitud, y qué esperarías con un modelo mucho más ancho? · [en] According to your part 5
# measurements, which encodings cost more time than `none`, and why? How does the difference
# change from $1\times$ to $4\times$ the length, and what would you expect with a much wider
# model?

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Las de entrada (sinusoidal, aprendida) cuestan una suma por pasada y quedan a la par de
# `none`, dentro del ruido. RoPE gira consultas y claves en cada capa: algo más, proporcional a
# $T \cdot C$. ALiBi y T5 son las más caras: el sesgo explícito obliga a SDPA a abandonar su ruta
# causal (calcula todos los bloques de la matriz de atención, no solo la mitad inferior, y lee un
# sesgo de $H \cdot T^2$ números), y T5 además calcula las cubetas y, al entrenar, el gradiente
# del sesgo. Como esos costes son cuadráticos en $T$ y el resto del modelo es lineal, la
# diferencia crece de $1\times$ a $4\times$. Con un modelo mucho más ancho, las capas lineales
# ($\propto T C^2$) pesan más que la atención ($\propto T^2 C$) a la misma longitud, y los
# cocientes se acercan a 1; con contextos largos vuelve a dominar la atención.
#
# [en] The input encodings (sinusoidal, learned) cost one addition per pass and stay level with
# `none`, within the noise. RoPE rotates queries and keys in every layer: a little more,
# proportional to $T \cdot C$. ALiBi and T5 are the most expensive: the explicit bias forces SDPA
# off its causal path (it computes every block of the attention matrix, not only the lower half,
# and reads a bias of $H \cdot T^2$ numbers), and T5 also computes the buckets and, in training,
# the bias's gradient. Since those costs are quadratic in $T$ and the rest of the model is
# linear, the gap grows from $1\times$ to $4\times$. With a much wider model, the linear layers
# ($\propto T C^2$) weigh more than attention ($\propto T^2 C$) at the same length and the ratios
# get closer to 1; with long contexts attention dominates again.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "q3", "locked": true}
# **Pregunta 3 / Question 3.** [es] Después de este entrenamiento breve, ¿qué puedes concluir de
# las pérdidas de validación a la longitud de entrenamiento? ¿Te dicen qué codificación
# extrapola mejor a secuencias más largas? · [en] After this brief training run, what can you
# conclude from the validation losses at the training length? Do they tell you which encoding
# extrapolates best to longer sequences?

# %% [markdown] nbgrader={"grade_id": "q3-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Poco. Es una sola semilla, 300 pasos y 16 secuencias de validación: diferencias de unas
# centésimas pueden ser ruido, y un modelo tan poco entrenado todavía está aprendiendo lo local
# (qué carácter sigue a cuál), donde todas las codificaciones se parecen. Lo más fiable suele ser
# que el modelo sin codificación (`none`) queda algo peor: solo tiene la máscara causal para
# saber dónde está. Y la pérdida a la longitud de entrenamiento no dice nada de lo que pasa más
# allá: eso hay que medirlo evaluando con secuencias más largas, posición a posición, con varias
# semillas (lección 19.02).
#
# [en] Little. It is a single seed, 300 steps and 16 validation sequences: differences of a few
# hundredths may be noise, and such a briefly trained model is still learning local structure
# (which character follows which), where all encodings look alike. The most reliable observation
# is usually that the model without an encoding (`none`) is somewhat worse: it only has the
# causal mask to know where it is. And the loss at the training length says nothing about what
# happens beyond it: that has to be measured by evaluating on longer sequences, position by
# position, with several seeds (lesson 19.02).
# ### END SOLUTION
