"""Text from student code reaches feedback only through ``grader.redact``: no number of any
hidden input survives, in any notation, while dtype names, lab ids and the stubs' own messages
stay readable."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from grader.redact import course_messages, from_student, redact
from grader.verdicts import exception_findings, import_finding
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
