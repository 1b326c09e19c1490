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
# # Laboratorio 17.02 · Codificaciones aprendidas frente a sinusoidales
# *Lab 17.02 · Learned versus sinusoidal encodings*
#
# **[es]** Una tabla aprendida tiene una fila de parámetros por posición y nada más. En este
# laboratorio la construyes, entrenas con ella y con la sinusoidal un modelo diminuto que tiene
# que copiar el token de tres posiciones atrás, y miras qué pasa con las dos más allá de la
# longitud de entrenamiento: con filas nuevas, con la tabla interpolada y con la fórmula
# sinusoidal, que sí está definida en todas partes.
#
# **[en]** A learned table has one row of parameters per position and nothing else. In this lab
# you build one, use it and the sinusoidal encoding to train a tiny model that must copy the token
# three positions back, and look at what happens to both past the training length: with new rows,
# with the table interpolated, and with the sinusoidal formula, which is defined everywhere.
#
# **Antes de empezar / Before you start**
# 1. Lee la lección / read the lesson: `docs_es/17/02-learned-vs-sinusoidal.md` · `docs_en/17/02-learned-vs-sinusoidal.md`.
# 2. Completa / complete `LearnedPositionalEmbedding.forward` y/and `interpolate_positions` en/in
#    `src/minimodel/positional/learned.py`. La lección 17.01 (`sinusoidal.py`) también se usa aquí
#    / lesson 17.01 (`sinusoidal.py`) is used here too.
# 3. Comprueba tu código / check your code: `make check LAB=17.02`.
# 4. Ejecuta este cuaderno de arriba abajo / run this notebook top to bottom. Las celdas marcadas
#    `TU CÓDIGO` / `YOUR CODE` son tuyas; las de pruebas están bloqueadas.

# %% nbgrader={"grade_id": "setup", "locked": true}
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from minimodel.labkit import reload_edited_modules, save_figure, sized
from minimodel.positional.learned import LearnedPositionalEmbedding, interpolate_positions
from minimodel.positional.sinusoidal import SinusoidalPositionalEncoding

torch.set_num_threads(1)  # un modelo diminuto va más rápido con un hilo / a tiny model runs faster on one thread
torch.set_printoptions(precision=3, sci_mode=False)

# [es] Tus cambios en src/minimodel/positional/ se recargan solos antes de cada celda: no hace
#      falta reiniciar el núcleo (si algo no cambia, Kernel → Restart y ejecuta desde arriba).
# [en] Your edits in src/minimodel/positional/ are reloaded before each cell: no need to restart
#      the kernel (if something does not change, Kernel → Restart and run from the top).
reload_edited_modules()

# %% [markdown] nbgrader={"grade_id": "part1-md", "locked": true}
# ## 1. La tabla y sus parámetros / The table and its parameters
#
# **[es]** `LearnedPositionalEmbedding(max_len, d_model)` guarda una matriz `weight` de
# $L_{\max} \times d$ parámetros y su `forward(x, offset)` suma las filas `offset` a
# `offset + T - 1`. Cuenta los parámetros con las medidas de GPT-2, BERT y ViT-B/16 y comprueba el
# mensaje de error cuando la secuencia no cabe.
#
# **[en]** `LearnedPositionalEmbedding(max_len, d_model)` stores a `weight` matrix of
# $L_{\max} \times d$ parameters and its `forward(x, offset)` adds rows `offset` to
# `offset + T - 1`. Count the parameters with the sizes of GPT-2, BERT and ViT-B/16 and check the
# error message when the sequence does not fit.

# %% nbgrader={"grade_id": "parameters", "locked": true}
sizes = {"GPT-2 small": (1024, 768), "BERT-base": (512, 768), "ViT-B/16, 224 px": (14 * 14 + 1, 768)}
for name, (max_len, d_model) in sizes.items():
    table = LearnedPositionalEmbedding(max_len, d_model)
    count = sum(p.numel() for p in table.parameters())
    print(f"{name:<17} L_max = {max_len:4d}, d = {d_model}: {count:,} parámetros / parameters")

torch.manual_seed(0)
small = LearnedPositionalEmbedding(max_len=6, d_model=4)
x = torch.zeros(1, 2, 4)
print("filas 3 y 4 / rows 3 and 4:\n", small(x, offset=3)[0].detach())
try:
    small(torch.zeros(1, 4, 4), offset=3)
except ValueError as error:
    print(error)

# %% nbgrader={"grade": true, "grade_id": "test-table", "locked": true, "points": 2}
assert count == 197 * 768, "L_max × d parámetros / parameters"
assert torch.equal(small(x, offset=3)[0], small.weight[3:5].detach()), "filas offset.. / rows offset.."
assert small(torch.zeros(2, 6, 4, dtype=torch.float64)).dtype == torch.float64, "conserva el dtype / keeps the dtype"
### BEGIN HIDDEN TESTS
probe = torch.randn(3, 2, 4)
assert torch.allclose(small(probe, offset=4), probe + small.weight[4:6])
small.zero_grad()
small(torch.zeros(1, 2, 4), offset=1).sum().backward()
assert small.weight.grad[[1, 2]].abs().sum() > 0 and small.weight.grad[[0, 3, 4, 5]].abs().sum() == 0
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "part2-md", "locked": true}
# ## 2. Una tarea que solo se resuelve con la posición / A task only position can solve
#
# **[es]** Cada secuencia son $T = 32$ tokens al azar de un vocabulario de 16; en la posición $t$
# el modelo debe predecir el token de la posición $t - 3$. El contenido no ayuda: hay que mirar
# exactamente tres posiciones atrás. El modelo es una sola cabeza de atención causal entre un
# *embedding* de tokens y una capa lineal de salida; lo único que cambia entre los dos es la
# codificación posicional que se suma a la entrada.
#
# **[en]** Each sequence is $T = 32$ random tokens from a vocabulary of 16; at position $t$ the
# model must predict the token at position $t - 3$. Content does not help: it has to look exactly
# three positions back. The model is a single causal attention head between a token embedding and
# a linear output layer; the only thing that differs between the two is the positional encoding
# added to the input.

# %% nbgrader={"grade_id": "model", "locked": true}
VOCAB, D, T_TRAIN, LAG = 16, 32, 32, 3
STEPS = sized(full=1500, test=500)


class Copier(nn.Module):
    """Token embedding + positions -> one causal attention head -> logits over the vocabulary."""

    def __init__(self, positions: nn.Module) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.positions = positions  # LearnedPositionalEmbedding o / or SinusoidalPositionalEncoding
        self.q, self.k, self.v = (nn.Linear(D, D, bias=False) for _ in range(3))
        self.out = nn.Linear(D, VOCAB)

    def attention(self, tokens: torch.Tensor) -> torch.Tensor:
        """Attention weights (B, T, T)."""
        x = self.positions(self.embed(tokens))
        logits = self.q(x) @ self.k(x).transpose(-2, -1) / D**0.5
        T = tokens.shape[1]
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        return logits.masked_fill(future, float("-inf")).softmax(dim=-1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) -> logits (B, T, VOCAB)."""
        x = self.positions(self.embed(tokens))
        return self.out(self.attention(tokens) @ self.v(x))


def random_tokens(batch: int, T: int, generator: torch.Generator) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, T), generator=generator)


def train(model: Copier, steps: int = STEPS, seed: int = 0) -> list[float]:
    """Adam on fresh random batches of 64 sequences of T_TRAIN tokens; returns the losses."""
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(steps):
        tokens = random_tokens(64, T_TRAIN, generator)
        logits = model(tokens)[:, LAG:]  # las posiciones t >= 3 / positions t >= 3
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, :-LAG].reshape(-1))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return losses


models, curves = {}, {}
tables = {"learned": lambda: LearnedPositionalEmbedding(max_len=T_TRAIN, d_model=D),
          "sinusoidal": lambda: SinusoidalPositionalEncoding(D, max_len=512)}
for name, table in tables.items():
    torch.manual_seed(0)
    models[name] = Copier(table())
    start = time.perf_counter()
    curves[name] = train(models[name])
    print(f"{name:<10} pérdida final / final loss {curves[name][-1]:.4f}  ({time.perf_counter() - start:.1f} s)")

fig, ax = plt.subplots(figsize=(7, 3.5))
for name, losses in curves.items():
    ax.plot(losses, label=name)
ax.set_yscale("log")
ax.set_xlabel("paso / step")
ax.set_ylabel("entropía cruzada / cross-entropy")
ax.set_title(f"Copiar el token de t - {LAG}, T = {T_TRAIN} / Copy the token at t - {LAG}")
ax.legend()
save_figure(fig, "17_02_training")
plt.show()

# %% [markdown] nbgrader={"grade_id": "part3-md", "locked": true}
# ## 3. Más allá de $L_{\max}$ / Past $L_{\max}$
#
# **[es]** Escribe `accuracy_by_position(model, tokens)`: para cada posición $t \ge 3$, la
# fracción de secuencias del lote en las que el token más probable es `tokens[:, t - 3]`
# (forma `(T - 3,)`). Después evaluamos con $T = 128$. El modelo aprendido no puede ni
# empezar: su tabla tiene 32 filas. Escribe también `grow_table(table, new_len)`: una tabla
# nueva de `new_len` filas cuyas primeras filas son copia de las entrenadas y el resto, filas
# recién inicializadas (lo que haría cualquiera que amplía `max_len` sin más).
#
# **[en]** Write `accuracy_by_position(model, tokens)`: for each position $t \ge 3$, the
# fraction of sequences of the batch in which the most likely token is `tokens[:, t - 3]`
# (shape `(T - 3,)`). Then we evaluate with $T = 128$. The learned model cannot even start: its
# table has 32 rows. Also write `grow_table(table, new_len)`: a new table of `new_len` rows whose
# first rows are copies of the trained ones and the rest freshly initialised rows (what anyone
# who simply raises `max_len` would get).

# %% nbgrader={"grade_id": "evaluation", "solution": true}
def accuracy_by_position(model: Copier, tokens: torch.Tensor) -> torch.Tensor:
    """tokens (B, T) -> accuracy (T - LAG,) of predicting tokens[:, t - LAG] at each t >= LAG."""
    ### BEGIN SOLUTION
    with torch.no_grad():
        predicted = model(tokens)[:, LAG:].argmax(dim=-1)  # (B, T - LAG)
    return (predicted == tokens[:, :-LAG]).float().mean(dim=0)
    ### END SOLUTION


def grow_table(table: LearnedPositionalEmbedding, new_len: int) -> LearnedPositionalEmbedding:
    """A LearnedPositionalEmbedding(new_len, d) with rows 0..max_len-1 copied from `table`."""
    ### BEGIN SOLUTION
    grown = LearnedPositionalEmbedding(new_len, table.d_model)
    with torch.no_grad():
        grown.weight[: table.max_len] = table.weight
    return grown
    ### END SOLUTION


# %% nbgrader={"grade_id": "past-lmax", "locked": true}
T_EVAL = 128
evaluation = random_tokens(256, T_EVAL, torch.Generator().manual_seed(123))
seen = evaluation[:, :T_TRAIN]
for name, model in models.items():
    print(f"{name:<10} T = {T_TRAIN}: acierto medio / mean accuracy {accuracy_by_position(model, seen).mean():.3f}")

try:
    models["learned"](evaluation)
except ValueError as error:
    print(error)

trained_table = models["learned"].positions
models["learned"].positions = grow_table(trained_table, T_EVAL)
accuracy = {
    "learned, filas nuevas / new rows": accuracy_by_position(models["learned"], evaluation),
    "sinusoidal": accuracy_by_position(models["sinusoidal"], evaluation),
}
models["learned"].positions = trained_table  # deja el modelo como estaba / restore the model

where = torch.arange(LAG, T_EVAL)
fig, ax = plt.subplots(figsize=(7, 3.5))
for name, values in accuracy.items():
    ax.plot(where, values, label=name)
ax.axvline(T_TRAIN, color="gray", ls="--", lw=1)
ax.axhline(1 / VOCAB, color="gray", lw=0.5)
ax.text(T_TRAIN + 1, 0.5, "longitud de entrenamiento\ntraining length", fontsize=8)
ax.set_xlabel("posición t / position t")
ax.set_ylabel("acierto / accuracy")
ax.set_title(f"Entrenado con T = {T_TRAIN}, evaluado con T = {T_EVAL} / Trained at {T_TRAIN}, evaluated at {T_EVAL}")
ax.legend()
save_figure(fig, "17_02_past_lmax")
plt.show()
for name, values in accuracy.items():
    inside, outside = values[: T_TRAIN - LAG].mean(), values[T_TRAIN - LAG + 16 :].mean()
    print(f"{name:<33} t < {T_TRAIN}: {inside:.2f}   t >= {T_TRAIN + 16}: {outside:.2f}   (azar / chance {1 / VOCAB:.3f})")

# %% nbgrader={"grade": true, "grade_id": "test-past-lmax", "locked": true, "points": 3}
for values in accuracy.values():
    assert values.shape == (T_EVAL - LAG,), "una entrada por posición t >= 3 / one entry per position"
    assert values[: T_TRAIN - LAG].mean() > 0.9, "dentro de lo entrenado acierta / inside training it is right"
    assert values[T_TRAIN - LAG + 16 :].mean() < 0.3, "lejos de lo entrenado falla / far from training it fails"
grown = grow_table(trained_table, 40)
assert grown.weight.shape == (40, D) and torch.equal(grown.weight[:T_TRAIN], trained_table.weight), "grown debe tener 40 filas y conservar las entrenadas / grown must have 40 rows and keep the trained ones"
### BEGIN HIDDEN TESTS
assert isinstance(grown, LearnedPositionalEmbedding) and grown.max_len == 40
assert not torch.equal(grown.weight[T_TRAIN:], torch.zeros(40 - T_TRAIN, D))
fake = Copier(SinusoidalPositionalEncoding(D, max_len=64))
probe = random_tokens(8, 10, torch.Generator().manual_seed(5))
with torch.no_grad():
    hits = (fake(probe)[:, LAG:].argmax(-1) == probe[:, :-LAG]).float().mean(0)
assert torch.allclose(accuracy_by_position(fake, probe), hits)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q1", "locked": true}
# **Pregunta 1 / Question 1.** [es] La fórmula sinusoidal da un vector para cualquier posición y,
# aun así, el modelo sinusoidal falla poco después de $t = 32$. ¿Por qué? ¿Y por qué el aprendido
# con filas nuevas falla justo en $t = 32$? · [en] The sinusoidal formula gives a vector for any
# position and yet the sinusoidal model fails shortly after $t = 32$. Why? And why does the
# learned one with new rows fail right at $t = 32$?

# %% [markdown] nbgrader={"grade_id": "q1-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Las filas nuevas de la tabla aprendida son ruido que el entrenamiento nunca tocó: en cuanto
# la consulta o la clave necesaria están en una posición $\ge 32$, sus productos escalares no
# significan nada y el acierto cae al azar ($1/16$). Con la sinusoidal los vectores existen, pero
# el modelo solo ha visto las combinaciones de posiciones $0..31$; $W_Q$ y $W_K$ se ajustaron a
# esas 32 filas, no a la estructura de rotación de toda la tabla, así que nada le obliga a que el
# máximo del logit siga en $t - 3$ para posiciones nuevas. Que la fórmula esté definida no
# significa que el modelo generalice: eso depende de lo que aprendió.
#
# [en] The new rows of the learned table are noise that training never touched: as soon as the
# query or the needed key sits at a position $\ge 32$, their dot products mean nothing and
# accuracy falls to chance ($1/16$). With the sinusoidal encoding the vectors exist, but the model
# has only seen combinations of positions $0..31$; $W_Q$ and $W_K$ were fitted to those 32 rows,
# not to the rotation structure of the whole table, so nothing forces the logit's maximum to stay
# at $t - 3$ for new positions. That the formula is defined does not mean the model generalises:
# that depends on what it learned.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part4-md", "locked": true}
# ## 4. Interpolar la tabla / Interpolating the table
#
# **[es]** `interpolate_positions(table, new_len)` estira la tabla de 32 filas a 128: la fila
# nueva $j$ es la tabla leída en la posición fraccionaria $j \cdot 31/127$. Todas las filas nuevas
# son mezclas de filas entrenadas, pero una distancia de 3 filas antiguas pasa a ser de
# $3 \cdot 127/31 \approx 12.3$ filas nuevas. Mide a qué distancia mira ahora la cabeza: para
# cada consulta, la posición de la clave con más peso medio.
#
# **[en]** `interpolate_positions(table, new_len)` stretches the 32-row table to 128 rows: new row
# $j$ is the table read at the fractional position $j \cdot 31/127$. Every new row is a blend of
# trained rows, but a distance of 3 old rows becomes $3 \cdot 127/31 \approx 12.3$ new rows.
# Measure how far back the head now looks: for each query, the key position with the largest
# mean weight.

# %% nbgrader={"grade_id": "interpolation", "locked": true}
def attention_lag(model: Copier, tokens: torch.Tensor) -> torch.Tensor:
    """For each query t, t minus the key position with the largest mean attention weight."""
    with torch.no_grad():
        weights = model.attention(tokens).mean(dim=0)  # (T, T)
    return torch.arange(tokens.shape[1]) - weights.argmax(dim=-1)


stretched = LearnedPositionalEmbedding(T_EVAL, D)
with torch.no_grad():
    stretched.weight.copy_(interpolate_positions(trained_table.weight.detach(), T_EVAL))
models["learned"].positions = stretched
lag_interpolated = attention_lag(models["learned"], evaluation)
accuracy_interpolated = accuracy_by_position(models["learned"], evaluation)
models["learned"].positions = trained_table
lag_trained = attention_lag(models["learned"], seen)

print("distancia con la tabla entrenada / lag with the trained table, t >= 8:", lag_trained[8:].unique().tolist())
print("mediana con la tabla interpolada / median with the interpolated table, t >= 32:", lag_interpolated[32:].median().item())
print(f"acierto medio interpolada / mean accuracy interpolated: {accuracy_interpolated.mean():.3f}")

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(lag_trained, "o", ms=3, label=f"tabla entrenada / trained table (T = {T_TRAIN})")
ax.plot(lag_interpolated, ".", ms=3, label=f"interpolada / interpolated (T = {T_EVAL})")
ax.axhline(LAG * (T_EVAL - 1) / (T_TRAIN - 1), color="gray", ls="--", lw=1, label="3 · 127/31")
ax.set_xlabel("posición de la consulta t / query position t")
ax.set_ylabel("t - argmax del peso / t - argmax weight")
ax.legend()
save_figure(fig, "17_02_interpolation")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "test-interpolation", "locked": true, "points": 1}
assert lag_trained[8:].eq(LAG).all(), "la cabeza entrenada mira 3 atrás / the trained head looks 3 back"
assert 9 <= lag_interpolated[32:].median().item() <= 15, "interpolada: unas 12 posiciones / about 12 positions"
assert accuracy_interpolated.mean() < 0.3, "la tabla interpolada no debe acertar más del 30 % / the interpolated table must not get more than 30 % right"
### BEGIN HIDDEN TESTS
resized = interpolate_positions(trained_table.weight.detach(), T_EVAL)
assert torch.allclose(resized[0], trained_table.weight[0]) and torch.allclose(resized[-1], trained_table.weight[-1])
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade_id": "q2", "locked": true}
# **Pregunta 2 / Question 2.** [es] Interpolar ha sido peor que no hacer nada en esta tarea. ¿En
# qué situación es justo lo que conviene, y por qué ViT interpola su tabla al cambiar la resolución
# de las imágenes? · [en] Interpolating was worse than doing nothing on this task. In what
# situation is it exactly right, and why does ViT interpolate its table when the image resolution
# changes?

# %% [markdown] nbgrader={"grade_id": "q2-answer", "solution": true, "grade": true, "points": 2}
# ### BEGIN SOLUTION
# [es] Interpolar conserva la posición *relativa a la longitud total* (la fila $j$ nueva representa
# la fracción $j/127$ del recorrido), no la distancia en tokens. Esta tarea mide distancias en
# tokens, así que la cabeza acaba mirando unas 12 posiciones atrás. En ViT, en cambio, cada fila
# es un trozo de la imagen: con más resolución hay más trozos, pero el trozo nuevo de la esquina
# superior izquierda sigue cubriendo la misma zona de la imagen que el antiguo. Interpolar la
# rejilla da a cada trozo nuevo la posición de la zona que cubre, que es lo que el modelo aprendió,
# y un ajuste fino corto termina el trabajo.
#
# [en] Interpolating keeps the position *relative to the total length* (new row $j$ stands for the
# fraction $j/127$ of the way), not the distance in tokens. This task measures distances in
# tokens, so the head ends up looking about 12 positions back. In ViT, by contrast, each row is a
# patch of the image: at a higher resolution there are more patches, but the new top-left patch
# still covers the same area of the image as the old one. Interpolating the grid gives each new
# patch the position of the area it covers, which is what the model learned, and a short
# fine-tune finishes the job.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade_id": "part5-md", "locked": true}
# ## 5. Qué ha aprendido la tabla / What the table learned
#
# **[es]** Compara la similitud coseno entre las filas de la tabla aprendida con la de la tabla
# sinusoidal de la misma anchura. En la sinusoidal solo depende de la distancia, por construcción:
# bandas paralelas a la diagonal. En la aprendida, cualquier estructura la ha puesto el
# entrenamiento, que solo premiaba una cosa: que la fila $t$ y la $t - 3$ encajen a través de
# $W_Q$ y $W_K$.
#
# **[en]** Compare the cosine similarity between the rows of the learned table with that of the
# sinusoidal table of the same width. In the sinusoidal one it depends only on the distance, by
# construction: bands parallel to the diagonal. In the learned one, any structure was put there
# by training, which rewarded only one thing: that row $t$ and row $t - 3$ match through $W_Q$ and
# $W_K$.

# %% nbgrader={"grade_id": "similarity", "locked": true}
tables = {
    "aprendida / learned": trained_table.weight.detach(),
    "sinusoidal": models["sinusoidal"].positions.pe[:T_TRAIN],
}
fig, axes = plt.subplots(1, 2, figsize=(9, 4))
for ax, (name, rows) in zip(axes, tables.items(), strict=True):
    unit = F.normalize(rows, dim=-1)
    image = ax.imshow(unit @ unit.T, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_title(name)
    ax.set_xlabel("posición / position")
fig.colorbar(image, ax=axes)
save_figure(fig, "17_02_similarity")
plt.show()
