"""Compute the self-check's stored answers (``src/minimodel/selfcheck/snapshots/``) from solutions/.

For each lab, the lab's visible checks run against the reference implementation with
``minimodel.selfcheck.snapshots.RECORDER`` set: every value a check names is recorded instead of
judged. They run again once per classic mistake of the lab's modules (``grader.build.mistakes``),
the reference patched with that mistake; a value the mistake changes is stored as what that mistake
gives. Each pass runs in a forked child of one process that loaded PyTorch, so that one pass cannot
leave state for the next.

``python -m grader.build.snapshots`` writes the files (``make sync`` runs it); ``--check`` fails
when the stored answers no longer match what the solutions give
(``tests/test_selfcheck_snapshots.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import sys
import tempfile
import traceback
from pathlib import Path

import numpy as np

from grader.build.mistakes import forked, reference_child
from grader.build.references import DRIFT_TOLERANCE, write_npz
from grader.trusted.references import code_hash
from minimodel.course import LABS, Lab, find_lab
from minimodel.implementation import CATALOGUE_DIR, REFERENCE_DIR, REPO_ROOT
from minimodel.selfcheck import snapshots

SELFCHECK_DIR = REPO_ROOT / "src" / "minimodel" / "selfcheck"
WRONG_SIZE = 8192  # values kept per mistake at most (a smaller value of the check names it)


def sources(lab: Lab) -> dict[str, str]:
    """Hashes of what a lab's snapshots are computed from."""
    phase, lesson = lab.id.split(".")
    paths = [SELFCHECK_DIR / f"lab_{phase}_{lesson}.py"]
    for module in lab.modules:
        paths += [REFERENCE_DIR / f"{module}.py", CATALOGUE_DIR / f"{module}.py"]
    return {str(p.relative_to(REPO_ROOT)): code_hash(p) for p in paths}


class Recorder(dict):
    """The named values of one pass, as plain NumPy plus a description: name -> (array, dict)."""

    def record(self, lab_id: str, name: str, value: object) -> None:
        import torch

        if isinstance(value, torch.Tensor):
            dtype = str(value.dtype).removeprefix("torch.")
            stored = value.detach().cpu()
            stored = stored.float() if dtype in ("bfloat16", "float16") else stored
            entry = (stored.numpy().copy(), {"kind": "torch", "dtype": dtype})
        elif isinstance(value, np.ndarray):
            entry = (value.copy(), {"kind": "numpy", "dtype": str(value.dtype)})
        else:
            raise TypeError(f"lab {lab_id}: {name!r} is a {type(value).__name__}, not an array")
        if name in self and not _same(self[name][0], entry[0]):
            raise ValueError(f"lab {lab_id}: two different values are named {name!r}")
        self[name] = entry


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _run_pass(lab: Lab, mistake) -> dict:
    """Run the lab's checks recording values (in the forked child)."""
    import torch

    from grader.build.mistakes import made
    from minimodel.selfcheck.runner import lab_checks

    torch.set_num_threads(1)
    recorder = Recorder()
    snapshots.RECORDER = recorder
    failures = []
    with made(mistake) if mistake else contextlib.nullcontext():
        for check in lab_checks(lab):
            try:
                check.run()
            except Exception:  # noqa: BLE001 - a mistake may break a check; the reference may not
                failures.append(f"{check.name}: {traceback.format_exc(limit=3)}")
    return {"values": dict(recorder), "failures": failures}


def compute(lab: Lab) -> tuple[dict[str, np.ndarray], dict]:
    """A lab's snapshots: (arrays, description). Run where ``minimodel.positional`` is the
    reference (``compute_all`` arranges it)."""
    from grader.build.mistakes import catalogue

    right = forked(_run_pass, lab, None)
    if right["failures"]:
        raise RuntimeError(f"lab {lab.id}: the reference fails its own checks:\n"
                           + "\n".join(right["failures"]))
    names = sorted(right["values"])
    arrays = {f"r{index:03d}": right["values"][name][0] for index, name in enumerate(names)}
    meta = {"right": {name: {"array": f"r{index:03d}", **right["values"][name][1],
                             "shape": list(right["values"][name][0].shape)}
                      for index, name in enumerate(names)},
            "mistakes": {}, "wrong": {}, "sources": sources(lab)}
    for module in lab.modules:
        for item in catalogue(module):
            values = forked(_run_pass, lab, item)["values"]
            changed = [n for n in names if n in values and not _same(values[n][0],
                                                                     right["values"][n][0])]
            if not any(values[n][0].size <= WRONG_SIZE for n in changed):
                raise ValueError(f"lab {lab.id}: mistake {item.key} changes no checked value "
                                 "small enough to keep; the visible inputs cannot recognise it")
            meta["mistakes"][item.key] = {"target": item.target, "es": item.es, "en": item.en}
            for name in changed:
                wrong = values[name][0]
                if wrong.size > WRONG_SIZE:
                    continue
                key = f"w{len(arrays):03d}"
                arrays[key] = wrong.astype(np.float32) if wrong.dtype == np.float64 else wrong
                meta["wrong"].setdefault(name, {})[item.key] = key
    return arrays, meta


def labs_with_snapshots() -> list[Lab]:
    """The labs whose checks name stored answers (their module holds a ``Snapshots``)."""
    def named(lab: Lab) -> bool:
        module = importlib.import_module(f"minimodel.selfcheck.lab_{lab.id.replace('.', '_')}")
        return any(isinstance(value, snapshots.Snapshots) for value in vars(module).values())

    return [lab for lab in LABS if named(lab)]


def compute_all(labs: list[Lab], folder: Path) -> None:
    """Compute and write the snapshots of ``labs`` into ``folder`` (a child process with the
    reference implementation)."""
    reference_child("grader.build.snapshots", "--write-to", str(folder), *[lab.id for lab in labs])


def drift(lab: Lab, computed: Path) -> list[str]:
    """How the stored snapshots of ``lab`` differ from freshly computed ones (empty: none)."""
    (new_npz, new_json), (old_npz, old_json) = snapshots.files(lab.id, computed), \
        snapshots.files(lab.id)
    if not old_npz.exists() or not old_json.exists():
        return [f"{lab.id}: no stored snapshots"]
    new, old = (json.loads(p.read_text(encoding="utf-8")) for p in (new_json, old_json))
    problems = [f"{lab.id}: {part} differ" for part in ("mistakes", "sources")
                if new[part] != old[part]]
    problems += [f"{lab.id}: {name}: stored under other names or dtypes"
                 for name in sorted(set(new["right"]) | set(old["right"]))
                 if {k: v for k, v in new["right"].get(name, {}).items() if k != "array"} !=
                 {k: v for k, v in old["right"].get(name, {}).items() if k != "array"}]
    if sorted(new["wrong"]) != sorted(old["wrong"]) or any(
            sorted(new["wrong"][n]) != sorted(old["wrong"][n]) for n in new["wrong"]):
        problems.append(f"{lab.id}: the values the mistakes change differ")
    if problems:
        return problems
    with np.load(new_npz) as fresh, np.load(old_npz) as kept:
        pairs = [(name, new["right"][name]["array"], old["right"][name]["array"])
                 for name in new["right"]]
        pairs += [(f"{name} ({code})", new["wrong"][name][code], old["wrong"][name][code])
                  for name in new["wrong"] for code in new["wrong"][name]]
        for name, a, b in pairs:
            x, y = fresh[a].astype(np.float64), kept[b].astype(np.float64)
            if x.shape != y.shape or not np.allclose(x, y, rtol=DRIFT_TOLERANCE.rtol,
                                                     atol=DRIFT_TOLERANCE.atol, equal_nan=True):
                problems.append(f"{lab.id}: {name}: values differ")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labs", nargs="*", help="lab ids (default: every lab with snapshots)")
    parser.add_argument("--check", action="store_true",
                        help="compare with the stored snapshots instead of writing them")
    parser.add_argument("--write-to", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        labs = [find_lab(lab_id) for lab_id in args.labs] or labs_with_snapshots()
    except KeyError as error:
        parser.error(error.args[0])
    if args.write_to:  # the child: minimodel.positional is the reference here
        args.write_to.mkdir(parents=True, exist_ok=True)
        for lab in labs:
            arrays, meta = compute(lab)
            npz, described = snapshots.files(lab.id, args.write_to)
            write_npz(npz, arrays)
            described.write_text(json.dumps(meta, indent=1, sort_keys=True, ensure_ascii=False)
                                 + "\n", encoding="utf-8")
            print(f"{lab.id}: {len(meta['right'])} answers, {len(meta['mistakes'])} mistakes "
                  f"-> {described.name}", flush=True)
        return 0
    if args.check:
        with tempfile.TemporaryDirectory(prefix="mm-snapshots-") as tmp:
            compute_all(labs, Path(tmp))
            problems = [p for lab in labs for p in drift(lab, Path(tmp))]
        for problem in problems:
            print(problem)
        print("snapshots up to date" if not problems else
              "snapshots out of date: python -m grader.build.snapshots")
        return 1 if problems else 0
    compute_all(labs, snapshots.FOLDER)
    return 0


if __name__ == "__main__":
    sys.exit(main())
