"""What a run says reaches the feedback only from fixed sets (``grader.trusted.redact``): each
channel a submission could use to carry a hidden input out is closed where the trusted side reads
it. An honest mistake keeps its class; a syntax error, found by parsing the file here, its line."""

from __future__ import annotations

import numpy as np

from grader.trusted.findings import (
    exception_findings,
    import_finding,
    mismatch_findings,
    refused_in_run,
)
from grader.trusted.redact import OWN_CLASS, Sources, course_messages, known_name
from grader.trusted.safe_io import Beneath, read_outputs
from grader.trusted.verdicts import Check, GroupOutcome

SOURCE = b'''\
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def sinusoidal_pe(T, d, base=10000.0):
    if d % 2:
        raise ValueError(f"d must be even, got d={d}")
    raise RuntimeError("LEAK %s and %d" % (T, d))
'''
SOURCES = Sources.of({"sinusoidal.py": SOURCE})


def clean(**error) -> dict:
    return SOURCES.clean_error({"type": "ValueError", "message": "", **error})


def test_class_names_only_from_pythons_own():
    assert clean(type="KeyError")["type"] == "KeyError"
    assert clean(type="Leak_GE_CB")["type"] == OWN_CLASS
    [finding] = exception_findings([clean(type="Leak_GE_CB")], 1)
    assert "Leak" not in finding.en and "a class defined in your code" in finding.en
    assert "una clase definida en tu código" in finding.es


def test_judges_read_messages_only_as_the_submissions_own_literals():
    assert clean(message="d must be even, got d=7")["message"] == "d must be even, got d=…"
    assert clean(message="LEAK 64 and 32")["message"] == "LEAK … and …"
    assert clean(message="six four")["message"] == ""  # digits as words: built, not written
    history = "__minimodel_record('test-table', {'small': lambda: (sinusoidal_pe(6, 10))})"
    assert clean(message=history)["message"] == ""  # IPython's input history
    hint = next(iter(course_messages()))
    assert clean(message=hint)["message"] == hint  # the stubs' own words
    [finding] = exception_findings([clean(message="LEAK 64 and 32")], 1)
    assert "LEAK" not in finding.en + finding.es  # judges read it; the student never does


def test_no_line_but_a_syntax_error_the_grader_finds_by_parsing():
    assert "lineno" not in clean(file="sinusoidal.py", lineno=5)
    assert "file" not in clean(file="secret_64.py", lineno=3)
    forged = clean(type="SyntaxError", message="d must be even", file="sinusoidal.py",
                   lineno=64032)
    assert "lineno" not in forged and forged["message"] == ""
    said = import_finding(forged, "sinusoidal.py")  # the file parses: no syntax error in it
    assert said.code == "import-error" and "syntax error" not in said.en
    assert said.en.startswith("Importing sinusoidal.py raises SyntaxError. Hidden cases")
    broken = Sources.of({"rope.py": b"x = 1\ny = (\n"})
    real = broken.clean_error({"type": "SyntaxError", "message": "forged 64",
                               "file": "rope.py", "lineno": 9})
    assert real["lineno"] == 2 and "forged" not in real["message"]
    assert "rope.py has a syntax error on line 2" in import_finding(real, "two_d.py").en
    raised = import_finding(clean(type="LookupError", message="LEAK 64 and 32",
                                  file="sinusoidal.py"), "sinusoidal.py")
    assert raised.en.startswith("Importing sinusoidal.py raises LookupError. Hidden cases")
    assert "LEAK" not in raised.es + raised.en


def test_dtypes_only_numpys_and_pytorchs(tmp_path):
    assert all(known_name(n) for n in ("float32", "bfloat16", "torch.bfloat16", "int64", "bool"))
    assert not known_name("leak_GE") and not known_name("float64 64 32")
    np.save(tmp_path / "case_000_0.npy", np.ones(2, np.float32))
    meta = {"kind": "tensor", "dtype": "six_four", "shape": [2], "file": "x"}
    [out] = read_outputs(Beneath(tmp_path), "case_000", [meta])
    assert out["kind"] == "invalid" and "dtype" not in out


def test_no_number_measured_on_a_hidden_input():
    [values] = mismatch_findings([Check(False, "values", max_err=0.37), Check(True)])
    assert "0.37" not in values.en and "largest" not in values.en
    exited = GroupOutcome("cpu", "exited", [], report={"exit_code": 64})
    crashed = GroupOutcome("cpu", "crashed", [], report={"signal": 37})
    flood = GroupOutcome("cpu", "finished", [], report={"output_bytes": 37 << 20})
    from grader.trusted.findings import run_findings

    for run in (exited, crashed, flood):
        for finding in run_findings(run, "sinusoidal.py"):
            assert "64" not in finding.en + finding.es and "37" not in finding.en + finding.es
    assert "with an error code" in run_findings(exited, "sinusoidal.py")[0].en


def test_a_refused_part_of_an_allowed_library_is_named_as_that_part():
    """PyTorch is allowed, its ONNX exporter is not: the finding says torch.onnx, never 'torch,
    from another library' (which the same sentence says is fine)."""
    said = refused_in_run("torch.onnx.export", "rope.py")
    assert "uses torch.onnx," in said.en and "usa torch.onnx," in said.es
    assert "export" not in said.en  # which function: make check says it
