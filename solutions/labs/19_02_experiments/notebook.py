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
# # Laboratorio 19.02 · Experimentos: la literatura a escala de portátil
# *Lab 19.02 · Experiments: the literature at laptop scale*
#
# **[es]** En este laboratorio repites, en pequeño, el experimento clásico de las codificaciones
# posicionales: entrenar con secuencias cortas y evaluar con otras más largas. Entrenas un Mini-GPT
# con cada codificación (y sin ninguna) con varias semillas, mides cuánto varía el resultado de una
# semilla a otra, decides qué diferencias son más grandes que ese ruido, y repites la prueba con
# una tarea sintética en la que la posición lo es todo: copiar una secuencia. Al final escribes lo
# que has visto, con los números y sus límites.
#
# **[en]** In this lab you repeat, at a small scale, the classic experiment on positional
# encodings: train on short sequences and evaluate on longer ones. You train a Mini-GPT with each
# encoding (and with none) under several seeds, measure how much the result varies from one seed
# to another, decide which differences are larger than that noise, and repeat the test on a
# synthetic task where position is everything: copying a sequence. At the end you write up what
# you saw, with the numbers and their limits.
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/19/02-experiments.md` · `docs_en/19/02-experiments.md`.
# 2. Este laboratorio no añade archivos: usa tus codificaciones de las lecciones 17.01 a 17.05.
#    / This lab adds no file: it uses your encodings from lessons 17.01 to 17.05.
# 3. Comprueba que entrenan y funcionan con secuencias largas / check that they train and run on
#    long sequences: `make check LAB=19.02`.
# 4. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Entrenar los
#    modelos lleva unos minutos en dos núcleos. / Training the models takes a few minutes on two
#    cores.

# %% nbgrader={"grade_id": "setup", "locked": true}
import dataclasses
import math
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch

from minimodel.compare import compare, summary
from minimodel.data import load_data
from minimodel.encodings import COURSE as ENCODINGS  # the course's own encodings
from minimodel.evaluate import evaluate_lengths
from minimodel.implementation import resolve
from minimodel.labkit import reload_edited_modules, save_figure, sized
from minimodel.model import GPTConfig
from minimodel.train import TrainConfig, train

LAB_START = time.perf_counter()
# The test run's models are tiny: a second thread only adds waiting.
torch.set_num_threads(sized(full=torch.get_num_threads(), test=1))
print("Codificaciones de / encodings from:", resolve())
FACTORS = (1, 2, 4, 8)
SEEDS = tuple(range(sized(full=3, test=2)))
# Checkpoints go to a fresh folder every run, so a fixed encoding is never judged by old weights.
RUNS = Path(tempfile.mkdtemp(prefix="lab19_02_"))

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. Entrenar corto, evaluar largo / Train short, test long
#
# **[es]** Seis modelos por semilla, iguales salvo la codificación, entrenados con trozos de
# $L_0 = 64$ caracteres del código fuente de la biblioteca estándar de Python y evaluados con
# secuencias de $1\times$, $2\times$, $4\times$ y $8\times$ esa longitud. Es `minimodel compare`
# con un modelo diminuto (2 capas, anchura 64) y 400 pasos: la misma orden que la lección usa con 5
# semillas. En la ejecución de prueba (`MINIMODEL_LAB_SIZE=test`) el modelo apenas se entrena y sus
# números no significan nada.
#
# **[en]** Six models per seed, identical except for the encoding, trained on chunks of
# $L_0 = 64$ characters of the Python standard library's source code and evaluated on sequences of
# $1\times$, $2\times$, $4\times$ and $8\times$ that length. It is `minimodel compare` with a tiny
# model (2 layers, width 64) and 400 steps: the same command the lesson runs with 5 seeds. In the
# test run (`MINIMODEL_LAB_SIZE=test`) the model is barely trained and its numbers mean nothing.

# %% nbgrader={"grade_id": "train-text", "locked": true}
text = load_data("stdlib")
MODEL = GPTConfig(
    vocab_size=text.vocab_size,
    block_size=sized(full=64, test=32),
    n_layer=2,
    n_head=4,
    n_embd=sized(full=64, test=32),
)
TRAINING = TrainConfig(
    steps=sized(full=400, test=6),
    batch_size=sized(full=32, test=4),
    lr=2e-3,
    min_lr=2e-4,
    warmup=sized(full=40, test=2),
)
L0 = MODEL.block_size
start = time.perf_counter()
rows = compare(
    MODEL,
    TRAINING,
    text,
    RUNS / "text",
    encodings=ENCODINGS,
    seeds=SEEDS,
    factors=FACTORS,
    n_eval=sized(full=16, test=4),
)
print(summary(rows, L0))
print(f"{time.perf_counter() - start:.0f} s")

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. Cuánto varía de una semilla a otra / How much it varies from one seed to another
#
# **[es]** Cada fila de `rows` es un modelo (una codificación y una semilla) evaluado a una
# longitud; su pérdida media está en `row["mean_loss"]`. Escribe `seed_statistics(rows, encoding,
# length)`: un diccionario con `n` (el número de semillas), `mean` (la media de `mean_loss` sobre
# las semillas), `std` (la desviación típica muestral, con $n - 1$) y `se` (el error típico de la
# media, $s/\sqrt{n}$).
#
# **[en]** Each row of `rows` is one model (an encoding and a seed) evaluated at one length; its
# mean loss is in `row["mean_loss"]`. Write `seed_statistics(rows, encoding, length)`: a dictionary
# with `n` (the number of seeds), `mean` (the mean of `mean_loss` over the seeds), `std` (the sample
# standard deviation, with $n - 1$) and `se` (the standard error of the mean, $s/\sqrt{n}$).


# %% nbgrader={"grade_id": "statistics", "solution": true}
def seed_statistics(rows: list[dict], encoding: str, length: int) -> dict[str, float]:
    """n, mean, sample std and standard error over seeds of the mean loss of one encoding."""
    ### BEGIN SOLUTION
    values = np.array(
        [r["mean_loss"] for r in rows if r["encoding"] == encoding and r["eval_length"] == length]
    )
    n = len(values)
    std = float(values.std(ddof=1)) if n > 1 else math.nan
    return {"n": n, "mean": float(values.mean()), "std": std, "se": std / math.sqrt(n)}
    ### END SOLUTION


# %% nbgrader={"grade_id": "statistics-table", "locked": true}
stats = {
    (name, factor): seed_statistics(rows, name, factor * L0)
    for name in ENCODINGS
    for factor in FACTORS
}
print(f"{'':<12}" + "".join(f"{f'{f}x = {f * L0}':>20}" for f in FACTORS))
for name in ENCODINGS:
    cells = "".join(
        f"{stats[name, f]['mean']:>12.3f} ± {stats[name, f]['std']:.3f}" for f in FACTORS
    )
    print(f"{name:<12}{cells}")
print(f"(media ± desviación típica sobre {len(SEEDS)} semillas / mean ± std over seeds)")

fig, ax = plt.subplots(figsize=(7, 4.5))
for name in ENCODINGS:
    means = [stats[name, f]["mean"] for f in FACTORS]
    errors = [stats[name, f]["std"] for f in FACTORS]
    ax.errorbar([f * L0 for f in FACTORS], means, yerr=errors, marker="o", capsize=3, label=name)
ax.set_xscale("log", base=2)
ax.set_xlabel("longitud evaluada / evaluation length")
ax.set_ylabel("pérdida media (nats) / mean loss (nats)")
ax.set_title(f"Entrenado a L0 = {L0}, {len(SEEDS)} semillas / trained at L0 = {L0}, seeds")
ax.legend()
save_figure(fig, "19_02_loss_by_length")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-statistics", "locked": true, "points": 2}
check = seed_statistics(rows, "rope", L0)
values = [r["mean_loss"] for r in rows if r["encoding"] == "rope" and r["eval_length"] == L0]
assert check["n"] == len(SEEDS), "n = número de semillas / number of seeds"
assert math.isclose(check["mean"], float(np.mean(values))), "media / mean"
assert math.isclose(check["std"], float(np.std(values, ddof=1))), "desviación muestral / sample std (n - 1)"
assert math.isclose(check["se"], check["std"] / math.sqrt(len(SEEDS))), "se = std / sqrt(n)"
### BEGIN HIDDEN TESTS
fake = [
    {"encoding": "a", "eval_length": 10, "mean_loss": v, "seed": s}
    for s, v in enumerate([1.0, 2.0, 4.0])
] + [{"encoding": "b", "eval_length": 10, "mean_loss": 9.0, "seed": 0}]
got = seed_statistics(fake, "a", 10)
assert got["n"] == 3 and math.isclose(got["mean"], 7 / 3)
assert math.isclose(got["std"], math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 2))
assert math.isclose(got["se"], got["std"] / math.sqrt(3))
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. ¿Qué diferencias son reales? / Which differences are real?
#
# **[es]** Dos codificaciones $a$ y $b$ se distinguen con claridad cuando la diferencia de sus
# medias supera dos veces el error típico de esa diferencia:
# $|\bar x_a - \bar x_b| > 2\sqrt{\mathrm{se}_a^2 + \mathrm{se}_b^2}$. Es una regla práctica (con
# tres semillas, el factor 2 es optimista: una prueba *t* pediría más), pero basta para no leer
# ruido como resultado. Escribe `clearly_different(a, b)` con dos diccionarios de
# `seed_statistics`.
#
# **[en]** Two encodings $a$ and $b$ are clearly distinguished when the difference of their means
# exceeds twice the standard error of that difference:
# $|\bar x_a - \bar x_b| > 2\sqrt{\mathrm{se}_a^2 + \mathrm{se}_b^2}$. It is a rule of thumb (with
# three seeds, the factor 2 is optimistic: a *t* test would ask for more), but it is enough not to
# read noise as a result. Write `clearly_different(a, b)` with two dictionaries from
# `seed_statistics`.


# %% nbgrader={"grade_id": "separated", "solution": true}
def clearly_different(a: dict[str, float], b: dict[str, float], z: float = 2.0) -> bool:
    """True when |mean_a - mean_b| > z * sqrt(se_a^2 + se_b^2)."""
    ### BEGIN SOLUTION
    return abs(a["mean"] - b["mean"]) > z * math.sqrt(a["se"] ** 2 + b["se"] ** 2)
    ### END SOLUTION


# %% nbgrader={"grade_id": "separated-table", "locked": true}
for factor in (1, 8):
    print(f"\n{factor}x = {factor * L0} tokens: '<' = claramente menor / clearly lower, '·' = no se distinguen / not distinguished")
    print(f"{'':<12}" + "".join(f"{name:>11}" for name in ENCODINGS))
    for a in ENCODINGS:
        marks = []
        for b in ENCODINGS:
            sa, sb = stats[a, factor], stats[b, factor]
            if a == b:
                marks.append("")
            elif clearly_different(sa, sb):
                marks.append("<" if sa["mean"] < sb["mean"] else ">")
            else:
                marks.append("·")
        print(f"{a:<12}" + "".join(f"{m:>11}" for m in marks))

# %% nbgrader={"grade": true, "grade_id": "test-separated", "locked": true, "points": 2}
near = {"mean": 2.00, "se": 0.05}
assert not clearly_different(near, {"mean": 2.10, "se": 0.05}), "0.10 < 2 sqrt(0.05^2 + 0.05^2): no se distinguen / they cannot be told apart"
assert clearly_different(near, {"mean": 2.20, "se": 0.05}), "0.20 > 0.141: se distinguen / they are clearly different"
assert clearly_different({"mean": 3.0, "se": 0.0}, near) == clearly_different(near, {"mean": 3.0, "se": 0.0}), "clearly_different debe ser simétrica / clearly_different must be symmetric"
### BEGIN HIDDEN TESTS
assert not clearly_different({"mean": 1.0, "se": 0.3}, {"mean": 1.0, "se": 0.0})
assert clearly_different({"mean": 1.0, "se": 0.03}, {"mean": 1.1, "se": 0.04}, z=1.0)
assert not clearly_different({"mean": 1.0, "se": 0.03}, {"mean": 1.1, "se": 0.04}, z=3.0)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] ¿Qué codificaciones mantienen la pérdida a $8\times$ y cuáles
# se rompen? Compáralo con la tabla de Press et al. de la lección: ¿coincide el orden? Cita tus
# números, con su dispersión. · [en] Which encodings keep their loss at $8\times$ and which break
# down? Compare with Press et al.'s table in the lesson: does the ordering match? Quote your
# numbers, with their spread.

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# [es] Con el tamaño completo y tres semillas, ALiBi se mantiene plana (unos 2.17 nats a
# $1\times$ y 2.11 a $8\times$: baja, porque más posiciones tienen más contexto) y T5 sube
# poco (unas cinco centésimas). RoPE aguanta a $2\times$ y sube unas tres décimas a $8\times$;
# la aprendida sube lo mismo, pero ya desde $2\times$ (usa filas que nunca se entrenaron), y la
# sinusoidal es la que más sube (unas siete décimas) y con mucha más dispersión entre semillas
# (unas dos décimas, frente a una o dos centésimas de las demás). A $8\times$ el orden es ALiBi <
# T5 < RoPE < sinusoidal, el mismo que en la tabla de Press et al., y cada paso supera el ruido.
# Los tamaños no coinciden: allí la sinusoidal sube 2.69 nats; aquí mucho menos, porque la
# pérdida de un modelo de caracteres depende sobre todo de los últimos caracteres. (Los números
# concretos dependen de la ejecución; la respuesta debe citar los suyos.)
#
# [en] At full size with three seeds, ALiBi stays flat (about 2.17 nats at $1\times$ and 2.11
# at $8\times$: it drops, because more positions have more context) and T5 rises little (about
# five hundredths). RoPE holds at $2\times$ and rises about three tenths at $8\times$; the
# learned table rises as much, but already from $2\times$ (it uses rows that were never
# trained), and sinusoidal rises most (about seven tenths) and with much more spread across
# seeds (about two tenths, against one or two hundredths for the rest). At $8\times$ the
# ordering is ALiBi < T5 < RoPE < sinusoidal, the same as in Press et al.'s table, and each step
# exceeds the noise. The sizes do not match: there sinusoidal rises 2.69 nats; here much less,
# because a character model's loss depends mostly on the last few characters. (The exact numbers
# depend on the run; the answer must quote its own.)
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] Mira `none` (NoPE) y la tabla de la parte 3 a $1\times$. ¿Es
# peor que las demás dentro de la longitud de entrenamiento? ¿Qué diferencias a $1\times$ superan
# el ruido entre semillas y cuáles no? ¿Cómo puede un modelo sin codificación saber algo de la
# posición? · [en] Look at `none` (NoPE) and at part 3's table at $1\times$. Is it worse than the
# others within the training length? Which differences at $1\times$ exceed the seed-to-seed noise
# and which do not? How can a model with no encoding know anything about position?

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Sí: a $1\times$, NoPE queda unas dos décimas por detrás de RoPE, ALiBi y T5, con la
# aprendida cerca y solo la sinusoidal detrás. El ruido entre semillas es pequeño (una o dos
# centésimas), así que casi todas las diferencias a $1\times$ lo superan; la excepción es ALiBi
# frente a T5, que no se distinguen. A esta escala la penalización de NoPE es mayor que en los
# modelos grandes (Haviv et al.). Sabe algo de posición gracias a la máscara causal: el token $i$
# promedia sobre $i + 1$ valores, así que la atención al token de inicio pesa $1/(i+1)$ y el
# modelo puede "contar". Esa señal se aplana con la distancia, por eso NoPE no mide distancias
# largas con precisión, aunque en texto se degrade poco en media con secuencias largas.
#
# [en] Yes: at $1\times$, NoPE is about two tenths behind RoPE, ALiBi and T5, with the learned
# table close and only sinusoidal behind it. The seed-to-seed noise is small (one or two
# hundredths), so nearly every difference at $1\times$ exceeds it; the exception is ALiBi against
# T5, which cannot be told apart. At this scale NoPE's penalty is larger than in large models
# (Haviv et al.). It knows something about position thanks to the causal mask: token $i$ averages
# over $i + 1$ values, so attention to the start token weighs $1/(i+1)$ and the model can "count".
# That signal flattens with distance, which is why NoPE cannot measure long distances precisely,
# even though on text its mean degrades little on long sequences.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. Una tarea en la que la posición lo es todo: copiar / A task where position is everything: copying
#
# **[es]** `BOS a_1 .. a_n SEP a_1 .. a_n`: la segunda mitad repite la primera, y solo se puntúan
# sus tokens. $a_i$ se predice desde el token anterior, así que para acertarlo hay que mirar
# exactamente $n$ posiciones atrás (su copia está $n + 1$ posiciones después del original), o
# encontrar la copia anterior del token actual y leer el siguiente. Entrenamos con secuencias de
# $L_0 = 64$ tokens (32 símbolos y su copia) y evaluamos la exactitud de la segunda
# mitad con secuencias de $2\times$ y $4\times$ esa longitud, donde las distancias son mayores que
# todas las vistas. El azar es $1/64$.
#
# **[en]** `BOS a_1 .. a_n SEP a_1 .. a_n`: the second half repeats the first, and only its tokens
# are scored. $a_i$ is predicted from the token before it, so getting it right means looking
# exactly $n$ positions back (its copy sits $n + 1$ positions after the original), or finding the
# earlier copy of the current token and reading the next one. We train on sequences of
# $L_0 = 64$ tokens (32 symbols and their copy) and evaluate the accuracy of the second
# half on sequences of $2\times$ and $4\times$ that length, where the distances exceed every one
# seen. Chance is $1/64$.

# %% nbgrader={"grade_id": "train-copy", "locked": true}
copy_task = load_data("copy")
COPY_ENCODINGS = ("none", "rope", "alibi", "t5")
COPY_MODEL = dataclasses.replace(MODEL, vocab_size=copy_task.vocab_size)  # same size, L0
COPY_TRAINING = dataclasses.replace(TRAINING, steps=sized(full=1500, test=6), seed=0)
COPY_FACTORS = (1, 2, 4)
start = time.perf_counter()
accuracy = {}
for name in COPY_ENCODINGS:
    result = train(
        dataclasses.replace(COPY_MODEL, positional=name),
        COPY_TRAINING,
        copy_task,
        label=f"copy {name:<6}",
    )
    found = evaluate_lengths(result["model"], copy_task, COPY_FACTORS, n=sized(full=32, test=4))
    accuracy[name] = [r["accuracy"] for r in found]
print(f"{'':<8}" + "".join(f"{f'{f * L0} tokens':>12}" for f in COPY_FACTORS))
for name, values in accuracy.items():
    print(f"{name:<8}" + "".join(f"{v:>12.3f}" for v in values))
print(f"{time.perf_counter() - start:.0f} s")

fig, ax = plt.subplots(figsize=(6, 4))
for name, values in accuracy.items():
    ax.plot([f * L0 for f in COPY_FACTORS], values, marker="o", label=name)
ax.axhline(1 / 64, color="gray", ls=":", lw=1)
ax.text(L0, 1 / 64, " azar / chance", va="bottom", color="gray")
ax.set_xscale("log", base=2)
ax.set_xlabel("longitud / length")
ax.set_ylabel("exactitud de la copia / copy accuracy")
ax.set_title(f"Copia, entrenada a {L0} tokens / copy, trained at {L0} tokens")
ax.legend()
save_figure(fig, "19_02_copy")
plt.show()

# %% [markdown] nbgrader={"grade_id": "q3", "locked": true}
# **Pregunta 3 / Question 3.** [es] ¿Qué codificaciones aprenden a copiar con secuencias de la
# longitud de entrenamiento, y cuáles siguen copiando con secuencias más largas? Relaciónalo con
# lo que viste en el texto: ¿por qué una codificación que apenas empeora en la pérdida del texto
# puede fallar por completo aquí? · [en] Which encodings learn to copy at the training length, and
# which keep copying on longer sequences? Relate it to what you saw on text: why can an encoding
# that barely gets worse on the text loss fail completely here?

# %% [markdown] nbgrader={"grade_id": "q3-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Con el tamaño completo, las cuatro aprenden a copiar con 64 tokens (RoPE y T5 sin un
# error, NoPE casi, ALiBi algo menos según la semilla), y con 128 tokens todas caen al azar
# ($1/64 \approx 0.016$) o cerca de él; ALiBi es la única que queda algo por encima (en torno a
# 0.1-0.2). Ninguna generaliza. RoPE mejoraba su pérdida de texto a $2\times$ y aquí falla por
# completo: la pérdida del texto se explica casi toda con los últimos caracteres, que están cerca
# en cualquier longitud, mientras que la copia exige leer un token a una distancia concreta que
# nunca se vio (33 en el entrenamiento, 65 a $2\times$). Una media sobre muchas posiciones fáciles
# esconde ese fallo; una tarea que solo puntúa las posiciones difíciles lo enseña. Como todas las
# secuencias de entrenamiento tienen la misma longitud, "mira 33 atrás" basta para entrenar, y
# eso no sirve para otras longitudes. (Es una sola semilla: los detalles pueden cambiar.)
#
# [en] At full size, the four of them learn to copy with 64 tokens (RoPE and T5 without a
# mistake, NoPE almost, ALiBi somewhat less depending on the seed), and with 128 tokens all of
# them fall to chance ($1/64 \approx 0.016$) or close to it; ALiBi is the only one left somewhat
# above (around 0.1-0.2). None generalises. RoPE improved its text loss at $2\times$ and fails
# completely here: the text loss is explained almost entirely by the last few characters, which
# are close at any length, whereas copying requires reading a token at a specific distance never
# seen (33 in training, 65 at $2\times$). An average over many easy positions hides that failure;
# a task that scores only the hard positions reveals it. Since every training sequence has the
# same length, "look 33 back" is enough to train, and it is useless at other lengths. (It is a
# single seed: the details may change.)
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "q4", "locked": true}
# **Pregunta 4 / Question 4.** [es] Escribe, en unas pocas frases, qué muestra este laboratorio y
# qué no puede mostrar. Piensa en el tamaño del modelo y en cuánto se entrenó, en el número de
# semillas, en qué mide la pérdida de un modelo de caracteres y en qué cambiaría con un modelo de
# miles de millones de parámetros. · [en] Write, in a few sentences, what this lab shows and what
# it cannot show. Think about the size of the model and how long it was trained, the number of
# seeds, what a character model's loss measures, and what would change with a model of billions of
# parameters.

# %% [markdown] nbgrader={"grade_id": "q4-answer", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# [es] Muestra el orden cualitativo de la literatura al extrapolar (ALiBi y T5 planas, RoPE en
# medio, sinusoidal y aprendida rotas), que la diferencia entre codificaciones dentro de $L_0$ es
# pequeña y en parte del tamaño del ruido, y que una tarea posicional revela fallos que la pérdida
# media esconde. No muestra los números de los artículos ni el orden a gran escala: el modelo
# tiene unos cien mil parámetros y se entrenó 400 pasos, muy lejos de la convergencia, y un modelo
# poco entrenado hace que las codificaciones se parezcan. Tres semillas dan una idea del ruido,
# no una estimación precisa; la regla de las dos veces el error típico es optimista. La pérdida de
# caracteres depende del contexto local, así que no mide si el modelo usa el contexto lejano. Con
# modelos grandes el panorama cambia: la NoPE de 1.3B parámetros de Kazemnejad et al. y ALiBi
# acaban rompiéndose más allá de unas $1.6\times$, y los modelos actuales usan RoPE con escalado
# (lección 18.02). Es una reproducción del mecanismo, no del resultado.
#
# [en] It shows the literature's qualitative ordering when extrapolating (ALiBi and T5 flat, RoPE
# in between, sinusoidal and learned broken), that the difference between encodings within $L_0$
# is small and partly the size of the noise, and that a positional task reveals failures the mean
# loss hides. It does not show the papers' numbers or the ranking at scale: the model has about a
# hundred thousand parameters and was trained for 400 steps, far from convergence, and an
# undertrained model makes the encodings look alike. Three seeds give an idea of the noise, not a
# precise estimate; the twice-the-standard-error rule is optimistic. The character loss depends on
# local context, so it does not measure whether the model uses distant context. With large models
# the picture changes: Kazemnejad et al.'s 1.3B-parameter NoPE and ALiBi eventually break down past
# about $1.6\times$, and current models use RoPE with scaling (lesson 18.02). It is a reproduction
# of the mechanism, not of the result.
# ### END SOLUTION

# %% nbgrader={"grade_id": "timing", "locked": true}
print(f"Laboratorio completo / whole lab: {time.perf_counter() - LAB_START:.0f} s")
