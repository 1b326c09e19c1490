"""The course map: every lab, its lesson page, and the encoding files the student completes.

One list serves the generators (stubs, notebooks), the self-check, the demo and the grader, so a
new lab is added here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Lab:
    """One lab of the course.

    Attributes:
        id: lesson number as students say it, ``"17.01"``.
        slug: file-name form, ``"17_01_sinusoidal"``: the notebook is ``labs/<slug>.ipynb``, its
            visible tests are ``tests/student/test_<slug>.py``; its source and hidden checks stay
            in the instructors' repository (:attr:`folder`).
        title_es, title_en: the lesson's title in each language.
        page: path of the lesson page inside ``docs_es/`` and ``docs_en/``.
        modules: encoding files of ``minimodel.positional`` the student completes in this lab.
        full_run_s: seconds the whole lab takes at full size against the reference on 2 quiet
            cores, from scratch (the course's benchmarks measure it); progress lines announce it,
            and the demo runs at full size only the labs that take under ``DEMO_FULL_S``.
        needs: labs whose files this lab's notebook runs (it trains or decodes with those
            encodings): they must be done first. The self-check says which are not.
    """

    id: str
    slug: str
    title_es: str
    title_en: str
    page: str
    modules: tuple[str, ...]
    full_run_s: float
    needs: tuple[str, ...] = ()

    @property
    def folder(self) -> Path:
        """Where the lab is written, relative to the repository (instructor-only, never released):

        - ``notebook.py``: the solved notebook source (Jupytext percent format); the student's
          ``labs/<slug>.ipynb`` is generated from it.
        - ``checks.py``: the hidden checks: inputs, probe groups, items and their judges.
        - ``references.{npz,json}``: what the reference gives on the hidden inputs, and what each
          classic mistake gives there (generated from the two above and the reference modules).
        """
        return Path("solutions") / "labs" / self.slug

    @property
    def source(self) -> Path:
        """The solved notebook source, relative to the repository."""
        return self.folder / "notebook.py"


DEMO_FULL_S = 30.0
# The Mini-GPT encodings the labs name, in order (``minimodel.encodings.COURSE``): kept here, with
# the labs, so that what only needs their names (the grader's checks) does not load PyTorch.
COURSE_ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")

LABS: tuple[Lab, ...] = (
    Lab(
        id="17.00",
        slug="17_00_why_position",
        title_es="Por qué hace falta la posición",
        title_en="Why position is needed",
        page="17/00-why-position.md",
        modules=("equivariance",),
        full_run_s=11.7,
    ),
    Lab(
        id="17.01",
        slug="17_01_sinusoidal",
        title_es="Codificación posicional sinusoidal",
        title_en="Sinusoidal positional encoding",
        page="17/01-sinusoidal.md",
        modules=("sinusoidal",),
        full_run_s=5.6,
    ),
    Lab(
        id="17.02",
        slug="17_02_learned",
        title_es="Posiciones aprendidas frente a sinusoidales",
        title_en="Learned vs sinusoidal positions",
        page="17/02-learned-vs-sinusoidal.md",
        modules=("learned",),
        full_run_s=25.1,
        needs=("17.01",),
    ),
    Lab(
        id="17.03",
        slug="17_03_rope",
        title_es="RoPE: embeddings posicionales rotatorios",
        title_en="RoPE: rotary position embeddings",
        page="17/03-rope.md",
        modules=("rope",),
        full_run_s=5.7,
    ),
    Lab(
        id="17.04",
        slug="17_04_alibi",
        title_es="ALiBi: sesgos lineales en la atención",
        title_en="ALiBi: attention with linear biases",
        page="17/04-alibi.md",
        modules=("alibi",),
        full_run_s=5.8,
    ),
    Lab(
        id="17.05",
        slug="17_05_relative_bias",
        title_es="Sesgos de posición relativa: T5 y Swin",
        title_en="Relative position biases: T5 and Swin",
        page="17/05-relative-bias.md",
        modules=("relative_bias",),
        full_run_s=5.4,
    ),
    Lab(
        id="17.06",
        slug="17_06_two_d",
        title_es="Posiciones en 2-D y visión",
        title_en="2-D positions and vision",
        page="17/06-two-d-and-vision.md",
        modules=("two_d",),
        full_run_s=7.0,
    ),
    Lab(
        id="18.01",
        slug="18_01_extrapolation",
        title_es="Extrapolación: entrenar corto, evaluar largo",
        title_en="Extrapolation: train short, test long",
        page="18/01-extrapolation.md",
        modules=("extrapolation",),
        full_run_s=190.2,
        needs=("17.01", "17.02", "17.03", "17.04", "17.05"),
    ),
    Lab(
        id="18.02",
        slug="18_02_rope_scaling",
        title_es="Escalado de RoPE para contextos largos",
        title_en="RoPE scaling for long context",
        page="18/02-rope-scaling.md",
        modules=("scaling",),
        full_run_s=162.7,
        needs=("17.03",),
    ),
    Lab(
        id="18.03",
        slug="18_03_kv_cache",
        title_es="La caché KV: decodificación incremental exacta",
        title_en="The KV cache: exact incremental decoding",
        page="18/03-kv-cache.md",
        modules=("cache_positions",),
        full_run_s=49.5,
        needs=("17.01", "17.02", "17.03", "17.04", "17.05"),
    ),
    Lab(
        id="19.01",
        slug="19_01_mini_gpt",
        title_es="El Mini-GPT de principio a fin",
        title_en="The Mini-GPT end to end",
        page="19/01-mini-gpt.md",
        modules=(),  # plugs in the encodings of 17.01-17.05; no new file to complete
        full_run_s=240.1,
        needs=("17.01", "17.02", "17.03", "17.04", "17.05"),
    ),
    Lab(
        id="19.02",
        slug="19_02_experiments",
        title_es="Experimentos: la literatura a escala de portátil",
        title_en="Experiments: the literature at laptop scale",
        page="19/02-experiments.md",
        modules=(),  # trains and compares the encodings of 17.01-17.05
        full_run_s=217.3,
        needs=("17.01", "17.02", "17.03", "17.04", "17.05"),
    ),
)


def find_lab(key: str) -> Lab:
    """The lab named by its id (``"17.01"``), its slug, or a unique prefix of the slug."""
    matches = [lab for lab in LABS if key in (lab.id, lab.slug) or lab.slug.startswith(key)]
    if len(matches) != 1:
        from minimodel.messages import bilingual

        known = ", ".join(lab.id for lab in LABS)
        raise KeyError(
            bilingual(
                f"No hay un laboratorio {key!r}. Laboratorios: {known}.",
                f"There is no lab {key!r}. Labs: {known}.",
            )
        )
    return matches[0]


def lab_of(module: str) -> Lab | None:
    """The lab in which students complete ``minimodel.positional.<module>`` (``None``: none)."""
    return next((lab for lab in LABS if module in lab.modules), None)


def encoding_modules() -> tuple[str, ...]:
    """Every file of ``minimodel.positional`` that students complete, in course order."""
    return tuple(module for lab in LABS for module in lab.modules)
