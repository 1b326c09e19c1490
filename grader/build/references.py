"""Reference outputs: what the reference solutions give on every hidden input.

``minimodel-grader references`` runs the reference implementation (``solutions/positional``) and the
solved lab notebooks (``solutions/labs/<slug>/notebook.py``) through exactly the machinery that
grades students (the same driver, ``grader.trusted.runs.LabRun``: same sandbox, same probe runner,
same recorder), and each classic mistake through that driver's in-process path. It stores the
outputs in the lab's folder: ``solutions/labs/<slug>/references.npz`` (arrays) and
``references.json`` (descriptions, and the hashes of the sources they came from). The ``.npz`` is
written byte-for-byte deterministically (fixed zip timestamps, sorted keys), so regenerating
without changes leaves git clean;
``minimodel-grader references --check`` (and ``tests/grader/test_references.py``) fails when the
committed files no longer match what the solutions give.

The expected outputs live only here, in the trusted parent: they never enter a sandbox.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from grader.hidden import chosen, module_name, registry
from grader.hidden.spec import LabChecks
from grader.trusted import nbexec
from grader.trusted.forkservers import KernelServer, Zygote
from grader.trusted.references import (
    References,
    inputs_hash,
    inputs_path,
    lab_modules,
    paths,
    record_value,
    source_hashes,
)
from grader.trusted.runs import LabRun
from grader.trusted.sandbox import Limits, Scratch, probe_capabilities
from grader.trusted.status import Notebook, Report
from grader.trusted.verdicts import Tolerance, values_close
from minimodel.course import encoding_modules
from minimodel.implementation import REFERENCE_DIR, REPO_ROOT

ZIP_DATE = (1980, 1, 1, 0, 0, 0)
# float32 rounding that differs between CPUs and thread counts: a few ulps after a deep
# computation (17.03's tiny Llama gives logits near 8 that differ by 6e-6 between two machines);
# atol covers values that are themselves rounding noise (17.00's equivariance gaps, about 5e-7).
# A real change of the solutions moves outputs by orders of magnitude more.
DRIFT_TOLERANCE = Tolerance(rtol=1e-5, atol=1e-5)
MISTAKE_SAMPLE = 512  # values kept of each output of a classic mistake


class ReferenceError(RuntimeError):
    """The reference solution failed a hidden case: the hidden checks or solutions are wrong."""


REFERENCE_LIMITS = Limits(wall_s=120, cpu_s=120, cell_timeout_s=300, notebook_wall_s=600)


def compute(checks: LabChecks, work: Path, log_path: Path) -> tuple[dict, dict]:
    """Run the reference on every hidden input: (arrays, descriptions)."""
    modules = lab_modules(checks)
    if checks.notebook:  # a notebook may use any course module (the Mini-GPT uses them all)
        modules += [m for m in encoding_modules() if m not in modules]
    scratch = Scratch(work / "reference", {m: (REFERENCE_DIR / f"{m}.py").read_bytes()
                                           for m in modules})
    lab_inputs = checks.inputs()
    run = LabRun(checks, scratch, scratch.add_inputs(module_name(checks.lab_id), lab_inputs),
                 REFERENCE_LIMITS, zygote=Zygote(work / "zygote", log_path),
                 caps=probe_capabilities(), log_path=log_path)
    try:
        outcomes = run.groups()
    finally:
        run.zygote.close()
    arrays: dict[str, np.ndarray] = {}
    meta: dict = {"groups": {}, "notebook": {}}
    for group in checks.groups:
        outcome = outcomes[group.key]["cpu"]
        if outcome.import_error or outcome.report.get("status") != Report.EXITED:
            raise ReferenceError(f"{group.key}: reference run failed: {outcome.report} "
                                 f"{outcome.import_error}")
        described = []
        for index, case in enumerate(outcome.cases):
            if case is None or not case["ok"]:
                raise ReferenceError(f"{group.key}[{index}]: reference raised "
                                     f"{case and case['error']}")
            described.append(_store(arrays, f"g/{group.key}/{index}", case["outputs"]))
        meta["groups"][group.key] = described
    meta["mistakes"], cells = _mistakes(checks, run.inputs, arrays, meta["groups"], work)
    if checks.notebook:
        kernels = KernelServer(work / "zygote", log_path)
        try:
            records, outcome, _ = run.notebook(nbexec.source_notebook(checks.notebook.slug),
                                               None, kernels, work / "mpl")
        finally:
            kernels.close()
        if outcome["status"] != Notebook.FINISHED or outcome["cell_errors"] or outcome["unsafe"]:
            raise ReferenceError(f"reference notebook run failed: {outcome}")
        volatile = {c.grade_id: c.volatile for c in checks.notebook.cells}
        for grade_id, values in records.items():
            meta["notebook"][grade_id] = {}
            for name, record in values.items():
                if not record or not record["ok"]:
                    raise ReferenceError(f"notebook {grade_id}/{name}: {record}")
                outputs = record["outputs"]
                if name in volatile[grade_id]:  # training results: descriptions only
                    outputs = [{**o, "array": None} for o in outputs]
                meta["notebook"][grade_id][name] = _store(
                    arrays, f"nb/{grade_id}/{name}", outputs)
        meta["notebook_mistakes"] = _cell_mistakes(checks, cells, meta["notebook"], arrays)
    scratch.remove()
    meta["inputs"] = inputs_hash(lab_inputs)
    meta["sources"] = source_hashes(checks)
    return arrays, meta


def _store(arrays: dict, prefix: str, outputs: list[dict]) -> list[dict]:
    described = []
    for position, output in enumerate(outputs):
        entry = {k: output.get(k) for k in ("kind", "dtype", "device", "value", "type", "stride")
                 if output.get(k) not in (None, "")}
        entry["shape"] = list(output.get("shape", ()))
        if output.get("array") is not None:
            key = f"{prefix}/{position}"
            arrays[key] = output["array"]
            entry["array"] = key
        described.append(entry)
    return described


def _mistakes(checks: LabChecks, inputs: Path, arrays: dict, described: dict,
              work: Path) -> tuple[dict, dict]:
    """What each classic mistake of the lab's modules (``grader.build.mistakes``) gives on the
    hidden inputs, where it differs from the reference: key -> texts and group -> {case: outputs, or
    ``{"error": type}`` where the mistake raises}; and, for the notebook cells that name a
    catalogue, mistake key (``""``: the reference) -> grade id -> record -> value. ``described``:
    the reference's outputs as :func:`_store` described them, group -> case -> outputs."""
    from grader.build.mistakes import hidden_outputs, lab_mistakes

    found: dict = {}
    mistakes = lab_mistakes(checks.lab_id)
    if not (checks.groups or any(c.catalogue for c in checks.cells)) or not mistakes:
        return found, {}
    outcomes = hidden_outputs(checks, inputs, work / "mistakes")
    for item in mistakes:
        groups = {}
        for group in checks.groups:
            right = {index: [arrays[o["array"]] for o in case if "array" in o]  # its arrays
                     for index, case in enumerate(described[group.key])
                     if any("array" in o for o in case)}
            cases = {}
            for index, case in enumerate(outcomes[item.key]["groups"][group.key]["cpu"].cases):
                if case is None or not case["ok"]:
                    if case is not None and index in right:  # raises where the reference doesn't
                        cases[str(index)] = {"error": (case.get("error") or {}).get("type")}
                    continue
                outputs = [o.get("array") for o in case["outputs"]]
                nothing = [o.get("kind") == "none" for o in case["outputs"]]  # returned None
                if any(nothing):
                    differs = all(nothing) and index in right
                else:
                    differs = all(o is not None for o in outputs) and not _same(
                        outputs, right.get(index))
                if differs:
                    cases[str(index)] = _store(arrays, f"m/{item.key}/{group.key}/{index}",
                                               [_sample(o) for o in case["outputs"]])
            if cases:
                groups[group.key] = cases
        if groups:
            found[item.key] = {"target": item.target, "es": item.es, "en": item.en,
                               "groups": groups}
    return found, {key: outcome["cells"] for key, outcome in outcomes.items()}


def _cell_mistakes(checks: LabChecks, cells: dict, notebook: dict, arrays: dict) -> dict:
    """grade id -> mistake key -> texts and the records (stored as ``notebook``'s are) that the
    mistake changes, for the cells that name a catalogue. ``cells``: :func:`_mistakes`' second
    part; what ``given`` gives without a mistake must be the solved notebook's values."""
    from grader.build.mistakes import lab_mistakes

    def same(a, b) -> bool:
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return values_close(a, b, DRIFT_TOLERANCE)[0]
        return type(a) is type(b) and a == b

    found: dict = {}
    for grade_id, right in cells.get("", {}).items():
        expected = {name: record_value(d, arrays) for name, d in notebook[grade_id].items()}
        for name, value in right.items():
            if not same(value, expected[name]):
                raise ReferenceError(f"notebook {grade_id}/{name}: the cell's given names do not "
                                     "give the solved notebook's value")
        for item in lab_mistakes(checks.lab_id):
            wrong = {n: v for n, v in cells[item.key][grade_id].items()
                     if n in right and not same(v, right[n])}
            if wrong:
                records = {n: _store(arrays, f"nm/{grade_id}/{item.key}/{n}", [_output(v)])
                           for n, v in sorted(wrong.items())}
                found.setdefault(grade_id, {})[item.key] = {"es": item.es, "en": item.en,
                                                            "target": item.target,
                                                            "records": records}
    return found


def _output(value) -> dict:
    """A value of :func:`grader.build.mistakes.cell_records` as a recorded output."""
    if value is None:
        return {"kind": "none"}
    if isinstance(value, str):
        return {"kind": "string", "value": value}
    return {"kind": "ndarray", "dtype": "float64", "shape": list(value.shape), "array": value}


def _sample(output: dict) -> dict:
    """A mistake's output as stored: every ``stride``-th value of the flattened array, enough
    to recognise the mistake (``JudgeContext.named_mistakes``) without storing it whole."""
    array = output.get("array")
    if array is None:  # None returned
        return output
    stride = max(1, -(-array.size // MISTAKE_SAMPLE))
    return {**output, "array": array.reshape(-1)[::stride].copy(), "stride": stride}


def _same(outputs: list[np.ndarray], right: list[np.ndarray] | None) -> bool:
    """Whether outputs are the reference's (up to rounding noise)."""
    return right is not None and len(outputs) == len(right) and all(
        a.shape == b.shape and a.dtype == b.dtype and values_close(a, b, DRIFT_TOLERANCE)[0]
        for a, b in zip(outputs, right, strict=True))


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """A ``.npz`` with fixed timestamps and sorted entries: same arrays, same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key in sorted(arrays):
            info = zipfile.ZipInfo(f"{key}.npy", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            data = io.BytesIO()
            array = arrays[key]  # (np.ascontiguousarray would turn a 0-d array into 1-d)
            array = array if array.flags.c_contiguous else np.array(array, order="C")
            np.lib.format.write_array(data, array, allow_pickle=False)
            archive.writestr(info, data.getvalue())
    path.write_bytes(buffer.getvalue())


def _computed(labs: list[str] | None):
    """(lab id, arrays, descriptions) of every lab of ``labs`` (default all), freshly computed."""
    for lab_id, checks in chosen(labs).items():
        with tempfile.TemporaryDirectory(prefix="mmg-ref-") as tmp:
            yield lab_id, *compute(checks, Path(tmp), Path(tmp) / "log")


def write(lab_id: str, arrays: dict[str, np.ndarray], meta: dict,
          root: Path = REPO_ROOT, checks: LabChecks | None = None) -> tuple[Path, Path]:
    """Store what :func:`compute` gave (with ``checks``, the lab's by default) in the lab's
    folder of the repository at ``root``."""
    npz, js = paths(lab_id, root)
    npz.parent.mkdir(parents=True, exist_ok=True)
    write_npz(npz, arrays)
    js.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    write_inputs(lab_id, meta["inputs"], root, checks)
    return npz, js


def write_inputs(lab_id: str, digest: str, root: Path = REPO_ROOT,
                 checks: LabChecks | None = None) -> Path:
    """Store the lab's hidden inputs (``inputs.npz``; ``checks``' own, the lab's by default),
    checked against ``digest``, the hash of the inputs its references were computed from."""
    arrays = (checks or registry()[lab_id]).inputs()
    if inputs_hash(arrays) != digest:
        raise ReferenceError(f"{lab_id}: the hidden inputs changed while computing")
    path = inputs_path(lab_id, root)
    write_npz(path, arrays)
    return path


def regenerate(labs: list[str] | None = None) -> list[Path]:
    """Recompute and write every lab's references; return the files written."""
    written = []
    for lab_id, arrays, meta in _computed(labs):
        npz, js = write(lab_id, arrays, meta)
        written += [npz, js]
        print(f"{lab_id}: {len(arrays)} reference arrays -> {npz.relative_to(REPO_ROOT)}")
    return written


def drift(labs: list[str] | None = None) -> list[str]:
    """Differences between the committed references and freshly computed ones."""
    problems = []
    for lab_id, arrays, meta in _computed(labs):
        npz, js = paths(lab_id)
        if not npz.exists() or not js.exists():
            problems.append(f"{lab_id}: reference outputs missing")
            continue
        committed = json.loads(js.read_text(encoding="utf-8"))
        fresh_meta = json.loads(json.dumps(meta, sort_keys=True))
        for key in ("groups", "notebook", "inputs"):  # what the outputs are, not where from
            if committed.get(key) != fresh_meta.get(key):
                problems.append(f"{lab_id}: {key} differ from what the solutions give")
        stored_inputs = inputs_path(lab_id)
        if not stored_inputs.is_file() or inputs_hash(References(lab_id).inputs()) != \
                fresh_meta.get("inputs"):
            problems.append(f"{lab_id}: the stored hidden inputs are not what the checks give")
        with np.load(npz, allow_pickle=False) as stored:
            old = {key: stored[key] for key in stored.files}
        if set(old) != set(arrays):
            problems.append(f"{lab_id}: different reference arrays "
                            f"({sorted(set(old) ^ set(arrays))[:5]})")
        problems += [f"{lab_id}: {key} changed" for key in sorted(set(old) & set(arrays))
                     if not _same([old[key]], [arrays[key]])]
    return problems
