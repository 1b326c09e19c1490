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
# # Laboratorio 18.02 · Escalado de RoPE para contextos largos
# *Lab 18.02 · RoPE scaling for long context*
#
# **[es]** En este laboratorio implementas los cinco escalados de RoPE de la lección (interpolación
# de posiciones, NTK-aware, NTK dinámico, YaRN y Llama 3), ves qué hace cada uno con las
# frecuencias y los aplicas, sin tocar un solo peso, a un Mini-GPT con RoPE entrenado con
# secuencias de 128 caracteres. Después mides su pérdida por posición hasta 8 veces esa longitud y,
# si quieres, haces un ajuste fino corto. Al final compruebas que tu YaRN y tu Llama 3 dan lo mismo
# que `transformers` con la configuración de un Llama de Hugging Face.
#
# **[en]** In this lab you implement the lesson's five RoPE scalings (position interpolation,
# NTK-aware, dynamic NTK, YaRN and Llama 3), see what each one does to the frequencies, and apply
# them, without touching a single weight, to a RoPE Mini-GPT trained on sequences of 128
# characters. Then you measure its loss per position up to 8 times that length and, if you like,
# run a short fine-tune. Last, you check that your YaRN and your Llama 3 give the same as
# `transformers` with a Hugging Face Llama's configuration.
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/18/02-rope-scaling.md` · `docs_en/18/02-rope-scaling.md`.
# 2. Completa / complete `linear_scaling`, `ntk_scaling`, `dynamic_ntk_scaling`,
#    `yarn_correction_range`, `yarn_scaling` y/and `llama3_scaling` en/in
#    `src/minimodel/positional/scaling.py` (usan/they use `rope_frequencies` de/from lab 17.03).
# 3. Comprueba tu código / check your code: `make check LAB=18.02`.
# 4. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Entrenar el modelo
#    lleva unos minutos en dos núcleos; el punto de control se guarda en `build/lab_runs/` y la
#    segunda vez se reutiliza. / Training the model takes a few minutes on two cores; the
#    checkpoint is saved in `build/lab_runs/` and reused the second time.

# %% nbgrader={"grade_id": "setup", "locked": true}
import dataclasses
import shutil
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from minimodel.checkpoint import CheckpointError
from minimodel.data import load_data
from minimodel.evaluate import evaluate_lengths
from minimodel.implementation import REPO_ROOT
from minimodel.labkit import lab_size, reload_edited_modules, save_figure, sized
from minimodel.model import GPT, GPTConfig
from minimodel.positional.rope import rope_frequencies
from minimodel.positional.scaling import SCALINGS, yarn_correction_range
from minimodel.train import TrainConfig, train

np.set_printoptions(precision=4, suppress=True)
LAB_START = time.perf_counter()

# The lab's model: RoPE on heads of 32 dimensions, base 10000, trained at L0 = 128 tokens.
ROTARY_DIM, BASE, L0 = 32, 10000.0, 128
SCALE = 4.0  # s: the static methods aim at 4 x L0 = 512 tokens
# Options of each method in this lab. Dynamic NTK with factor 1 uses s = L / L0 at every length.
METHODS = {
    "linear": {"factor": SCALE},
    "ntk": {"factor": SCALE},
    "dynamic_ntk": {"factor": 1.0},
    "yarn": {"factor": SCALE},
    "llama3": {"factor": SCALE},
}

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. Qué hace cada método con las frecuencias / What each method does to the frequencies
#
# **[es]** Todos los métodos cambian la frecuencia de cada pareja, $\theta'_i = \rho_i\,\theta_i$
# con $1/s \le \rho_i \le 1$. Escribe `frequency_ratios(length)`: un diccionario con el vector
# $\rho$ (forma `(ROTARY_DIM // 2,)`, `float64`) de cada método de `METHODS`, para secuencias de
# `length` tokens (el NTK dinámico depende de ella). Escribe también `unseen_pairs(ratio, length)`:
# qué parejas giran, con `length` tokens, ángulos que no vieron en el entrenamiento. Son las
# parejas **lentas** ($n_i = L_0\,\theta_i / 2\pi < 1$) cuyo ángulo máximo crece, es decir, con
# $c_i = (\text{length}/L_0)\,\rho_i > 1$ (usa una tolerancia de `1e-6`).
#
# **[en]** Every method changes each pair's frequency, $\theta'_i = \rho_i\,\theta_i$ with
# $1/s \le \rho_i \le 1$. Write `frequency_ratios(length)`: a dictionary with the vector $\rho$
# (shape `(ROTARY_DIM // 2,)`, `float64`) of each method in `METHODS`, for sequences of `length`
# tokens (dynamic NTK depends on it). Also write `unseen_pairs(ratio, length)`: which pairs turn,
# with `length` tokens, through angles they did not see in training. They are the **slow** pairs
# ($n_i = L_0\,\theta_i / 2\pi < 1$) whose largest angle grows, that is, with
# $c_i = (\text{length}/L_0)\,\rho_i > 1$ (use a tolerance of `1e-6`).

# %% nbgrader={"grade_id": "ratios", "solution": true}
PLAIN = rope_frequencies(ROTARY_DIM, BASE).double()  # theta_i, (16,)
TURNS = (L0 * PLAIN / (2 * np.pi)).numpy()  # n_i: turns of each pair over L0 positions


def frequency_ratios(length: int) -> dict[str, np.ndarray]:
    """rho_i = theta'_i / theta_i of every method in METHODS, for sequences of `length` tokens."""
    ### BEGIN SOLUTION
    ratios = {}
    for name, options in METHODS.items():
        inv_freq, _ = SCALINGS[name](
            ROTARY_DIM, BASE, original_max_len=L0, seq_len=length, **options
        )
        ratios[name] = (inv_freq.double() / PLAIN).numpy()
    return ratios
    ### END SOLUTION


def unseen_pairs(ratio: np.ndarray, length: int) -> np.ndarray:
    """Boolean mask (ROTARY_DIM // 2,): slow pairs whose angles at `length` exceed those seen."""
    ### BEGIN SOLUTION
    slow = TURNS < 1
    coverage = length / L0 * ratio
    return slow & (coverage > 1 + 1e-6)
    ### END SOLUTION


# %% nbgrader={"grade_id": "ratios-plot", "locked": true}
ratios = frequency_ratios(int(SCALE * L0))
lo, hi = yarn_correction_range(ROTARY_DIM, BASE, L0)
print(f"YaRN: lo = {lo:g}, hi = {hi:g}")
print("pareja / pair      ", np.arange(ROTARY_DIM // 2))
print("vueltas / turns n_i", TURNS.round(2))
for name, ratio in ratios.items():
    print(f"{name:<12} rho =", ratio.round(3))

fig, ax = plt.subplots(figsize=(8, 4))
pairs = np.arange(ROTARY_DIM // 2)
for name, ratio in ratios.items():
    dashed = name == "dynamic_ntk"  # equal to ntk at this length: drawn on top, dashed
    ax.plot(pairs, ratio, marker="x" if dashed else "o", ls="--" if dashed else "-", label=name)
ax.axhline(1 / SCALE, color="gray", lw=0.8, ls=":")
ax.axvline(np.argmax(TURNS < 1) - 0.5, color="black", lw=0.8, ls="--")
ax.text(np.argmax(TURNS < 1) - 0.4, 0.95, "n_i < 1 →", va="top")
ax.set_yscale("log")
ax.set_xlabel("pareja i / pair i")
ax.set_ylabel("ρ_i = θ'_i / θ_i")
ax.set_title(f"r = {ROTARY_DIM}, L0 = {L0}, s = {SCALE:g}, L = {int(SCALE * L0)}")
ax.legend()
save_figure(fig, "18_02_frequency_ratios")
plt.show()

unseen = {"none": unseen_pairs(np.ones(ROTARY_DIM // 2), int(SCALE * L0))}
unseen |= {name: unseen_pairs(ratio, int(SCALE * L0)) for name, ratio in ratios.items()}
for name, mask in unseen.items():
    print(
        f"{name:<12} parejas fuera de lo visto / pairs outside what was seen:", np.flatnonzero(mask)
    )

# %% nbgrader={"grade": true, "grade_id": "test-ratios", "locked": true, "points": 3}
assert set(ratios) == set(METHODS), "un vector por método / one vector per method"
assert all(r.shape == (ROTARY_DIM // 2,) for r in ratios.values()), "forma / shape (16,)"
assert np.allclose(ratios["linear"], 1 / SCALE), "linear: cada cociente debe ser 1/s / linear: every ratio must be 1/s"
assert np.isclose(ratios["ntk"][0], 1) and np.isclose(ratios["ntk"][-1], 1 / SCALE), "ntk: los cocientes van de 1 a 1/s / ntk: the ratios go from 1 to 1/s"
assert np.allclose(ratios["dynamic_ntk"], ratios["ntk"]), "dynamic (s=1) a 4 L0 debe coincidir con ntk (s=4) / dynamic (s=1) at 4 L0 must match ntk (s=4)"
assert np.allclose(frequency_ratios(L0)["dynamic_ntk"], 1), "dynamic: RoPE sin cambios hasta L0 / dynamic: plain RoPE up to L0"
assert unseen["none"].sum() == 10 and unseen["linear"].sum() == 0 and unseen["yarn"].sum() == 0, "pares sin ver: none 10, linear 0, yarn 0 / unseen pairs: none 10, linear 0, yarn 0"
assert unseen["ntk"].sum() == 9, "ntk: los pares 6..14 quedan por encima de 1/s / ntk: pairs 6..14 stay above 1/s"
### BEGIN HIDDEN TESTS
assert np.allclose(ratios["yarn"][:7], [1, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25])
assert np.isclose(ratios["llama3"][3], 0.905666, atol=1e-5)
assert np.allclose(frequency_ratios(2 * L0)["dynamic_ntk"][-1], 0.5, rtol=1e-5)
assert unseen_pairs(np.ones(16), L0).sum() == 0, "at L0 nothing is unseen"
assert np.array_equal(np.flatnonzero(unseen_pairs(np.full(16, 0.5), 4 * L0)), np.arange(6, 16))
assert unseen_pairs(np.full(16, 0.25), 4 * L0).sum() == 0, "exactly 1/s is still inside"
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. Un Mini-GPT con RoPE entrenado a 128 tokens / A RoPE Mini-GPT trained at 128 tokens
#
# **[es]** El modelo aprende a predecir el siguiente carácter del código fuente de la biblioteca
# estándar de Python (no se descarga nada). Con el tamaño por defecto, el entrenamiento dura unos
# minutos en dos núcleos; el punto de control se guarda y la siguiente ejecución lo reutiliza. En
# la ejecución de prueba (`MINIMODEL_LAB_SIZE=test`) el modelo es diminuto y apenas se entrena: los
# números de esa ejecución no significan nada.
#
# **[en]** The model learns to predict the next character of the Python standard library's source
# code (nothing is downloaded). At the default size, training takes a few minutes on two cores;
# the checkpoint is saved and the next run reuses it. In the test run
# (`MINIMODEL_LAB_SIZE=test`) the model is tiny and barely trained: its numbers mean nothing.

# %% nbgrader={"grade_id": "train", "locked": true}
data = load_data("stdlib")
MODEL = GPTConfig(
    vocab_size=data.vocab_size,
    block_size=L0,
    n_layer=sized(full=4, test=1),
    n_head=sized(full=4, test=1),
    n_embd=sized(full=128, test=32),  # heads of 32 dimensions in both sizes
    positional="rope",
    rope_base=BASE,
)
TRAINING = TrainConfig(
    steps=sized(full=1200, test=6),
    batch_size=sized(full=16, test=4),
    warmup=sized(full=100, test=4),
    seed=0,
)
RUN = REPO_ROOT / "build" / "lab_runs" / "18_02_rope" if lab_size() == "full" else None
start = time.perf_counter()
try:
    trained = train(MODEL, TRAINING, data, out=RUN, resume=True, label="RoPE L0=128 ")
except CheckpointError:  # a checkpoint from another version of this lab: train again
    print(f"{RUN}: punto de control de otra versión; se entrena de nuevo / stale checkpoint; retraining")
    shutil.rmtree(RUN)
    trained = train(MODEL, TRAINING, data, out=RUN, resume=True, label="RoPE L0=128 ")
base_model = trained["model"]
print(f"{base_model.num_parameters():,} parámetros / parameters, {TRAINING.steps} pasos / steps")
print(f"pérdida de validación a L0 / validation loss at L0: {trained['val_loss']:.4f}")
print(f"{time.perf_counter() - start:.0f} s")

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. Cada escalado, sin ajuste fino / Each scaling, without fine-tuning
#
# **[es]** Escribe `with_scaling(model, name, factor)`: una copia de `model` que usa el escalado
# `name` de `SCALINGS` con ese factor (y `L0` = la longitud de entrenamiento del modelo), con los
# mismos pesos; `name=None` es RoPE sin escalar. No modifiques `model`. Pista: la configuración es
# un `dataclass` (`dataclasses.replace`) y las frecuencias no están en el `state_dict`.
#
# **[en]** Write `with_scaling(model, name, factor)`: a copy of `model` that uses the scaling
# `name` from `SCALINGS` with that factor (and `L0` = the model's training length), with the same
# weights; `name=None` is plain RoPE. Do not modify `model`. Hint: the configuration is a
# `dataclass` (`dataclasses.replace`) and the frequencies are not in the `state_dict`.


# %% nbgrader={"grade_id": "with-scaling", "solution": true}
def with_scaling(model: GPT, name: str | None, factor: float = 1.0) -> GPT:
    """A copy of the RoPE `model` with scaling `name` (None: plain RoPE), in eval mode."""
    ### BEGIN SOLUTION
    config = dataclasses.replace(
        model.config,
        rope_scaling=name,
        rope_scaling_factor=factor,
        rope_original_max_len=model.config.block_size,
    )
    scaled = GPT(config)
    scaled.load_state_dict(model.state_dict())
    return scaled.eval()
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-with-scaling", "locked": true, "points": 2}
probe = torch.randint(1, data.vocab_size, (2, L0))
with torch.no_grad():
    reference_logits = base_model(probe)[0]
    pi = with_scaling(base_model, "linear", SCALE)
    assert torch.allclose(pi.hooks.rotary.inv_freq, rope_frequencies(ROTARY_DIM, BASE) / SCALE), "linear debe dividir cada frecuencia por s / linear must divide every frequency by s"
    assert base_model.config.rope_scaling is None, "no cambies el modelo / do not modify the model"
    assert torch.equal(pi.wte.weight, base_model.wte.weight), "mismos pesos / same weights"
    dynamic = with_scaling(base_model, "dynamic_ntk", 1.0)
    assert torch.allclose(dynamic(probe)[0], reference_logits, atol=1e-5), "dynamic debe ser RoPE sin cambios hasta L0 / dynamic must be plain RoPE up to L0"
    assert not torch.allclose(pi(probe)[0], reference_logits, atol=1e-6), "linear debe cambiar el modelo / linear must change the model"
    ### BEGIN HIDDEN TESTS
    yarn = with_scaling(base_model, "yarn", 2.0)
    assert yarn.config.rope_original_max_len == L0 and yarn.config.rope_scaling_factor == 2.0
    assert abs(yarn.hooks.rotary.attention_factor - (0.1 * np.log(2) + 1)) < 1e-9
    plain = with_scaling(base_model, None)
    assert torch.allclose(plain(probe)[0], reference_logits, atol=1e-6)
    assert not yarn.training
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "evaluate-md", "locked": true}
# **[es]** Ahora, cada método con el modelo entrenado, sin ajuste fino, a $1\times$, $2\times$,
# $4\times$ y $8\times$ la longitud de entrenamiento. `evaluate_lengths` guarda la pérdida de cada
# posición (promediada sobre las secuencias) y la resume por tramos $[0, 128)$, $[128, 256)$,
# $[256, 512)$ y $[512, 1024)$. La tabla muestra la evaluación más larga, por tramos, y la pérdida
# media a $1\times$ (¿se conserva el contexto corto?). Compara los métodos entre sí dentro de cada
# tramo: todos ven el mismo texto, pero cada tramo contiene un trozo distinto de código, así que la
# altura de una curva a lo largo de las posiciones también depende de lo que cae en cada una.
#
# **[en]** Now each method with the trained model, without fine-tuning, at $1\times$, $2\times$,
# $4\times$ and $8\times$ the training length. `evaluate_lengths` keeps the loss of each position
# (averaged over the sequences) and summarises it in buckets $[0, 128)$, $[128, 256)$,
# $[256, 512)$ and $[512, 1024)$. The table shows the longest evaluation, by bucket, and the mean
# loss at $1\times$ (is the short context preserved?). Compare the methods with each other within
# each bucket: they all see the same text, but each bucket holds a different piece of code, so the
# height of a curve along the positions also depends on what falls at each of them.

# %% nbgrader={"grade_id": "evaluate", "locked": true}
FACTORS = (1, 2, 4, 8)
N_SEQUENCES = sized(full=16, test=2)


def evaluate_all(models: dict[str, GPT]) -> dict[str, list[dict]]:
    """evaluate_lengths for every model, on the same validation sequences."""
    return {name: evaluate_lengths(m, data, FACTORS, n=N_SEQUENCES) for name, m in models.items()}


def print_table(results: dict[str, list[dict]]) -> None:
    longest = results[next(iter(results))][-1]
    spans = list(longest["buckets"])
    head = f"{'':<18}{'1x':>8}" + "".join(f"{f'[{a},{b})':>12}" for a, b in spans)
    print(head)
    for name, rows in results.items():
        cells = "".join(f"{rows[-1]['buckets'][span]:12.3f}" for span in spans)
        print(f"{name:<18}{rows[0]['mean_loss']:8.3f}{cells}")


def plot_per_position(results: dict[str, list[dict]], title: str, figure: str) -> None:
    fig, ax = plt.subplots(figsize=(9, 4.5))
    window = 16
    for name, rows in results.items():
        loss = rows[-1]["per_position"].numpy()  # the longest evaluation, (8 L0,)
        smooth = np.convolve(loss, np.ones(window) / window, mode="valid")
        ax.plot(np.arange(len(smooth)) + window // 2, smooth, label=name)
    for multiple in (1, SCALE):
        ax.axvline(multiple * L0, color="gray", lw=0.8, ls="--")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("posición / position")
    ax.set_ylabel(f"pérdida (media móvil de {window}) / loss (moving average of {window})")
    ax.set_title(title)
    ax.legend()
    save_figure(fig, figure)
    plt.show()


start = time.perf_counter()
models = {"none": with_scaling(base_model, None)}
models |= {name: with_scaling(base_model, name, **options) for name, options in METHODS.items()}
results = evaluate_all(models)
print_table(results)
print(f"{time.perf_counter() - start:.0f} s")
plot_per_position(
    results,
    f"Sin ajuste fino, evaluado a {8 * L0} / no fine-tuning, evaluated at {8 * L0}",
    "18_02_loss_by_position",
)

fig, ax = plt.subplots(figsize=(6, 4))
for name, rows in results.items():
    ax.plot(
        [r["eval_length"] for r in rows], [r["mean_loss"] for r in rows], marker="o", label=name
    )
ax.set_xscale("log", base=2)
ax.set_xlabel("longitud evaluada / evaluation length")
ax.set_ylabel("pérdida media / mean loss")
ax.legend()
save_figure(fig, "18_02_loss_by_length")
plt.show()

# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] Mira la columna `1x`: ¿qué métodos empeoran el modelo dentro
# de su longitud de entrenamiento y cuál no puede empeorarlo? ¿Por qué? · [en] Look at the `1x`
# column: which methods make the model worse within its training length, and which one cannot?
# Why?

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] El NTK dinámico no puede cambiar nada a $1\times$: con $L \le L_0$ devuelve exactamente las
# frecuencias originales (la prueba de `with_scaling` lo comprueba). Los métodos estáticos cambian
# las frecuencias para todas las longitudes, así que el modelo recibe ángulos distintos de los que
# aprendió también en textos cortos. Suele empeorar más la interpolación lineal, que frena también
# las parejas rápidas (las que distinguen a los vecinos inmediatos, lo que más importa para
# predecir el siguiente carácter); NTK y Llama 3 apenas tocan las parejas rápidas. YaRN suele
# perder más que ellos: en este modelo su rampa empieza en la pareja $0$ (parte 1), así que frena
# las parejas $1$ a $5$, y además multiplica todos los logits por $1.2965$, lo que también cambia
# la atención a corta distancia.
#
# [en] Dynamic NTK cannot change anything at $1\times$: with $L \le L_0$ it returns exactly the
# original frequencies (the `with_scaling` test checks it). The static methods change the
# frequencies at every length, so the model receives angles other than the ones it learned even on
# short texts. Linear interpolation usually hurts most, since it also slows the fast pairs (the
# ones that tell immediate neighbours apart, which matters most for predicting the next
# character); NTK and Llama 3 barely touch the fast pairs. YaRN usually loses more than they do:
# on this model its ramp starts at pair $0$ (part 1), so it slows pairs $1$ to $5$, and it also
# multiplies every logit by $1.2965$, which changes short-range attention too.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] Los métodos estáticos se prepararon para $s\,L_0 = 512$. ¿Qué
# les pasa en el tramo $[512, 1024)$, comparado con el NTK dinámico? Relaciónalo con la parte 1.
# · [en] The static methods were set up for $s\,L_0 = 512$. What happens to them in the bucket
# $[512, 1024)$, compared with dynamic NTK? Relate it to part 1.

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Un escalado estático con $s = 4$ solo devuelve las parejas lentas a lo visto hasta
# $4 L_0$: a $8 L_0$, las interpoladas del todo tienen $c_i = 8\rho_i = 2$, sus ángulos vuelven a
# salir del rango de entrenamiento y la pérdida vuelve a subir en $[512, 1024)$. Sube menos que la
# de RoPE sin escalar, que allí sale de su rango por un factor de hasta $8$, no de $2$. El NTK
# dinámico recalcula la base con la longitud (con factor 1, la pareja más lenta se divide por
# $L/L_0 = 8$), así que no tiene un límite fijo; pero, como NTK, deja fuera de lo visto las parejas
# lentas intermedias (parte 1: de la $6$ a la $14$), y por eso no tiene por qué ganar a los métodos
# por bandas, que sí las frenan del todo. En este modelo, YaRN y Llama 3 suelen quedar por delante
# de él también a $8 L_0$.
#
# [en] A static scaling with $s = 4$ only brings the slow pairs back inside what was seen up to
# $4 L_0$: at $8 L_0$, the fully interpolated ones have $c_i = 8\rho_i = 2$, their angles leave the
# training range again and the loss rises again in $[512, 1024)$. It rises less than unscaled
# RoPE's, which there leaves its range by a factor of up to $8$, not $2$. Dynamic NTK recomputes the
# base from the length (with factor 1, the slowest pair is divided by $L/L_0 = 8$), so it has no
# fixed limit; but, like NTK, it leaves the intermediate slow pairs outside what was seen (part 1:
# $6$ to $14$), which is why it need not beat the per-band methods, which slow them fully. On this
# model, YaRN and Llama 3 usually stay ahead of it at $8 L_0$ too.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. Opcional: un ajuste fino corto / Optional: a short fine-tune
#
# **[es]** La interpolación y YaRN se publicaron con un ajuste fino corto a la longitud nueva. Aquí
# ajustamos unos pocos pasos a $4 L_0 = 512$ tokens tres modelos: `linear`, `yarn` y, como
# **control**, RoPE sin escalar (`none`). Sin el control no sabríamos si la mejora viene del
# escalado o simplemente de entrenar más con textos largos. Pon `FINE_TUNE = False` para saltarte
# esta parte.
#
# **[en]** Interpolation and YaRN were published with a short fine-tune at the new length. Here
# we fine-tune three models for a few steps at $4 L_0 = 512$ tokens: `linear`, `yarn` and, as a
# **control**, unscaled RoPE (`none`). Without the control we could not tell whether an
# improvement comes from the scaling or simply from more training on long texts. Set
# `FINE_TUNE = False` to skip this part.

# %% nbgrader={"grade_id": "fine-tune", "locked": true}
FINE_TUNE = True
TUNE_STEPS = sized(full=60, test=1)
TUNE_BATCH = sized(full=4, test=2)
TUNE_LENGTH = int(SCALE * L0)


def fine_tune(model: GPT, steps: int, length: int, batch_size: int, lr: float = 3e-4) -> GPT:
    """A copy of `model` trained `steps` more steps on sequences of `length` tokens."""
    tuned = GPT(model.config)
    tuned.load_state_dict(model.state_dict())
    tuned.train()
    optimizer = tuned.optimizer(lr, weight_decay=0.1)
    batches = torch.Generator().manual_seed(1234)  # the same batches for every model
    for _ in range(steps):
        x, y = data.batch("train", batch_size, length, batches)
        _, loss = tuned(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(tuned.parameters(), 1.0)
        optimizer.step()
    return tuned.eval()


if FINE_TUNE:
    start = time.perf_counter()
    tuned = {
        f"{name} + ft": fine_tune(models[name], TUNE_STEPS, TUNE_LENGTH, TUNE_BATCH)
        for name in ("none", "linear", "yarn")
    }
    tuned_results = evaluate_all(tuned)
    print_table({name: results[name] for name in ("none", "linear", "yarn")} | tuned_results)
    print(f"{time.perf_counter() - start:.0f} s")
    plot_per_position(
        tuned_results,
        f"{TUNE_STEPS} pasos a {TUNE_LENGTH} / {TUNE_STEPS} steps at {TUNE_LENGTH}",
        "18_02_fine_tuned",
    )

# %% [markdown] nbgrader={"grade_id": "q3", "locked": true}
# **Pregunta 3 / Question 3.** [es] Compara los tres modelos ajustados entre sí y con los de antes
# del ajuste. ¿Qué te dice el control (`none + ft`)? Si desactivaste esta parte, razona qué
# esperarías. · [en] Compare the three fine-tuned models with each other and with the ones before
# fine-tuning. What does the control (`none + ft`) tell you? If you turned this part off, reason
# about what you would expect.

# %% [markdown] nbgrader={"grade_id": "q3-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] El ajuste fino mejora los tres, pero el control muestra cuánto se debe solo a ver textos
# largos: en este modelo, unas decenas de pasos a $512$ bastan para que RoPE sin escalar funcione
# bien hasta $8 L_0$, porque la tarea es casi local y el modelo se adapta enseguida a las
# distancias nuevas. La interpolación se recupera solo en parte: tiene que reaprender a distinguir
# vecinos que ahora están a $1/4$ de posición, y eso pide más pasos. Así que aquí no se reproduce
# lo que dice el artículo de la interpolación (que con un ajuste fino corto funciona muy bien en
# LLaMA), y sin el control atribuiríamos al escalado una mejora que viene del entrenamiento.
#
# [en] Fine-tuning improves all three, but the control shows how much is due merely to seeing long
# texts: on this model, a few dozen steps at $512$ are enough for unscaled RoPE to work well up to
# $8 L_0$, because the task is mostly local and the model adapts quickly to the new distances.
# Interpolation recovers only partly: it has to relearn to tell apart neighbours that are now
# $1/4$ of a position apart, and that takes more steps. So this does not reproduce what the paper
# says about interpolation (that with a short fine-tune it works very well on LLaMA), and without
# the control we would credit the scaling with an improvement that comes from the training.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "q4", "locked": true}
# **Pregunta 4 / Question 4.** [es] ¿Qué muestra este experimento y qué no puede mostrar? Piensa en
# el tamaño del modelo y de los datos, en qué mide la pérdida de un modelo de caracteres, en el
# número de semillas y de secuencias, y en de dónde salen los umbrales de YaRN y de Llama 3.
# · [en] What does this experiment show, and what can it not show? Think about the size of the
# model and the data, what the loss of a character model measures, the number of seeds and
# sequences, and where the thresholds of YaRN and Llama 3 come from.

# %% [markdown] nbgrader={"grade_id": "q4-answer", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# [es] Muestra los mecanismos: los escalados son solo cambios de frecuencias que se aplican sin
# tocar los pesos; los estáticos cambian el modelo también dentro de $L_0$ y el dinámico no; un
# factor fijo solo cubre hasta $s\,L_0$; y frenar las parejas rápidas (la interpolación sin ajuste
# fino) es lo que más daño hace. No muestra cómo se ordenan los métodos en un modelo grande. El
# modelo tiene menos de un millón de parámetros, un contexto de 128 caracteres y una tarea en la que
# casi todo se predice con los últimos caracteres; la pérdida media no dice si el modelo *usa* el
# contexto lejano (para eso hace falta una tarea de recuperación, lección 18.01). Hay una sola
# semilla y unas pocas secuencias de validación, sin barras de error: diferencias de unas
# centésimas entre métodos pueden ser ruido. Los umbrales de YaRN ($32$ y $1$ vueltas) y de
# Llama 3 ($4$ y $1$) se eligieron para modelos con miles de tokens de contexto: aquí ninguna
# pareja da $32$ vueltas y la rampa de YaRN empieza en la pareja $0$. Y el ajuste fino es de unas
# decenas de pasos, con un control que muestra que buena parte de la mejora viene de entrenar con
# textos largos, no del escalado.
#
# [en] It shows the mechanisms: the scalings are just changes of frequencies applied without
# touching the weights; the static ones change the model within $L_0$ too and the dynamic one does
# not; a fixed factor only covers up to $s\,L_0$; and slowing the fast pairs (interpolation without
# fine-tuning) is what does the most harm. It does not show how the methods rank on a large model.
# The model has fewer than a million parameters, a context of 128 characters and a task in which
# almost everything is predicted from the last few characters; the mean loss does not say whether
# the model *uses* the distant context (that needs a retrieval task, lesson 18.01). There is a
# single seed and a few validation sequences, with no error bars: differences of a few hundredths
# between methods may be noise. The thresholds of YaRN ($32$ and $1$ turns) and Llama 3 ($4$ and
# $1$) were chosen for models with thousands of tokens of context: here no pair makes $32$ turns
# and YaRN's ramp starts at pair $0$. And the fine-tune is a few dozen steps, with a control showing
# that much of the improvement comes from training on long texts, not from the scaling.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part5-md", "locked": true}
# ## 5. Tus escalados en la configuración de un Llama / Your scalings in a Llama's config
#
# **[es]** En Hugging Face el escalado se elige en la configuración del modelo: `LlamaConfig` recibe
# un diccionario `rope_parameters` (`rope_scaling` en versiones antiguas) con `rope_type` y sus
# opciones, y `LlamaRotaryEmbedding` obtiene la tabla y el factor de atención con
# `ROPE_INIT_FUNCTIONS[rope_type](config)`. Los nombres cambian: `rope_theta` es la base y
# `original_max_position_embeddings` es $L_0$. `scaling_from_rope_parameters` traduce esos nombres
# y llama a tu función. Con la configuración de este laboratorio, tu YaRN y tu Llama 3 deben dar
# las mismas frecuencias y el mismo factor que `transformers`, y el `LlamaForCausalLM` construido
# con esa configuración debe guardar tu tabla en su `rotary_emb`.
#
# **[en]** In Hugging Face the scaling is chosen in the model's configuration: `LlamaConfig` takes
# a `rope_parameters` dictionary (`rope_scaling` in older versions) with `rope_type` and its
# options, and `LlamaRotaryEmbedding` gets the table and the attention factor from
# `ROPE_INIT_FUNCTIONS[rope_type](config)`. The names change: `rope_theta` is the base and
# `original_max_position_embeddings` is $L_0$. `scaling_from_rope_parameters` translates those
# names and calls your function. With this lab's configuration, your YaRN and your Llama 3 must
# give the same frequencies and the same factor as `transformers`, and the `LlamaForCausalLM`
# built with that configuration must hold your table in its `rotary_emb`.

# %% nbgrader={"grade_id": "hf-config", "locked": true}
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

import minimodel.positional.scaling as my_scaling
from minimodel.hf_llama import scaling_from_rope_parameters, tiny_config, tiny_llama

ROPE_PARAMETERS = {
    "yarn": {"rope_type": "yarn", "rope_theta": BASE, "factor": SCALE,
             "original_max_position_embeddings": L0},
    "llama3": {"rope_type": "llama3", "rope_theta": BASE, "factor": SCALE,
               "original_max_position_embeddings": L0, "low_freq_factor": 1.0, "high_freq_factor": 4.0},
}
hf_gaps = {}
for name, parameters in ROPE_PARAMETERS.items():
    # 4 heads of ROTARY_DIM dimensions, a context of s * L0 tokens
    shape = {"hidden_size": 4 * ROTARY_DIM, "max_position_embeddings": int(SCALE * L0)}
    config = tiny_config(**shape, rope_parameters=dict(parameters))
    theirs, their_factor = ROPE_INIT_FUNCTIONS[name](config, "cpu")
    ours, our_factor = scaling_from_rope_parameters(my_scaling, parameters, ROTARY_DIM)
    in_model = tiny_llama(**shape, rope_parameters=dict(parameters)).model.rotary_emb
    hf_gaps[name] = ((ours - theirs).abs().max().item(), abs(our_factor - their_factor),
                     (ours - in_model.inv_freq).abs().max().item())
    print(f"{name:6s}: frecuencias / frequencies max |diferencia / difference| = {hf_gaps[name][0]:.1e}, "
          f"factor {our_factor:.4f} (transformers {their_factor:.4f}), en el modelo / in the model {hf_gaps[name][2]:.1e}")

# %% nbgrader={"grade_id": "hf-config-check", "locked": true}
for name, (freq_gap, factor_gap, model_gap) in hf_gaps.items():
    assert freq_gap <= 1e-6 and model_gap <= 1e-6, f"{name}: tus frecuencias deben ser las de transformers / your frequencies must be transformers' ones"
    assert factor_gap <= 1e-9, f"{name}: tu factor de atención debe ser el de transformers / your attention factor must be transformers' one"

# %% nbgrader={"grade_id": "timing", "locked": true}
print(f"Laboratorio completo / whole lab: {time.perf_counter() - LAB_START:.0f} s")
