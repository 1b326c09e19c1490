"""Text from student code reaches feedback only through ``grader.trusted.redact``: no number of any
hidden input survives, in any notation, while dtype names, lab ids and the stubs' own messages
stay readable."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr

import numpy as np
import pytest
import torch
from grader_corpus import REFERENCE, Entry

from grader.trusted.findings import exception_findings, import_finding
from grader.trusted.grading import Options, grade
from grader.trusted.redact import course_messages, from_student, redact
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
]
HIDDEN = ["0.3000000119", "1.10000002", "37", "0.25", "0.3333", "1e-09", "1e-05", "25", "5",
          "0.75", "4j"]


@pytest.mark.parametrize("message", LEAKS)
def test_no_number_survives(message):
    text = redact(message)
    assert not any(ch.isdigit() for ch in text.replace("float32", "").replace("float64", "")), \
        text
    for hidden in HIDDEN:
        assert hidden not in text


def test_what_stays_readable():
    assert redact("shape (37, 24) in lesson 17.01 with float64 and bfloat16") == \
        "shape (…) in lesson 17.01 with float64 and bfloat16"
    assert redact("tensor([[0.1000, 0.2000],\n [0.3000, 0.4000]], dtype=torch.float64)") == \
        "tensor(…, dtype=torch.float64)"
    assert redact("k_len-1 and -1") == "k_len-… and …"


def test_the_stubs_own_hints_are_kept():
    messages = course_messages()
    assert len(messages) >= 10
    hint = next(m for m in messages if "17.04" in m and "2**" in m)
    es, en = from_student(hint, limit=2000)
    assert "2**" in es and "17.04" in en  # course text, shown as written


def test_a_stub_message_inside_a_longer_one_is_kept(monkeypatch):
    """Given code that calls a stub (19.01's evaluation calls doubling_buckets) says what needed
    it, then the stub's message: the stub's words stay as written, the rest is redacted."""
    from minimodel import hooks
    from minimodel.positional import extrapolation

    stub = next(m for m in course_messages() if "doubling_buckets" in m)

    def not_done(*args):
        raise NotImplementedError(stub.replace(" [en] ", "\n[en] "))

    monkeypatch.setattr(extrapolation, "doubling_buckets", not_done)
    with pytest.raises(NotImplementedError) as raised:
        hooks.student_function("extrapolation", "doubling_buckets", ("Paso 37", "Step 37"), 8, 64)
    es, en = from_student(str(raised.value), limit=2000)
    assert "bordes 0, T, 2T, 4T" in es and "edges 0, T, 2T, 4T" in en
    assert "Paso …" in es and "Step …" in en


def test_findings_go_through_redaction():
    message = bilingual("fuga q_len=7 [0.30000001192092896]", "leak q_len=7 [0.30000001192092896]")
    [finding] = exception_findings([{"type": "RuntimeError", "message": message}] * 2, 5)
    assert "7" not in finding.en.replace("2 of 5", "") and "0.3" not in finding.es
    assert finding.en.startswith("2 of 5 hidden cases raise RuntimeError: leak q_len=…")
    syntax = import_finding({"type": "SyntaxError", "message": "bad 12345", "lineno": 3,
                             "file": "rope.py"}, "two_d.py")
    assert "12345" not in syntax.en and "rope.py" in syntax.en


def test_an_empty_interrupt_message_says_what_happened():
    [finding] = exception_findings([{"type": "KeyboardInterrupt", "message": ""}], 1)
    assert finding.en == "Raises KeyboardInterrupt: interrupted: it went over the time limit"
    [plain] = exception_findings([{"type": "ValueError", "message": ""}], 1)
    assert not plain.en.endswith(":") and not plain.en.endswith(": ")


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
        assert "PRINTED" not in text and "WARNED" not in text
        leaks = re.findall(r"LEAK [^<\n|]*", text)
        assert any("LEAK T=" in leak for leak in leaks) and any("LEAK x=" in leak for leak in leaks)
        for leak in leaks:  # the messages are shown, without a digit of what was passed
            assert not re.search(r"\d", re.sub(r"float\d\d", "", leak)), leak
    log = (tmp_path / "out" / "logs" / "leaky.log").read_text(encoding="utf-8")
    assert "PRINTED" in log  # the instructor still sees what the code printed


def test_notebook_cell_errors_are_redacted_and_an_interrupt_is_explained():
    from grader.trusted.nbexec import kernel_findings

    errors = [{"role": "student", "grade_id": "dots", "ename": "ValueError",
               "evalue": "LEAK T_long=256 dots=[0.9999, 0.5]"},
              {"role": "student", "grade_id": "concat", "ename": "KeyboardInterrupt",
               "evalue": ""}]
    leak, interrupt = kernel_findings({"status": "finished", "cell_errors": errors}, {})
    assert leak.en == "Cell 'dots' raised ValueError: LEAK T_long=… dots=…"
    assert interrupt.en == ("Cell 'concat' raised KeyboardInterrupt: interrupted: it went over "
                            "the time limit")
    assert "interrumpida" in interrupt.es


def test_the_dtype_names_are_pytorch_s():
    """The grading process names PyTorch's dtypes without importing it: the list it keeps is
    exactly the installed PyTorch's."""
    import torch

    from grader.trusted.redact import TORCH_DTYPES

    installed = {str(value).removeprefix("torch.") for value in vars(torch).values()
                 if isinstance(value, torch.dtype)}
    assert installed == TORCH_DTYPES
