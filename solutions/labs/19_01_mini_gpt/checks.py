"""Hidden checks of lab 19.01 (the Mini-GPT: parameters, cached decoding, memory).

The lab has no module of its own: it is graded from its notebook (three auto-graded cells,
8 points; the written answers are graded by hand), with the student's encodings of phase 17
inside the model, and from one probe group that computes outside the kernel what the modules
alone decide.

- ``test-parameters``: the formula and the model's count for every encoding, on the lesson's
  configuration and on a hidden one (other vocabulary, widths, heads, buckets), exactly.
  Diagnosed: the tied output layer counted twice, the layer norms of each block or the final one
  left out, the learned table or T5's per-head scalars left out.
- ``test-cached``: the shape of the cached logits and whether they carry gradients, exactly; the
  largest differences from the full pass on random models (visible, and hidden with other
  prompts and encodings: float32 noise that changes with the machine) by property, below 2e-5 as
  the test cell. Diagnosed: the prefill's logits left out, a token fed twice, gradients kept.
  The differences are also computed by the probe group ``cached``, on the same models and
  prompts, from the student's modules (``minimodel.cache_gaps`` with the grader's own decode):
  each property holds only when the group's gaps are below 2e-5 too, so a cell that forges the
  kernel's records (or a ``cached_logits`` that skips the cache) gains nothing over what the
  modules give. Shape and gradients are the notebook's function's alone: judged in the kernel.
- ``test-memory``: the bytes of every encoding's parameters, tables and bias, exactly. Diagnosed:
  numbers counted instead of bytes, parameters and buffers swapped.
"""

from __future__ import annotations

import numpy as np

from grader.hidden.cells import EXACT, Mistake, cell_judge, differences_below, value
from grader.hidden.spec import Case, CellCheck, Function, Group, Input, LabChecks
from grader.trusted.verdicts import Finding
from minimodel.course import COURSE_ENCODINGS as ENCODINGS

# (V, C, N, H, block_size, t5_num_buckets): the lesson's model and the test cell's hidden one
LESSON = (98, 128, 4, 4, 128, 32)
HIDDEN = (50, 48, 3, 6, 40, 16)
HIDDEN_CONFIG = ("GPTConfig(vocab_size=50, block_size=40, n_layer=3, n_head=6, n_embd=48, "
                 "positional=n, t5_num_buckets=16, max_len=64)")


def _parameter_mistake(code: str, delta, es: str, en: str) -> Mistake:
    def values(get):
        found = {}
        for record, config in (("counted", LESSON), ("hidden", HIDDEN)):
            wrong = get(f"ref:{record}").copy()
            wrong[:, 0] += [delta(name, *config) for name in ENCODINGS]  # each formula's
            found[record] = wrong
        return found
    return Mistake(code, values, es, en, EXACT)


PARAMETER_MISTAKES = (
    _parameter_mistake(
        "nb-tied-twice", lambda e, V, C, N, H, B, K: V * C,
        "Cuentas dos veces la matriz de embeddings: la capa de salida comparte los pesos de la de "
        "entrada (pesos atados) y num_parameters() la cuenta una vez; V·C va una sola vez.",
        "You count the embedding matrix twice: the output layer shares the input's weights (tied "
        "weights) and num_parameters() counts it once; V·C goes in once."),
    _parameter_mistake(
        "nb-block-norms", lambda e, V, C, N, H, B, K: -2 * N * C,
        "Faltan las dos normas de cada bloque (ln_1 y ln_2, C pesos cada una): el bloque suma "
        "12 C² + 2 C.",
        "The two norms of each block are missing (ln_1 and ln_2, C weights each): a block adds "
        "12 C² + 2 C."),
    _parameter_mistake(
        "nb-final-norm", lambda e, V, C, N, H, B, K: -C,
        "Falta la norma final (ln_f): suma C pesos más.",
        "The final norm (ln_f) is missing: it adds C more weights."),
    _parameter_mistake(
        "nb-learned-table", lambda e, V, C, N, H, B, K: -B * C if e == "learned" else 0,
        "Falta la tabla aprendida: block_size filas de C parámetros.",
        "The learned table is missing: block_size rows of C parameters."),
    _parameter_mistake(
        "nb-t5-heads", lambda e, V, C, N, H, B, K: -K * (H - 1) if e == "t5" else 0,
        "T5 aprende un escalar por cubeta Y por cabeza: t5_num_buckets · n_head parámetros.",
        "T5 learns one scalar per bucket AND per head: t5_num_buckets · n_head parameters."),
)


# The notebook's SMALL model (vocab_size: the stdlib data's), and the records' models and prompts
SMALL = dict(vocab_size=98, block_size=64, n_layer=2, n_head=4, n_embd=64)
HIDDEN_ENCODINGS = ("sinusoidal", "alibi", "t5")
HIDDEN_PROMPTS = [1, 9, 17]
# The grader's decode: the prefill, then one token per step through the same cache
DECODE = Function("lambda model, idx, p, cache: torch.cat([model(idx[:, :p], cache=cache)[0]] + "
                  "[model(idx[:, t : t + 1], cache=cache)[0] for t in range(p, idx.size(1))], "
                  "dim=1)")


def inputs() -> dict[str, np.ndarray]:
    """The notebook's prompts: ``idx`` (2, 36) and the hidden test's ``short`` (3, 17)."""
    import torch

    def prompt(shape, seed):
        generator = torch.Generator().manual_seed(seed)
        return torch.randint(1, SMALL["vocab_size"], shape, generator=generator).numpy()

    return {"idx": prompt((2, 36), 0), "short": prompt((3, 17), 5)}


def _gaps(name: str, key: str, prompt_lens: list[int], seed: int) -> Case:
    return Case("given", "minimodel.cache_gaps.cache_gaps",
                (DECODE, name, Input(key, "int64"), prompt_lens), {"seed": seed, **SMALL})


# The records "differences" and "hidden" computed from the modules, outside the kernel. The
# group imports sinusoidal.py first: both records need it, so a file that does not import fails
# them in the kernel too.
CACHED_CASES = (*(_gaps(name, "idx", [20], 0) for name in ENCODINGS),
                *(_gaps(name, "short", HIDDEN_PROMPTS, 1) for name in HIDDEN_ENCODINGS))
GROUPS = (Group("cached", "sinusoidal", CACHED_CASES),)
VISIBLE_CASES = tuple(range(len(ENCODINGS)))
HIDDEN_CASES = tuple(range(len(ENCODINGS), len(CACHED_CASES)))

CACHED_PROPERTIES = (  # differences below 2e-5, the test cell's limit
    differences_below(
        "nb-cached-differs", "differences", 2e-5,
        "Los logits con caché no coinciden con los de la pasada entera (diferencia de 2e-5 "
        "o más) con alguna codificación.",
        "The cached logits do not match the full pass (a difference of 2e-5 or more) with "
        "some encoding.", probed=VISIBLE_CASES),
    differences_below(
        "nb-cached-differs-hidden", "hidden", 2e-5,
        "Con otros modelos y otros prefill (de 1 token a la secuencia entera), los logits "
        "con caché no coinciden con la pasada entera.",
        "With other models and other prefills (from 1 token to the whole sequence), the "
        "cached logits do not match the full pass.", probed=HIDDEN_CASES),
)


def _cached_findings(ctx, ok: dict) -> list[Finding]:
    found = []
    shape = value(ctx, "shape")
    if isinstance(shape, np.ndarray) and shape.shape == (3,) and shape[1] != 36:
        if shape[1] < 36:
            found.append(Finding(
                "nb-prefill-missing",
                "Faltan posiciones: devuelve los logits del llenado (las prompt_len primeras) y "
                "los de cada paso, concatenados en el eje 1: forma (B, T, V).",
                "Positions are missing: return the logits of the prefill (the first prompt_len) "
                "and those of every step, concatenated along axis 1: shape (B, T, V)."))
        else:
            found.append(Finding(
                "nb-token-twice",
                "Sobran posiciones: tras el llenado de idx[:, :prompt_len], el primer paso es el "
                "token prompt_len, no el último del llenado otra vez.",
                "There are positions too many: after the prefill of idx[:, :prompt_len], the first "
                "step is token prompt_len, not the prefill's last one again."))
    grad = value(ctx, "grad")
    if isinstance(grad, np.ndarray) and grad.size == 1 and float(grad) == 1.0:
        found.append(Finding(
            "nb-grad",
            "Los logits llevan gradientes: decodifica dentro de torch.no_grad() (no hace falta "
            "guardar el grafo y cuesta memoria).",
            "The logits carry gradients: decode inside torch.no_grad() (the graph is not needed "
            "and it costs memory)."))
    return found


MEMORY_MISTAKES = (
    Mistake("nb-numel-only", lambda get: {"memory": get("ref:memory") / 4,
                                          "t5_100": get("ref:t5_100") / 4},
            "Cuentas números, no bytes: multiplica numel() por element_size() (4 en float32).",
            "You count numbers, not bytes: multiply numel() by element_size() (4 in float32).",
            EXACT),
    Mistake("nb-swapped", lambda get: {"memory": get("ref:memory")[:, [1, 0, 2]]},
            "\"parameters\" y \"tables\" están intercambiados: los parámetros son "
            "model.hooks.parameters() y las tablas sus buffers (model.hooks.buffers()).",
            "\"parameters\" and \"tables\" are swapped: the parameters are "
            "model.hooks.parameters() and the tables its buffers (model.hooks.buffers()).",
            EXACT),
)

_RANDOM_MODEL = "GPT(dataclasses.replace(SMALL, positional={name!r})).eval()"

CELLS = (
    CellCheck("test-parameters", "Cuaderno: el número de parámetros",
              "Notebook: the number of parameters",
              {"counted": "np.array([counted[n] for n in ENCODINGS], dtype=np.float64)",
               "hidden": f"np.array([[expected_parameters(c), GPT(c).num_parameters()] "
                         f"for c in ({HIDDEN_CONFIG} for n in ENCODINGS)], "
                         f"dtype=np.float64)"},
              cell_judge(tol=EXACT, mistakes=PARAMETER_MISTAKES)),
    CellCheck("test-cached", "Cuaderno: los logits con caché KV",
              "Notebook: the logits with a KV cache",
              {"shape": "(lambda m: np.array(cached_logits(m, idx, 20).shape))"
                        f"({_RANDOM_MODEL.format(name='rope')})",
               "grad": "(lambda m: float(cached_logits(m, idx, 20).requires_grad))"
                       f"({_RANDOM_MODEL.format(name='alibi')})",
               "differences": "np.array([differences[n] for n in ENCODINGS])",
               "hidden": "(lambda short: np.array([[(cached_logits(m, short, p) - "
                         "m(short)[0]).abs().max().item() for p in (1, 9, 17)] for m in "
                         "[(torch.manual_seed(1), GPT(dataclasses.replace(SMALL, "
                         "positional=n)).eval())[1] for n in ('sinusoidal', 'alibi', 't5')]]))"
                         "(torch.randint(1, data.vocab_size, (3, 17), "
                         "generator=torch.Generator().manual_seed(5)))"},
              cell_judge(tol=EXACT, properties=CACHED_PROPERTIES,
                         diagnoses=(_cached_findings,)),
              volatile=frozenset({"differences", "hidden"}), group="cached"),
    CellCheck("test-memory", "Cuaderno: la memoria de cada codificación",
              "Notebook: the memory of each encoding",
              {"keys": "' '.join(sorted(map(str, memory['none'])))",
               "memory": "np.array([[memory[n]['parameters'], memory[n]['tables'], "
                         "memory[n]['bias']] for n in ENCODINGS], dtype=np.float64)",
               "t5_100": "encoding_memory(lesson_models['t5'], 100)['bias']"},
              cell_judge(tol=EXACT, mistakes=MEMORY_MISTAKES)),
)

CHECKS = LabChecks(lab_id="19.01", inputs=inputs, groups=GROUPS, cells=CELLS, questions=(
    ("por qué las tablas sinusoidales ocupan más",
     "why the sinusoidal tables take more memory"),
    ("qué codificaciones cuestan más tiempo", "which encodings cost more time"),
    ("qué dicen las pérdidas de un entrenamiento breve",
     "what the losses of a brief training run say")))
