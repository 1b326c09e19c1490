"""The vocabulary of hidden checks: what to run in the sandbox and how to judge it outside.

A lab's hidden checks (``solutions/labs/<slug>/checks.py``) declare:

- ``inputs()``: the hidden input arrays, generated deterministically from fixed seeds by the
  trusted parent and handed to the child in a file;
- ``GROUPS``: probe groups. A group is a list of :class:`Case` calls into one student module, run
  in one fresh sandboxed process (a crash costs that group only). A group marked ``device=True``
  runs on the CPU (values), on PyTorch's ``meta`` device (placement, always) and on CUDA (when
  there is a GPU); its reference outputs come from the CPU;
- ``ITEMS``: graded items (:class:`Items`, each declared next to its judge). Each reads the
  outputs of one group and is judged by a function that gets a
  :class:`~grader.trusted.verdicts.JudgeContext` and returns a
  :class:`~grader.trusted.verdicts.Verdict`;
- ``CELLS``: for the lab's notebook, the values to record in place of each auto-graded test
  cell (expressions evaluated in the student's kernel) and the judge of each cell
  (:mod:`grader.hidden.cells`), and what its hand-graded answers are about
  (``LabChecks.questions``).

Nothing in a spec is ever sent to the child except the cases and the input arrays; the reference
outputs and the judges stay in the parent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from minimodel.course import find_lab


@dataclass(frozen=True)
class Input:
    """A hidden input array (by key), as a tensor of ``dtype``.

    Tensors are created on the run's device (``cpu``, ``meta`` or ``cuda``) unless ``device``
    pins them (``"cpu"``: e.g. positions left on the CPU while ``x`` lives on the GPU)."""

    key: str
    dtype: str = "float32"
    device: str | None = None

    def to_json(self) -> dict:
        data = {"$input": self.key, "dtype": self.dtype}
        if self.device:
            data["device"] = self.device
        return data


@dataclass(frozen=True)
class Device:
    """The run's device as a string argument, e.g. ``alibi_slopes(8, device=Device())``."""

    def to_json(self) -> dict:
        return {"$device": True}


@dataclass(frozen=True)
class DType:
    """A PyTorch dtype as an argument, e.g. ``causal_mask_after_cache(2, 3,
    dtype=DType("bfloat16"))``."""

    name: str

    def to_json(self) -> dict:
        return {"$dtype": self.name}


@dataclass(frozen=True)
class Function:
    """A callable argument, built in the child from ``source`` (a lambda) with ``torch`` and
    ``env`` (names -> :class:`Input` or plain values) as its globals, e.g. the layer of
    ``permutation_equivariance_gap(Function("lambda z: z + ramp", {"ramp": Input("r0")}), ...)``.
    """

    source: str
    env: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"$function": self.source, "env": _json(self.env)}


def non_default(defaults: dict, **kwargs) -> dict:
    """``kwargs`` less those equal to their default (``None`` for a name ``defaults`` lacks),
    in order: ``non_default({"base": 10000.0}, base=b, mode=None)`` is ``{"base": b}``, or
    ``{}`` when ``b`` is 10000."""
    return {name: v for name, v in kwargs.items() if v != defaults.get(name)}


def _json(value):
    if isinstance(value, (Input, Device, DType, Function)):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Case:
    """One call into the student's module.

    ``call="function"``: ``name(*args, **kwargs)``. ``call="module"``: build
    ``name(*init_args, **init_kwargs)`` and call it (``forward``); ``state``
    first copies known values into its parameters or buffers (``{"bias.weight": Input("w")}``),
    e.g. to replace a table that ``__init__`` fills at random. ``call="given"``: ``name`` is a
    function of the course's given code, called with the student's module first,
    ``name(module, *args, **kwargs)`` (``"minimodel.hf_llama.course_rope_logits"``: the
    student's RoPE inside a Hugging Face Llama, computed in the sandbox like any other case).
    """

    call: str
    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    init_args: tuple = ()
    init_kwargs: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        data = {"call": self.call, "name": self.name, "args": _json(list(self.args)),
                "kwargs": _json(self.kwargs)}
        if self.call == "module":
            data.update(init_args=_json(list(self.init_args)),
                        init_kwargs=_json(self.init_kwargs), method="forward")
            if self.state:
                data["state"] = _json(self.state)
        return data


@dataclass(frozen=True)
class Group:
    """Cases run together in one sandboxed process, against one student module."""

    key: str
    module: str
    cases: tuple[Case, ...]
    device: bool = False

    def variants(self, cuda: bool) -> tuple[str, ...]:
        """Where the group runs for a student: ``cpu``; device groups also on ``meta`` (always)
        and ``cuda`` (with a GPU)."""
        if not self.device:
            return ("cpu",)
        return ("cpu", "meta", "cuda") if cuda else ("cpu", "meta")


@dataclass(frozen=True)
class Item:
    """A graded item: points, a title in both languages, and a judge of one group's outputs."""

    key: str
    group: str
    points: float
    title_es: str
    title_en: str
    judge: Callable


class Items(list):
    """A lab's graded items, in the order they are declared, each next to its judge::

        @ITEMS.judge("means", 1, "bucket_means: ...", "bucket_means: ...")
        def judge_means(ctx): ...

        judge_rope = ITEMS.add("apply_rope", 1, "...", "...", cases_judge(), group="rope")

    ``group``: the probe group the item reads, by default the one named like the item."""

    def add(self, key: str, points: float, title_es: str, title_en: str, judge: Callable, *,
            group: str | None = None) -> Callable:
        self.append(Item(key, group or key, points, title_es, title_en, judge))
        return judge

    def judge(self, key: str, points: float, title_es: str, title_en: str, *,
              group: str | None = None) -> Callable[[Callable], Callable]:
        return lambda judge: self.add(key, points, title_es, title_en, judge, group=group)


@dataclass(frozen=True)
class CellCheck:
    """An auto-graded notebook cell: values recorded in the kernel and their judge.

    ``records`` maps a name to a Python expression evaluated in the student's kernel where the
    test cell was. Points come from the cell's nbgrader metadata in the lab source.
    ``volatile`` names records whose values come from training (not bit-reproducible across
    machines): their references keep kind, dtype and shape only, and the judge checks their
    properties on the student's values instead of comparing them.
    ``catalogue`` names a course module whose classic mistakes (``solutions/mistakes/``) the
    judge recognises from the records: when the references are built, the records are evaluated
    once per mistake with that mistake made, after ``given`` (the names of the notebook's given
    cells that the records use, as source; checked against the solved notebook's values).
    ``group`` names a probe group of the lab that computes from the student's modules, outside
    the kernel, what a property of the records says (the cached logits equal the full pass):
    the judge reads its outputs (:class:`grader.hidden.cells.Property`'s ``probed``), so that a
    cell added to the notebook cannot give those points.
    """

    grade_id: str
    title_es: str
    title_en: str
    records: dict[str, str]
    judge: Callable
    volatile: frozenset[str] = frozenset()
    catalogue: str = ""
    given: str = ""
    group: str = ""


@dataclass(frozen=True)
class Form:
    """Another signature under which shipped code could hold the answer of a function the
    student writes in the lab notebook (the release's leak search, ``grader.build.leaks``, tries
    every shipped function against it): ``arguments(*args, **kwargs)`` turns the arguments of a
    record's call of ``function`` (NumPy arrays, plain values) into ``parameters``'s, e.g.
    ``rope_rotate_half(x, positions, inv_freq)`` written as ``f(x, cos, sin)`` with Hugging
    Face's cos/sin tables of width ``D``. ``name`` tells the forms of one function apart."""

    function: str
    name: str
    parameters: tuple[str, ...]
    arguments: Callable[..., tuple]


@dataclass(frozen=True)
class NotebookChecks:
    """The lab notebook's auto-graded cells, and what its hand-graded answers are about: one
    ``(es, en)`` per question, the cells ``q1-answer``, ``q2-answer``, ..."""

    slug: str
    cells: tuple[CellCheck, ...]
    questions: tuple[tuple[str, str], ...] = ()

    @property
    def manual_titles(self) -> dict[str, tuple[str, str]]:
        """The written answers' titles, by grade id."""
        return {f"q{i}-answer": (f"Pregunta {i}: {es} (corrección manual)",
                                 f"Question {i}: {en} (graded by hand)")
                for i, (es, en) in enumerate(self.questions, start=1)}

    def title(self, grade_id: str) -> tuple[str, str]:
        titles = self.manual_titles | {c.grade_id: (c.title_es, c.title_en) for c in self.cells}
        return titles.get(grade_id, (f"Respuesta escrita «{grade_id}»",
                                     f"Written answer '{grade_id}'"))


@dataclass(frozen=True)
class LabChecks:
    """Everything hidden about one lab."""

    lab_id: str
    inputs: Callable[[], dict[str, np.ndarray]] = dict  # a lab graded from its notebook: none
    groups: tuple[Group, ...] = ()
    items: tuple[Item, ...] = ()
    cells: tuple[CellCheck, ...] = ()
    questions: tuple[tuple[str, str], ...] = ()
    forms: tuple[Form, ...] = ()  # other signatures of the notebook's answers, for the leak search
    # items that cannot be judged apart from the functions they compose: key -> (es, en), why;
    # said in the item's feedback when it loses points (grader.hidden.carried.apart), and the
    # only items where a mistake of another function may cost (grader/mistake_matrix.md)
    composed: dict[str, tuple[str, str]] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "items", tuple(self.items))  # an Items list, declared in order

    @property
    def notebook(self) -> NotebookChecks | None:
        """The lab notebook's graded cells (``None`` when it has none)."""
        if not self.cells:
            return None
        return NotebookChecks(find_lab(self.lab_id).slug, self.cells, self.questions)

    def group(self, key: str) -> Group:
        return next(g for g in self.groups if g.key == key)

    def modules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(g.module for g in self.groups))
