"""Text from student code never reaches feedback (``grader.trusted.redact``): no message, line or
literal of a run on hidden inputs, in any notation; a built-in exception's class and the stubs' own
messages stay readable."""

from __future__ import annotations

import io
from contextlib import redirect_stderr

import numpy as np
import pytest
import torch
from grader_corpus import REFERENCE, Entry

from grader.trusted.findings import exception_findings, import_finding
from grader.trusted.grading import Options, grade
from grader.trusted.nbexec import kernel_findings
from grader.trusted.redact import course_messages, stub_words
from grader.trusted.sandbox import Limits
from minimodel.messages import bilingual

SLOPES = torch.tensor([0.3, 1.1])  # float32: 0.30000001192092896 as a Python float
ARRAY = np.linspace(0.25, 0.75, 7)
LEAKS = [
    f"LEAK q_len=1 k_len=5 slopes={SLOPES.tolist()}",
    f"slopes {SLOPES!r} {SLOPES.double()!r} {SLOPES.shape}",
    f"{ARRAY!r} {ARRAY.astype(np.float32)} {np.arange(37).reshape(1, 37)}",
    f"{tuple(ARRAY.shape)} {[np.float32(0.3), np.float64(1.1)]} {np.array([1e-9, 2.5e10])}",
    f"LEAK_37 x37y 0x25 {-5} (3+4j) {1 / 3:.17g} {float('1e-05')}",
    bilingual("fuga q_len=7 [0.30000001192092896]", "leak q_len=7 [0.30000001192092896]"),
    "six four",  # digits as words
]


def said(message: str) -> list:
    """What a module's cases, its import and a notebook cell that raise ``message`` are told."""
    errors = [{"type": "RuntimeError", "message": message, "file": "sinusoidal.py"}] * 2
    return [*exception_findings(errors, 5), import_finding(errors[0], "sinusoidal.py"),
            *kernel_findings({"status": "finished", "cell_errors": [
                {"role": "student", "grade_id": "dots", "ename": "RuntimeError",
                 "evalue": message}]}, {})]


@pytest.mark.parametrize("message", LEAKS)
def test_no_message_survives(message):
    assert said(message) == said("")
    assert said("")[0].en.startswith("2 of 5 hidden cases raise RuntimeError. Hidden cases do "
                                     "not say on which line or with what message")


def test_the_stubs_own_hints_are_kept():
    messages = course_messages()
    assert len(messages) >= 10
    hint = next(m for m in messages if "17.04" in m and "2**" in m)
    [finding] = exception_findings([{"type": "NotImplementedError", "message": hint}], 3)
    assert "2**" in finding.es and "17.04" in finding.en  # course text, shown as written
    assert finding.en.startswith("Not implemented yet. ") and "[es]" not in finding.es


def test_a_stub_message_inside_a_longer_one_is_kept(monkeypatch):
    """Given code that calls a stub (19.01's evaluation calls doubling_buckets) says what needed
    it, then the stub's message: only the stub's words are kept."""
    from minimodel import hooks
    from minimodel.positional import extrapolation

    stub = next(m for m in course_messages() if "doubling_buckets" in m)

    def not_done(*args):
        raise NotImplementedError(stub.replace(" [en] ", "\n[en] "))

    monkeypatch.setattr(extrapolation, "doubling_buckets", not_done)
    with pytest.raises(NotImplementedError) as raised:
        hooks.student_function("extrapolation", "doubling_buckets", ("Paso 37", "Step 37"), 8, 64)
    es, en = stub_words(str(raised.value))
    assert "bordes 0, T, 2T, 4T" in es and "edges 0, T, 2T, 4T" in en
    assert "Paso" not in es and "Step" not in en
    assert stub_words("LEAK 37") is None


def test_an_interrupt_says_what_happened_and_other_classes_are_counted():
    [finding] = exception_findings([{"type": "KeyboardInterrupt", "message": ""}], 1)
    assert finding.en.startswith("Raises KeyboardInterrupt (an interruption for going over the "
                                 "time limit).")
    assert finding.es.startswith("Lanza KeyboardInterrupt (una interrupción por superar el "
                                 "tiempo límite).")
    [mixed] = exception_findings([{"type": "ValueError", "message": "a"},
                                  {"type": "KeyError", "message": "b"}], 3)
    assert mixed.en.startswith("2 of 3 hidden cases raise ValueError and other exceptions.")
    assert "(make check)" in mixed.en and "(make check)" in mixed.es


LEAKY = REFERENCE + '''

import warnings as _warnings

_table, _init, _building = sinusoidal_pe, SinusoidalPositionalEncoding.__init__, []


def sinusoidal_pe(T, d, base=10000.0):
    if _building:  # the module's own table: built as the reference builds it
        return _table(T, d, base)
    print(f"PRINTED T={T} d={d} base={base!r}")
    _warnings.warn(f"WARNED T={T} d={d} base={base}")
    raise RuntimeError(
        f"LEAK T={T} d={d} base={base} hex={hex(T)} sci={base:e} floats={[T / 3, d / 7]} "
        f"np={np.arange(T)[:3]!r} shape={np.zeros((T, d)).shape} table={np.ones((2, d)) / T}")


def _leaky_forward(self, x, offset=0):
    print("PRINTED", x)
    _warnings.warn(f"WARNED {x!r}")
    raise ValueError(f"LEAK x={x!r} shape={x.shape} offset={offset} "
                     f"values={x.flatten()[:4].tolist()} row={x.detach().numpy()[0, :2]}")


def _building_init(self, *args, **kwargs):
    _building.append(1)
    try:
        _init(self, *args, **kwargs)
    finally:
        _building.pop()


SinusoidalPositionalEncoding.__init__ = _building_init
SinusoidalPositionalEncoding.forward = _leaky_forward
'''


def test_a_submission_that_prints_raises_and_warns_its_arguments_leaks_nothing(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    Entry("leaky", LEAKY).build(subs)
    with redirect_stderr(io.StringIO()):
        grade(subs, tmp_path / "out", Options(workers=1, device="cpu", labs=["17.01"],
                                               limits=Limits(wall_s=5, cpu_s=6),
                                               progress=False), stream=io.StringIO())
    texts = [p.read_text(encoding="utf-8") for p in (tmp_path / "out" / "feedback").rglob("*.*")]
    assert len(texts) == 4
    for text in texts:
        assert "PRINTED" not in text and "WARNED" not in text and "LEAK" not in text
        assert "RuntimeError" in text and "ValueError" in text  # the classes are said
    log = (tmp_path / "out" / "logs" / "leaky.log").read_text(encoding="utf-8")
    assert "PRINTED" in log  # the instructor still sees what the code printed


def test_notebook_cell_errors_say_their_class_and_an_interrupt_is_explained():
    errors = [{"role": "student", "grade_id": "dots", "ename": "ValueError",
               "evalue": "LEAK T_long=256 dots=[0.9999, 0.5]"},
              {"role": "student", "grade_id": "concat", "ename": "KeyboardInterrupt",
               "evalue": ""}]
    leak, interrupt = kernel_findings({"status": "finished", "cell_errors": errors}, {})
    assert leak.en == ("Cell 'dots' raised ValueError. The grader does not say on which line or "
                       "with what message: run the notebook in Jupyter to see the traceback.")
    assert interrupt.en == ("Cell 'concat' raised KeyboardInterrupt: interrupted: it went over "
                            "the time limit.")
    assert "interrumpida" in interrupt.es and "Jupyter" in leak.es


def test_the_dtype_names_are_pytorch_s():
    """The grading process names PyTorch's dtypes without importing it: the list it keeps is
    exactly the installed PyTorch's."""
    import torch

    from grader.trusted.redact import TORCH_DTYPES

    installed = {str(value).removeprefix("torch.") for value in vars(torch).values()
                 if isinstance(value, torch.dtype)}
    assert installed == TORCH_DTYPES
