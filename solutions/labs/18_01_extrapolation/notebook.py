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
# # Laboratorio 18.01 · Extrapolación: entrenar corto, evaluar largo
# *Lab 18.01 · Extrapolation: train short, test long*
#
# **[es]** Entrenas seis Mini-GPT, uno por codificación, con secuencias de 64 caracteres, y los
# evalúas con secuencias de hasta 8 veces esa longitud. No te quedas con una pérdida media: miras
# la pérdida en cada posición, la resumes por tramos que doblan su longitud y localizas dónde se
# rompe cada modelo. Después compruebas que el contexto corto no cambia, mides con una tarea de
# recuperación (una clave escondida a distinta profundidad) si los modelos *usan* el contexto
# largo, y mides cuánto cuesta evaluarlo.
#
# **[en]** You train six Mini-GPTs, one per encoding, on sequences of 64 characters, and evaluate
# them on sequences of up to 8 times that length. You do not settle for a mean loss: you look at
# the loss at each position, summarise it in buckets that double in length, and locate where each
# model breaks. Then you check that the short context does not change, measure with a retrieval
# task (a key hidden at different depths) whether the models *use* the long context, and measure
# what evaluating it costs.
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/18/01-extrapolation.md` ·
#    `docs_en/18/01-extrapolation.md`.
# 2. Completa / complete `doubling_buckets`, `bucket_means`, `failure_position` y/and
#    `needle_distance` en/in `src/minimodel/positional/extrapolation.py`.
# 3. Comprueba tu código / check your code: `make check LAB=18.01`.
# 4. Este cuaderno usa tus codificaciones de la Fase 17. Entrenar los modelos lleva unos minutos
#    en dos núcleos; los puntos de control se guardan en `build/lab_runs/` y la segunda vez se
#    reutilizan. / This notebook uses your Phase 17 encodings. Training the models takes a few
#    minutes on two cores; the checkpoints are saved in `build/lab_runs/` and reused the second
#    time.
# 5. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Las celdas marcadas
#    `TU CÓDIGO` / `YOUR CODE` son tuyas; las de pruebas están bloqueadas.

# %% nbgrader={"grade_id": "setup", "locked": true}
import dataclasses
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from minimodel.data import load_data
from minimodel.encodings import COURSE as ENCODINGS  # the course's own encodings
from minimodel.evaluate import allow_length, retrieval_by_depth, token_losses
from minimodel.implementation import REPO_ROOT
from minimodel.labkit import lab_size, reload_edited_modules, save_figure, sized
from minimodel.model import GPT, GPTConfig
from minimodel.positional.extrapolation import (
    bucket_means,
    doubling_buckets,
    failure_position,
    needle_distance,
)
from minimodel.train import TrainConfig, train

np.set_printoptions(precision=3, suppress=True)
torch.set_printoptions(precision=3, sci_mode=False)
LAB_START = time.perf_counter()
T = 64  # training length of the text models
FACTORS = (1, 2, 4, 8)


def run_folder(name: str):
    """Where a model's checkpoint is kept at the student's size (None in the test run)."""
    return REPO_ROOT / "build" / "lab_runs" / f"18_01_{name}" if lab_size() == "full" else None

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. Medir por posición / Measuring by position
#
# **[es]** Antes de tocar un modelo, prueba tus funciones con una curva inventada: pérdida $1.2$
# hasta la posición $T$ y $2.0$ después (un escalón), evaluada a $8T$. Las cubetas doblan su
# longitud, $[0, T), [T, 2T), [2T, 4T), [4T, 8T)$; `failure_position` compara una media hacia atrás
# de `window` posiciones con la pérdida de referencia en $[T/2, T)$; `needle_distance` dice a qué
# distancia está la clave en la tarea de recuperación.
#
# **[en]** Before touching a model, test your functions on a made-up curve: loss $1.2$ up to
# position $T$ and $2.0$ after it (a step), evaluated at $8T$. The buckets double in length,
# $[0, T), [T, 2T), [2T, 4T), [4T, 8T)$; `failure_position` compares a trailing mean of `window`
# positions with the reference loss over $[T/2, T)$; `needle_distance` tells how far the key is
# in the retrieval task.

# %% nbgrader={"grade_id": "synthetic", "locked": true}
step = torch.cat([torch.full((T,), 1.2), torch.full((7 * T,), 2.0)])
spans = doubling_buckets(T, 8 * T)
print("cubetas / buckets:", spans)
print("medias / means:", bucket_means(step, spans))
print("media de todo / overall mean:", round(step.mean().item(), 4))
print("fallo / failure (tolerance 0.1, window 20):", failure_position(step, T, tolerance=0.1, window=20))
print("distancia de la clave / key distance, length 256:",
      {d: needle_distance(256, d) for d in (0.0, 0.5, 1.0)})

# %% nbgrader={"grade": true, "grade_id": "test-measures", "locked": true, "points": 2}
assert spans == [(0, 64), (64, 128), (128, 256), (256, 512)], "doubling_buckets no da los tramos esperados / doubling_buckets does not give the expected spans"
assert torch.allclose(bucket_means(step, spans), torch.tensor([1.2, 2.0, 2.0, 2.0])), "bucket_means no da las medias esperadas / bucket_means does not give the expected means"
assert failure_position(step, T, tolerance=0.1, window=20) == 64 + 2, "el escalón a T = 64 se detecta en T + 2 (20 · 0.1 ÷ 0.8 = 2.5) / the step at T = 64 is found at T + 2 (20 · 0.1 ÷ 0.8 = 2.5)"
assert needle_distance(256, 0.0) == 249 and needle_distance(256, 1.0) == 5, "needle_distance(256, 0.0) debe ser 249 y needle_distance(256, 1.0), 5 / needle_distance(256, 0.0) must be 249 and needle_distance(256, 1.0), 5"
### BEGIN HIDDEN TESTS
assert doubling_buckets(100, 350) == [(0, 100), (100, 200), (200, 350)]
assert doubling_buckets(64, 10) == [(0, 10)]
nan = float("nan")
loss = torch.tensor([[1.0, 2.0, nan, 4.0], [nan, 2.0, 3.0, nan]])
got = bucket_means(loss, [(0, 2), (2, 4), (0, 4)])
assert torch.allclose(got, torch.tensor([5 / 3, 3.5, 2.4]))
assert failure_position(torch.full((90,), 3.0), 30, tolerance=0.0, window=5) is None
ramp = torch.cat([torch.ones(40), 1 + 0.01 * torch.arange(1, 81)])
assert failure_position(ramp, 40, tolerance=0.205, window=1) == 60
assert failure_position(ramp, 40, tolerance=0.205, window=11) == 65
assert needle_distance(512, 0.5) == 255 and needle_distance(18, 0.25, n_digits=3) == 11
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. Seis modelos entrenados con 64 caracteres / Six models trained on 64 characters
#
# **[es]** Los seis modelos son idénticos salvo por la codificación: 4 capas, anchura 128, 4
# cabezas, la misma semilla y los mismos lotes del código de la biblioteca estándar de Python (no
# se descarga nada). La tabla aprendida solo tiene 64 filas; para evaluar más lejos, `allow_length`
# le añade filas tal como se inicializaron, sin entrenar, que es lo que tendría una tabla más larga
# entrenada solo con secuencias cortas. En la ejecución de prueba (`MINIMODEL_LAB_SIZE=test`) los
# modelos son diminutos y apenas se entrenan: sus números no significan nada.
#
# **[en]** The six models are identical except for the encoding: 4 layers, width 128, 4 heads, the
# same seed and the same batches of the Python standard library's source code (nothing is
# downloaded). The learned table only has 64 rows; to evaluate further, `allow_length` appends
# rows as initialised, never trained, which is what a longer table trained only on short sequences
# would hold. In the test run (`MINIMODEL_LAB_SIZE=test`) the models are tiny and barely trained:
# their numbers mean nothing.

# %% nbgrader={"grade_id": "train", "locked": true}
data = load_data("stdlib")
TEXT_TRAINING = TrainConfig(
    steps=sized(full=600, test=8), batch_size=sized(full=16, test=4), warmup=sized(full=60, test=2)
)
models = {}
start = time.perf_counter()
for encoding in ENCODINGS:
    config = GPTConfig(
        vocab_size=data.vocab_size, block_size=T, n_layer=sized(full=4, test=2), n_head=4,
        n_embd=sized(full=128, test=32), positional=encoding,
    )
    result = train(config, TEXT_TRAINING, data, out=run_folder(encoding), resume=True,
                   progress=False)
    models[encoding] = result["model"]
    print(f"{encoding:<11} pérdida de validación a T / validation loss at T: {result['val_loss']:.3f}")
print(f"{time.perf_counter() - start:.0f} s")

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. La pérdida en cada posición / The loss at each position
#
# **[es]** Evaluamos cada modelo con las mismas secuencias de validación de $8T = 512$
# caracteres. Como la atención es causal, la pérdida en la posición $p$ solo depende de los
# caracteres $0, \dots, p$: una sola pasada a $8T$ da también lo que se mediría a $T$, $2T$ y $4T$
# con los mismos textos. La figura muestra la pérdida por posición (media sobre las secuencias,
# suavizada con una media hacia atrás de 32 posiciones); la tabla, tus cubetas.
#
# **[en]** We evaluate every model on the same validation sequences of $8T = 512$ characters.
# Since attention is causal, the loss at position $p$ only depends on characters $0, \dots, p$: a
# single pass at $8T$ also gives what would be measured at $T$, $2T$ and $4T$ on the same texts.
# The figure shows the loss by position (mean over the sequences, smoothed with a trailing mean of
# 32 positions); the table, your buckets.

# %% nbgrader={"grade_id": "per-position", "locked": true}
N_EVAL = sized(full=32, test=4)
x_long, y_long = data.eval_batch("val", N_EVAL, 8 * T)
losses = {}  # encoding -> (N_EVAL, 8T) loss of every prediction
for encoding, model in models.items():
    losses[encoding], _ = token_losses(allow_length(model, 8 * T), x_long, y_long, "cpu")
curves = {encoding: loss.nanmean(dim=0) for encoding, loss in losses.items()}  # (8T,)


def trailing_mean(curve: torch.Tensor, window: int) -> torch.Tensor:
    """Mean of the last `window` values at each position (fewer at the start)."""
    sums = torch.cumsum(curve, 0)
    shifted = torch.cat([torch.zeros(window), sums[:-window]])
    counts = torch.arange(1, len(curve) + 1).clamp(max=window)
    return (sums - shifted) / counts


spans = doubling_buckets(T, 8 * T)
print(f"{'':<11}" + "".join(f"{f'[{a},{b})':>11}" for a, b in spans))
table = {}
for encoding, loss in losses.items():
    table[encoding] = bucket_means(loss, spans)
    print(f"{encoding:<11}" + "".join(f"{v:11.3f}" for v in table[encoding].tolist()))

fig, ax = plt.subplots(figsize=(9, 4.5))
for encoding, curve in curves.items():
    ax.plot(trailing_mean(curve, 32), label=encoding, lw=1.3)
ax.axvline(T, color="gray", ls="--", lw=1)
ax.set_xscale("log", base=2)
ax.set_xlabel("posición / position")
ax.set_ylabel("pérdida, media de 32 / loss, mean of 32")
ax.set_title(f"Entrenados a T = {T} / trained at T = {T}")
ax.legend()
save_figure(fig, "18_01_loss_by_position")
plt.show()

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. Lo que esconde una media / What an average hides
#
# **[es]** Un informe típico da una sola cifra por longitud: la pérdida media sobre la ventana
# entera $[0, L)$. Calcula, para cada codificación y cada $L$ de `LENGTHS`, esa media
# (`window_mean`) y la de la mitad final de la ventana, $[L/2, L)$ (`last_half`), las dos a partir
# de `losses` y con tu `bucket_means`. Guarda cada una como un diccionario
# `codificación -> tensor (len(LENGTHS),)`.
#
# **[en]** A typical report gives one number per length: the mean loss over the whole window
# $[0, L)$. Compute, for each encoding and each $L$ in `LENGTHS`, that mean (`window_mean`) and
# the mean over the last half of the window, $[L/2, L)$ (`last_half`), both from `losses` and
# with your `bucket_means`. Store each as a dictionary `encoding -> tensor (len(LENGTHS),)`.

# %% nbgrader={"grade_id": "averages", "solution": true}
LENGTHS = [f * T for f in FACTORS]
### BEGIN SOLUTION
window_mean = {e: bucket_means(loss, [(0, L) for L in LENGTHS]) for e, loss in losses.items()}
last_half = {e: bucket_means(loss, [(L // 2, L) for L in LENGTHS]) for e, loss in losses.items()}
### END SOLUTION

# %% nbgrader={"grade_id": "averages-table", "locked": true}
print(f"{'':<11}" + "".join(f"{f'L = {L}':>16}" for L in LENGTHS))
for encoding in models:
    cells = [f"{w:6.3f} / {h:6.3f}" for w, h in zip(window_mean[encoding].tolist(),
                                                     last_half[encoding].tolist(), strict=True)]
    print(f"{encoding:<11}" + "".join(f"{c:>16}" for c in cells))
print("(media de [0, L) / media de [L/2, L))  ·  (mean over [0, L) / mean over [L/2, L))")

TOLERANCE, WINDOW = 0.2, 32
failures = {e: failure_position(curve, T, tolerance=TOLERANCE, window=WINDOW)
            for e, curve in curves.items()}
print(f"\nposición de fallo / failure position (+{TOLERANCE} nats, ventana / window {WINDOW}):")
for encoding, where in failures.items():
    print(f"  {encoding:<11}", "—" if where is None else f"{where} ({where / T:.2f} T)")

# %% nbgrader={"grade": true, "grade_id": "test-averages", "locked": true, "points": 2}
assert set(window_mean) == set(ENCODINGS) and set(last_half) == set(ENCODINGS), "debe haber una curva por codificación / there must be one curve per encoding"
assert all(v.shape == (4,) for v in window_mean.values()), "una media por L / one mean per L"
for encoding, loss in losses.items():
    assert torch.isclose(window_mean[encoding][0], loss[:, :T].nanmean()), f"{encoding}: el primer valor debe ser la media de las posiciones 0..T-1 / {encoding}: the first value must be the mean of positions 0..T-1"
    assert torch.isclose(last_half[encoding][-1], loss[:, 4 * T :].nanmean()), f"{encoding}: el último valor debe ser la media desde la posición 4T / {encoding}: the last value must be the mean from position 4T on"
### BEGIN HIDDEN TESTS
for encoding, loss in losses.items():
    for i, L in enumerate(LENGTHS):
        assert torch.isclose(window_mean[encoding][i], loss[:, :L].nanmean(), atol=1e-5)
        assert torch.isclose(last_half[encoding][i], loss[:, L // 2 : L].nanmean(), atol=1e-5)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] Elige una codificación que se rompa. Con los números de la
# tabla, explica por qué la media sobre $[0, L)$ sube mucho menos que la de $[L/2, L)$, y por qué
# una sola media por longitud no dice dónde se rompe el modelo. ¿Qué pasaría con la media si el
# fallo empezara en $T$ y evaluaras a $100\,T$? · [en] Pick an encoding that breaks. With the
# numbers in the table, explain why the mean over $[0, L)$ rises much less than the one over
# $[L/2, L)$, and why a single mean per length does not say where the model breaks. What would
# happen to the mean if the failure started at $T$ and you evaluated at $100\,T$?

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# [es] Con la sinusoidal, por ejemplo, la pérdida salta en cuanto se pasa de $T$, pero la media de
# $[0, 2T)$ incluye las $T$ primeras posiciones, donde el modelo va bien: si la pérdida vale $a$
# hasta $T$ y $b$ después, la media de $[0, L)$ es $a + (b - a)(L - T)/L$, solo la mitad del salto a
# $2T$, mientras que la de $[L/2, L)$ ya es $b$. Una media por longitud mezcla posiciones conocidas
# y desconocidas en una proporción que cambia con $L$: la misma cifra puede venir de un fallo
# pequeño en todas partes o de uno grande a partir de una posición, y no dice cuál. El punto de
# fallo (`failure_position`) y las cubetas sí lo dicen. A $100\,T$ la media se acercaría a $b$
# (el $99\,\%$ de las posiciones estaría roto), y el caso contrario también engaña: un modelo que
# falla solo en un tramo corto pasaría desapercibido en una ventana larga.
#
# [en] With sinusoidal, for instance, the loss jumps as soon as $T$ is passed, but the mean over
# $[0, 2T)$ includes the first $T$ positions, where the model does fine: if the loss is $a$ up to
# $T$ and $b$ after it, the mean over $[0, L)$ is $a + (b - a)(L - T)/L$, only half the jump at
# $2T$, while the mean over $[L/2, L)$ is already $b$. A mean per length mixes known and unknown
# positions in a proportion that changes with $L$: the same number can come from a small failure
# everywhere or a large one from some position on, and it does not say which. The failure point
# (`failure_position`) and the buckets do. At $100\,T$ the mean would approach $b$ ($99\,\%$ of the
# positions would be broken), and the opposite case misleads too: a model that fails only over a
# short stretch would go unnoticed in a long window.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part5-md", "locked": true}
# ## 5. El contexto corto no cambia / The short context does not change
#
# **[es]** Con atención causal, las primeras $T$ posiciones de una secuencia de $8T$ ven exactamente
# lo mismo que una secuencia de $T$: la pérdida en $[0, T)$ tiene que ser la misma, hasta el
# redondeo. Es una comprobación útil cuando se cambia algo para leer contextos largos. El NTK
# dinámico (lección 18.02) la incumple: sus frecuencias dependen de la longitud total, así que las
# primeras posiciones de una secuencia larga se giran de otra manera que en una corta.
#
# **[en]** With causal attention, the first $T$ positions of an $8T$ sequence see exactly the same
# as a sequence of $T$: the loss over $[0, T)$ must be the same, up to rounding. It is a useful
# check whenever something is changed to read long contexts. Dynamic NTK (lesson 18.02) breaks it:
# its frequencies depend on the total length, so the first positions of a long sequence are
# rotated differently from those of a short one.

# %% nbgrader={"grade_id": "retention", "locked": true}
short = {}
for encoding, model in models.items():
    loss, _ = token_losses(model, x_long[:, :T], y_long[:, :T], "cpu")
    short[encoding] = (loss - losses[encoding][:, :T]).abs().max().item()
    print(f"{encoding:<11} máx |Δ pérdida| en / max |Δ loss| over [0, T): {short[encoding]:.1e}")
try:
    rope = models["rope"]
    dynamic = GPT(dataclasses.replace(rope.config, rope_scaling="dynamic_ntk", rope_scaling_factor=1.0))
    dynamic.load_state_dict(rope.state_dict())
    dynamic.eval()
    at_8t, _ = token_losses(dynamic, x_long, y_long, "cpu")
    at_t, _ = token_losses(dynamic, x_long[:, :T], y_long[:, :T], "cpu")
    print(f"NTK dinámico / dynamic NTK: pérdida en / loss over [0, T) = {at_t.nanmean():.4f} "
          f"sola / alone, {at_8t[:, :T].nanmean():.4f} dentro de / inside 8T")
except NotImplementedError:
    print("[es] Completa dynamic_ntk_scaling (lección 18.02) para ver el contraejemplo.\n"
          "[en] Complete dynamic_ntk_scaling (lesson 18.02) to see the counterexample.")

# %% [markdown] nbgrader={"grade_id": "part6-md", "locked": true}
# ## 6. ¿Usa el contexto largo? Recuperación por profundidad / Does it use the long context? Retrieval by depth
#
# **[es]** Una pérdida plana no significa que el modelo aproveche lo que está lejos: en el código,
# casi todo se predice con lo cercano. La tarea `passkey` lo mide directamente: una clave de 5
# cifras aparece a una profundidad elegida dentro de un relleno aleatorio y hay que repetirla al
# final. Entrenamos cuatro modelos pequeños con secuencias de 32 tokens y medimos la fracción de
# claves copiadas enteras a $1\times$–$8\times$ y a cinco profundidades (0: al principio, lo más
# lejos; 1: justo antes de la pregunta). Con tu `needle_distance`, pasamos de profundidad a
# distancia y dibujamos el acierto frente a la distancia.
#
# **[en]** A flat loss does not mean the model makes use of what is far away: in code, almost
# everything is predicted from what is near. The `passkey` task measures it directly: a 5-digit
# key appears at a chosen depth inside random filler and must be repeated at the end. We train
# four small models on sequences of 32 tokens and measure the fraction of keys copied in full at
# $1\times$–$8\times$ and at five depths (0: at the start, farthest; 1: right before the question).
# With your `needle_distance`, we turn depth into distance and plot accuracy against distance.

# %% nbgrader={"grade_id": "passkey", "locked": true}
passkey = load_data("passkey")
T_KEY = 32
KEY_TRAINING = TrainConfig(
    steps=sized(full=1000, test=8), batch_size=sized(full=32, test=4), warmup=sized(full=100, test=2)
)
DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)
grid = {}
start = time.perf_counter()
for encoding in ("none", "rope", "alibi", "t5"):
    config = GPTConfig(
        vocab_size=passkey.vocab_size, block_size=T_KEY, n_layer=2, n_head=4,
        n_embd=sized(full=64, test=32), positional=encoding,
    )
    model = train(config, KEY_TRAINING, passkey, out=run_folder(f"passkey_{encoding}"),
                  resume=True, progress=False)["model"]
    rows = retrieval_by_depth(model, passkey, FACTORS, DEPTHS, n=sized(full=32, test=4))
    grid[encoding] = np.array([r["accuracy"] for r in rows]).reshape(len(FACTORS), len(DEPTHS))
    print(f"{encoding}: filas / rows = {[f * T_KEY for f in FACTORS]}, columnas / columns = {DEPTHS}")
    print(grid[encoding])
print(f"{time.perf_counter() - start:.0f} s")

fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for encoding, accuracy in grid.items():
    for row, factor in enumerate(FACTORS):
        distances = [needle_distance(factor * T_KEY, d) for d in DEPTHS]
        axes[0].plot(distances, accuracy[row], marker="o", ls="-" if factor == 1 else ":",
                     color=f"C{list(grid).index(encoding)}",
                     label=encoding if factor == 1 else None)
axes[0].axvline(T_KEY, color="gray", ls="--", lw=1)
axes[0].set_xscale("log", base=2)
axes[0].set_xlabel("distancia a la clave / distance to the key")
axes[0].set_ylabel("claves enteras / whole keys")
axes[0].set_title("1x: línea continua / solid; 2x-8x: punteada / dotted")
axes[0].legend()
image = axes[1].imshow(grid["alibi"], vmin=0, vmax=1, cmap="viridis", aspect="auto")
axes[1].set_xticks(range(len(DEPTHS)), [str(d) for d in DEPTHS])
axes[1].set_yticks(range(len(FACTORS)), [str(f * T_KEY) for f in FACTORS])
axes[1].set_xlabel("profundidad / depth")
axes[1].set_ylabel("longitud / length")
axes[1].set_title("alibi")
fig.colorbar(image, ax=axes[1])
save_figure(fig, "18_01_retrieval")
plt.show()

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] Compara lo que dicen la pérdida del texto (parte 3) y la
# recuperación (esta parte) de cada codificación más allá de su longitud de entrenamiento. ¿Puede
# un modelo tener una pérdida plana a $8T$ y no recuperar nada que esté lejos? ¿Qué parte del
# fallo es de la posición y cuál de otras cosas (la distancia a la clave, cuántos tokens de
# relleno compiten por la atención)? Sé prudente: son modelos diminutos y una sola semilla. ·
# [en] Compare what the text loss (part 3) and retrieval (this part) say about each encoding past
# its training length. Can a model have a flat loss at $8T$ and retrieve nothing that is far away?
# Which part of the failure is about position and which about other things (the distance to the
# key, how many filler tokens compete for attention)? Be careful: these are tiny models and a
# single seed.

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# [es] Sí. ALiBi suele tener la pérdida más plana del texto, porque su sesgo hace que cada token
# mire sobre todo a los cercanos, y en el código eso basta; pero ese mismo sesgo castiga a las
# claves lejanas, así que su recuperación cae con la distancia: tolera las secuencias largas, no
# las usa. Con RoPE el acierto es alto a $1\times$ y se hunde a $2\times$ incluso con la clave cerca
# de la pregunta: no es solo la distancia, sino que todo el patrón de atención aprendido (por
# ejemplo, localizar la marca entre $T$ tokens) deja de valer cuando hay más relleno y posiciones
# nuevas. Para separar las causas miramos el acierto frente a la distancia: si cae al pasar de la
# distancia $T$ es la posición; si cae a la misma distancia al alargar la secuencia, es el relleno
# que compite por la atención. Con modelos tan pequeños y una semilla, las diferencias pequeñas no
# significan nada; solo los saltos grandes y repetidos en varias profundidades.
#
# [en] Yes. ALiBi tends to have the flattest text loss, because its bias makes each token look
# mostly at nearby ones, and in code that is enough; but the same bias penalises far keys, so its
# retrieval drops with distance: it tolerates long sequences, it does not use them. With RoPE,
# accuracy is high at $1\times$ and collapses at $2\times$ even with the key close to the question:
# it is not only the distance, but the whole learnt attention pattern (for instance, finding the
# mark among $T$ tokens) stops working when there is more filler and new positions. To separate
# the causes we look at accuracy against distance: if it drops past distance $T$, it is position;
# if it drops at the same distance when the sequence gets longer, it is the filler competing for
# attention. With such small models and one seed, small differences mean nothing; only large jumps
# repeated across several depths do.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part7-md", "locked": true}
# ## 7. Memoria y tiempo / Memory and time
#
# **[es]** Evaluar más lejos cuesta más. Medimos el tiempo de una pasada por secuencia y por token
# a $1\times$–$8\times$ con RoPE (atención fusionada, sin sesgo) y con ALiBi (un sesgo de
# $H \times L \times L$ números que hay que construir y guardar). Las capas densas cuestan lo mismo
# por token a cualquier longitud; la atención, proporcional a $L$ por token.
#
# **[en]** Evaluating further costs more. We time one pass per sequence and per token at
# $1\times$–$8\times$ with RoPE (fused attention, no bias) and with ALiBi (a bias of
# $H \times L \times L$ numbers that must be built and stored). The dense layers cost the same per
# token at any length; attention, proportional to $L$ per token.

# %% nbgrader={"grade_id": "timing", "locked": true}
REPEATS = sized(full=5, test=1)
timings = {}
for encoding in ("rope", "alibi"):
    model = models[encoding]
    timings[encoding] = []
    for L in LENGTHS:
        x = x_long[:4, :L]
        with torch.no_grad():
            model(x)  # warm-up
            tick = time.perf_counter()
            for _ in range(REPEATS):
                model(x)
        seconds = (time.perf_counter() - tick) / REPEATS
        timings[encoding].append(seconds)
        bias = model.hooks.attention_bias(L, L)  # ALiBi: H x L x L float32; RoPE: none
        bias_bytes = 0 if bias is None else bias.numel() * bias.element_size()
        print(f"{encoding:<6} L = {L:>4}: {1e3 * seconds:7.2f} ms, "
              f"{1e6 * seconds / (4 * L):6.2f} µs/token, sesgo / bias {bias_bytes / 2**20:5.2f} MiB")

fig, ax = plt.subplots(figsize=(6, 3.5))
for encoding, seconds in timings.items():
    ax.plot(LENGTHS, [1e6 * s / (4 * L) for s, L in zip(seconds, LENGTHS, strict=True)],
            marker="o", label=encoding)
ax.set_xscale("log", base=2)
ax.set_xlabel("longitud / length L")
ax.set_ylabel("µs por token / µs per token")
ax.legend()
save_figure(fig, "18_01_time_per_token")
plt.show()
print(f"laboratorio / lab: {time.perf_counter() - LAB_START:.0f} s")
