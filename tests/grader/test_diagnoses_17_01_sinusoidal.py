"""The judges of lab 17.01: scores, and each known mistake diagnosed.

No sandbox here. The table's classic mistakes are written into copies of the reference source and
run through the probes (``source_runs``); the other outputs are built in the test (the formula,
another dtype, a kind of object) and handed to the judges as if a child had returned them.
"""

from __future__ import annotations

import numpy as np
import pytest
from mistaken_sources import MISTAKEN as SOURCES
from source_runs import codes, grade_source, mutated

from grader.build.mistakes import lab_mistakes
from grader.hidden import lab_17_01 as lab
from grader.hidden import registry
from grader.trusted.findings import exception_findings
from grader.trusted.redact import course_messages
from grader.trusted.references import References
from grader.trusted.status import Run
from grader.trusted.verdicts import (
    GroupOutcome,
    JudgeContext,
)
from minimodel.messages import bilingual, split_bilingual

CHECKS = registry()["17.01"]
REFS = References("17.01")
INPUTS = CHECKS.inputs()


def output(array, kind="ndarray", dtype=None, device="cpu", exact=True):
    array = np.asarray(array)
    return {"kind": kind, "dtype": dtype or str(array.dtype), "shape": tuple(array.shape),
            "device": device, "exact_type": exact, "value": None,
            "array": None if device == "meta" else array}


def outcome(outputs, variant="cpu", status="finished"):
    cases = [{"ok": True, "outputs": [o], "error": None} if isinstance(o, dict) else
             {"ok": False, "outputs": [], "error": o} for o in outputs]
    return GroupOutcome(variant, status, cases)


def judge(item_key, run, meta_run=None, gpu_run=None, gpu_scores=False):
    item = next(i for i in CHECKS.items if i.key == item_key)
    group = CHECKS.group(item.group)
    n = len(group.cases)
    if group.device:
        meta_run = meta_run or run
        gpu_run = gpu_run or GroupOutcome.absent("cuda", Run.NOT_RUN, n)
    context = JudgeContext(item=item, group=group, run=run, gpu_run=gpu_run,
                           refs=REFS.group(item.group), inputs=INPUTS,
                           module_file="sinusoidal.py", limits={"wall_s": 5}, meta_run=meta_run,
                           gpu_scores=gpu_scores, mistakes=REFS.mistakes(item.group))
    return item.judge(context)


def pe_outputs(make):
    return [output(make(T, d, base)) for T, d, base in lab.PE_CASES]


def right(T, d, base):
    return lab.table(T, d, base).astype(np.float32)


def test_reference_formula_scores_full_marks():
    for key in ("pe.values", "pe.dtype", "pe.laws"):
        verdict = judge(key, outcome(pe_outputs(right)))
        assert verdict.score == verdict.points, (key, verdict.findings)
        assert verdict.status == "passed"


TABLE = {m.code for m in lab_mistakes("17.01") if m.target == "sinusoidal_pe"}
# the table's classic mistakes, written into the reference (forward's own: test_mistakes_shared)
MISTAKEN = {code: edit for code, edit in SOURCES["sinusoidal"].items() if code in TABLE}


@pytest.fixture(scope="module")
def mistaken(tmp_path_factory):
    """mistake -> the verdicts of the reference with that mistake written in."""
    folder = tmp_path_factory.mktemp("mistaken")
    return {name: grade_source("sinusoidal", mutated("sinusoidal", edit), folder)
            for name, edit in MISTAKEN.items()}


@pytest.mark.parametrize("mistake", sorted(MISTAKEN))
def test_table_mistakes_are_named(mistake, mistaken):
    verdict = mistaken[mistake]["pe.values"]
    assert verdict.score < verdict.points
    assert mistake in codes(verdict)
    finding = next(f for f in verdict.findings if f.code == mistake)
    assert finding.es and finding.en and finding.es != finding.en


def test_ignored_base_costs_only_the_case_with_another_base(mistaken):
    verdict = mistaken["base-ignored"]["pe.values"]
    assert 0 < verdict.score < verdict.points


def test_float32_angles_pass_with_a_note():
    def make(T, d, base):
        angles = np.arange(T, dtype=np.float32)[:, None] * (
            base ** (-np.arange(0, d, 2) / d)).astype(np.float32)
        table = np.empty((T, d), np.float32)
        table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
        return table

    verdict = judge("pe.values", outcome(pe_outputs(make)))
    assert verdict.score == verdict.points
    assert "float32-angles" in codes(verdict)
    assert all(not f.scoring for f in verdict.findings if f.code == "float32-angles")


def test_float64_and_tensor_outputs_cost_the_dtype_point_only():
    float64 = outcome([output(lab.table(T, d, b)) for T, d, b in lab.PE_CASES])
    assert judge("pe.values", float64).score == 3
    verdict = judge("pe.dtype", float64)
    assert verdict.score == 0 and "float64-output" in codes(verdict)
    tensors = outcome([output(right(*c), kind="tensor") for c in lab.PE_CASES])
    assert "returns-tensor" in codes(judge("pe.dtype", tensors))


def test_a_table_of_zeros_has_no_properties():
    zeros = outcome([output(np.zeros((T, d), np.float32)) for T, d, _ in lab.PE_CASES])
    verdict = judge("pe.laws", zeros)
    assert verdict.score == 0
    assert {"law-unit-pairs", "law-first-row"} <= codes(verdict)


def test_lying_subclass_fails_the_type_check():
    liar = outcome([output(right(*c), exact=False) for c in lab.PE_CASES])
    assert judge("pe.dtype", liar).score == 0


def module_outputs(rows_for, cases=lab.MODULE_CASES, prefix="m", dtype=None):
    outputs = []
    for k, case in enumerate(cases):
        d, _, base, shape, offset = case
        x = INPUTS[f"{prefix}{k}"].astype(np.float64)
        T = shape[-2]
        result = x + rows_for(T, d, base, offset)
        outputs.append(output(result.astype(np.float32), kind="tensor", dtype=dtype))
    return outputs


def test_module_offset_mistakes():
    good = outcome(module_outputs(lambda T, d, b, o: lab.table(T, d, b, start=o)))
    assert judge("module.values", good).score == 2
    ignored = judge("module.values", outcome(module_outputs(
        lambda T, d, b, o: lab.table(T, d, b))))
    assert "offset-ignored" in codes(ignored) and 0 < ignored.score < 2
    shifted = judge("module.values", outcome(module_outputs(
        lambda T, d, b, o: lab.table(T, d, b, start=o + 1 if o else 0))))
    assert "offset-off-by-one" in codes(shifted)


@pytest.mark.parametrize("mistake", sorted(MISTAKEN))
def test_a_table_mistake_costs_only_in_the_table(mistake, mistaken):
    """One mistake costs once: forward, built right on the student's sinusoidal_pe, keeps its
    points (values, dtype, device), and its feedback says where the mistake is."""
    for key in ("module.values", "module.dtype", "module.device"):
        verdict = mistaken[mistake][key]
        assert verdict.score == verdict.points, (key, verdict.findings)
    notes = [f for f in mistaken[mistake]["module.values"].findings
             if f.code == "built-on-mistake"]
    assert notes and not notes[0].scoring
    assert notes[0].en.startswith("Built on your sinusoidal_pe, which has the mistake named above")
    assert notes[0].es.startswith("Construido sobre tu sinusoidal_pe, que tiene el error")
    named = next(f for f in mistaken[mistake]["pe.values"].findings if f.code == mistake)
    assert named.en.startswith("sinusoidal_pe: ") and named.es.startswith("sinusoidal_pe: ")


def dtype_outputs(out_dtype):
    outputs = []
    for k, (dtype, shape, offset) in enumerate(lab.DTYPE_CASES):
        x = INPUTS[f"t{k}"].astype(np.float64)
        result = x + lab.table(shape[-2], 12, 10000.0, start=offset)
        outputs.append(output(result.astype(np.float32), kind="tensor",
                              dtype=out_dtype or dtype))
    return outputs


def test_dtype_not_kept_is_named():
    assert judge("module.dtype", outcome(dtype_outputs(None))).score == 1
    verdict = judge("module.dtype", outcome(dtype_outputs("float32")))
    assert verdict.score == 0 and "dtype-not-kept" in codes(verdict)


def device_cases(device):
    outputs = []
    for k, (dtype, shape, offset) in enumerate(lab.DEVICE_CASES):
        x = INPUTS[f"v{k}"].astype(np.float64)
        result = (x + lab.table(shape[-2], 12, 10000.0, start=offset)).astype(np.float32)
        if dtype == "bfloat16":  # what a bfloat16 tensor holds
            result = (result.view(np.uint32) & 0xFFFF0000).view(np.float32)
        outputs.append(output(result, kind="tensor", dtype=dtype, device=device))
    return outputs


def test_device_needs_values_and_placement():
    cpu = outcome(device_cases("cpu"))
    meta = outcome(device_cases("meta"), variant="meta")
    verdict = judge("module.device", cpu, meta_run=meta)
    assert verdict.score == 1 and verdict.gpu == "not run"
    error = {"type": "RuntimeError",
             "message": "Tensor on device cpu is not on the expected device meta!"}
    broken = judge("module.device", cpu, meta_run=outcome([error, error], variant="meta"))
    assert broken.score == 0 and "device" in codes(broken)


def test_gpu_not_run_is_never_passed_and_gpu_failure_costs_only_with_device_cuda():
    cpu = outcome(device_cases("cpu"))
    meta = outcome(device_cases("meta"), variant="meta")
    assert judge("module.device", cpu, meta_run=meta).gpu == "not run"
    gpu_ok = outcome(device_cases("cuda"), variant="cuda")
    assert judge("module.device", cpu, meta_run=meta, gpu_run=gpu_ok).gpu == "passed"
    gpu_bad = outcome(device_cases("cpu"), variant="cuda")  # came back on the wrong device
    verdict = judge("module.device", cpu, meta_run=meta, gpu_run=gpu_bad, gpu_scores=True)
    assert verdict.gpu == "failed" and verdict.score == 0 and "device" in codes(verdict)
    # graded with --device auto on a GPU machine: the same code, the same points as on a CPU one
    reported = judge("module.device", cpu, meta_run=meta, gpu_run=gpu_bad)
    assert reported.gpu == "failed" and reported.score == reported.points
    assert all(not f.scoring for f in reported.findings if f.en.startswith("On the GPU"))
    assert any(f.en.startswith("On the GPU") for f in reported.findings)


def test_run_problems_are_reported_in_both_languages():
    timeout = GroupOutcome.absent("cpu", "timeout", len(lab.PE_CASES))
    verdict = judge("pe.values", timeout)
    assert verdict.score == 0
    finding = next(f for f in verdict.findings if f.code == "timeout")
    assert "tiempo" in finding.es and "time" in finding.en


def test_a_stubs_bilingual_hint_is_split_and_a_students_message_is_never_said():
    """The released stub's hint is course text: each language gets its half. What the student's
    own code says on a hidden case could carry the case: only its class is said."""
    hint = next(iter(course_messages()))
    es, en = split_bilingual(hint.replace(" [en] ", "\n[en] "))
    [finding] = exception_findings([{"type": "NotImplementedError", "message": hint}], 1)
    assert " ".join(en.split()) in finding.en and " ".join(es.split()) not in finding.en
    assert " ".join(es.split()) in finding.es and " ".join(en.split()) not in finding.es
    message = bilingual("falta " + "x" * 400, "missing " + "y" * 400)
    [finding] = exception_findings([{"type": "ValueError", "message": message}], 1)
    assert "missing" not in finding.en and "falta" not in finding.es
    assert finding.en.startswith("Raises ValueError.") and "make check" in finding.en
