"""Grade a lab's module items on given sources, in this process: real probes, real judges.

Each source (the reference, a stub, or a copy of the reference with one mistake written in) is
written into a fresh temporary package, together with the course modules it imports (e.g. a
student's rope.py next to their two_d.py: ``from minimodel.positional.rope import`` is pointed at
the package), and every probe group runs through the driver of a grading run
(``grader.trusted.runs.LabRun``) on its plain path, without the sandbox (the sources here are the
course's own). Device groups also run on PyTorch's ``meta`` device; CUDA is "not run".
"""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import numpy as np

from grader.build.sync import released_text
from grader.hidden import registry
from grader.trusted.references import References
from grader.trusted.runs import LabRun
from grader.trusted.sandbox import ItemFolders
from grader.trusted.status import Run
from grader.trusted.verdicts import GroupOutcome, JudgeContext, Verdict
from minimodel.course import lab_of
from minimodel.implementation import REFERENCE_DIR, STUBS_DIR

_COUNTER = itertools.count()


def reference(module: str) -> str:
    return (REFERENCE_DIR / f"{module}.py").read_text(encoding="utf-8")


def stub(module: str) -> str:
    return released_text(STUBS_DIR / f"{module}.py")


def mutated(module: str, *replacements: tuple[str, str]) -> str:
    """The reference of ``module`` with each ``(old, new)`` replaced (``old`` there once)."""
    source = reference(module)
    for old, new in replacements:
        assert source.count(old) == 1, f"{old!r} is not once in {module}.py"
        source = source.replace(old, new)
    return source


def grade_sources(lab_id: str, sources: dict[str, str], folder: Path, checks=None,
                  refs: References | None = None) -> dict[str, Verdict]:
    """Every module item of ``lab_id`` judged on ``sources`` (module -> source; the lab's modules
    and what they import): item key -> verdict. ``checks`` and ``refs``: other hidden checks than
    the lab's, with their references."""
    checks = checks or registry()[lab_id]
    package = f"mmg_sources_{next(_COUNTER)}"
    root = folder / package
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text("")
    for name, source in sources.items():
        source = source.replace("from minimodel.positional.", f"from {package}.")
        (root / package / f"{name}.py").write_text(source, encoding="utf-8")
    arrays = checks.inputs()
    np.savez(root / "inputs.npz", **arrays)
    sys.path.insert(0, str(root))
    try:
        runs = LabRun(checks, ItemFolders(root), root / "inputs.npz",
                      package=package).groups(lambda group: group.variants(cuda=False))
    finally:
        sys.path.remove(str(root))
    refs = refs or References(lab_id)
    verdicts = {}
    lab = {g.key: (g, runs[g.key]["cpu"], refs.mistakes(g.key)) for g in checks.groups}
    for item in checks.items:
        group = checks.group(item.group)
        n = len(group.cases)
        cpu = runs[item.group]["cpu"]
        gpu = GroupOutcome.absent("cuda", Run.NOT_RUN, n) if group.device else None
        meta = runs[item.group].get("meta")
        context = JudgeContext(item=item, group=group, run=cpu, gpu_run=gpu,
                               refs=refs.group(item.group), inputs=arrays,
                               module_file=f"{group.module}.py", limits={"wall_s": 5},
                               meta_run=meta, mistakes=refs.mistakes(item.group), lab=lab)
        verdicts[item.key] = item.judge(context)
    return verdicts


def grade_source(module: str, source: str, folder: Path) -> dict[str, Verdict]:
    """The items of ``module`` judged on ``source``, next to the reference of every other module
    its lab grades and of each course module it imports (rope.py for scaling.py)."""
    lab_id = lab_of(module).id
    checks = registry()[lab_id]
    imported = set(re.findall(r"from minimodel\.positional\.(\w+) import", source))
    others = {m: reference(m) for m in (imported | set(checks.modules())) - {module}}
    verdicts = grade_sources(lab_id, {module: source, **others}, folder)
    return {item.key: verdicts[item.key] for item in checks.items
            if checks.group(item.group).module == module}


def codes(verdict: Verdict) -> set[str]:
    return {f.code for f in verdict.findings}


def scoring(verdict: Verdict) -> set[str]:
    return {f.code for f in verdict.findings if f.scoring}


def points(verdicts: dict[str, Verdict]) -> float:
    return round(sum(v.score or 0 for v in verdicts.values()), 2)


def assert_not_implemented(verdicts: dict[str, Verdict], *, only: bool = True) -> None:
    """Every item scores 0 and says, in both languages, that it is not implemented yet
    (``only``: nothing else costs points)."""
    assert points(verdicts) == 0
    for verdict in verdicts.values():
        if only:
            assert scoring(verdict) == {"not-implemented"}
        finding = next(f for f in verdict.findings if f.code == "not-implemented")
        assert "Todavía sin implementar" in finding.es and "Not implemented yet" in finding.en


def assert_named_costing_its_cases(verdict: Verdict, mistake: str, changed: list[bool],
                                   points: float) -> None:
    """``mistake`` is named, with two different texts, and costs exactly the cases it changes
    (``changed``: per case) of an item worth ``points``."""
    assert mistake in codes(verdict), verdict.findings
    finding = next(f for f in verdict.findings if f.code == mistake)
    assert finding.es and finding.en and finding.es != finding.en
    assert sum(changed) > 0 and verdict.total - verdict.passed == sum(changed)
    assert verdict.score == round(points * (len(changed) - sum(changed)) / len(changed), 2)


GARBAGE = [
    {"kind": "tensor", "dtype": "float32", "shape": (3,), "device": "cpu", "exact_type": True,
     "array": np.array([1.0, np.nan, -np.inf], dtype=np.float32)},
    {"kind": "string", "value": "oops"},
    {"kind": "none"},
    {"kind": "scalar", "dtype": "int64", "shape": (), "type": "int", "array": np.array(7)},
]


def judge_garbage(lab_id: str) -> list[Verdict]:
    """Every item of ``lab_id`` judged on nonsense outputs (one, two or no outputs per case, of
    the wrong kind and shape): the judges must answer, never raise."""
    checks = registry()[lab_id]
    refs = References(lab_id)
    arrays = checks.inputs()
    verdicts = []
    for outputs in ([GARBAGE[0]], GARBAGE[:2], GARBAGE[2:], [GARBAGE[3], GARBAGE[3]], []):
        for item in checks.items:
            group = checks.group(item.group)
            n = len(group.cases)
            run = GroupOutcome("cpu", "finished", [{"ok": True, "outputs": list(outputs)}] * n)
            gpu = GroupOutcome.absent("cuda", Run.NOT_RUN, n) if group.device else None
            context = JudgeContext(item=item, group=group, run=run, gpu_run=gpu,
                                   refs=refs.group(item.group), inputs=arrays,
                                   module_file="x.py", limits={"wall_s": 5},
                                   meta_run=run if group.device else None,
                                   mistakes=refs.mistakes(item.group))
            verdicts.append(item.judge(context))
    return verdicts
