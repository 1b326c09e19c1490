"""A function that never returns costs its student little: once it has run out of its time on
one case (``grader.child.probe_runner.CaseTimer``), it is not run again for that student, in the
same probe group, the later groups and the notebook kernels (``grader.trusted.out_of_time``);
those cases score 0, and the feedback names it once. What the sandbox reports of it is checked
as data from the student's side.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat

from grader.build.demo import fill_stub, reference_bodies
from grader.build.sync import released_text
from grader.child.probe_runner import DEAD_FILE, MAX_DEAD
from grader.trusted import nbexec
from grader.trusted.out_of_time import MAX_FUNCTIONS, OutOfTime, case_cpu_s
from grader.trusted.safe_io import Beneath
from minimodel.implementation import REFERENCE_DIR, REPO_ROOT, STUBS_DIR

SPIN = "while True:\n    pass\n"
MODULE = '''
def honest(x):
    return x + 1


def loops(x):
    while True:
        pass


def calls_loops(x):
    return loops(x) + 1


def calls_honest_forever(x):
    while True:
        honest(x)


class Layer:
    def run(self, x):
        try:
            while True:
                pass
        except BaseException:  # catches the first stop: it is raised again
            while True:
                pass
'''
OTHER = "from pkg.mod import loops\n\n\ndef uses(x):\n    return loops(x)\n"
RUN = '''
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import numpy, torch  # as the sandbox's server has them, before the watch
import probe_runner
request = json.loads(sys.argv[3])
probe_runner.run(request, sys.argv[4], "pkg", timed=True)
'''


def run_cases(tmp_path: Path, names: list, dead: list = ()) -> tuple[list, list]:
    """Run ``names`` (functions of ``pkg.mod``; ``"Layer"``: its method) as one probe group's
    cases, each on 0.3 s of CPU: what each case gave, what ``dead.json`` names."""
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/mod.py").write_text(MODULE)
    (tmp_path / "pkg/other.py").write_text(OTHER)
    import numpy as np

    np.savez(tmp_path / "in.npz", a=np.zeros(1))
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    out.mkdir()
    cases = [{"call": "module", "name": "Layer", "method": "run", "args": [1]} if name == "Layer"
             else {"call": "function", "name": name, "args": [1]} for name in names]
    request = {"module": "mod", "inputs": str(tmp_path / "in.npz"), "cases": cases,
               "limits": {"case_cpu_s": 0.3}, "dead": list(dead)}
    subprocess.run([sys.executable, "-c", RUN, str(REPO_ROOT / "grader/child"), str(tmp_path),
                    json.dumps(request), str(out)], check=True, timeout=120)
    results = [json.loads((out / f"case_{i:03d}.json").read_text()) for i in range(len(names))]
    died = json.loads((out / DEAD_FILE).read_text())["dead"] if (out / DEAD_FILE).exists() else []
    return [r["ok"] or r["error"]["type"] for r in results], died


def test_the_function_still_running_is_not_run_again(tmp_path):
    names = ["honest", "calls_loops", "loops", "honest", "calls_honest_forever", "honest",
             "Layer", "Layer"]
    results, died = run_cases(tmp_path, names)
    # the innermost function that did not return dies; a loop that calls an honest function
    # over and over is the loop's; a function that catches the stop is stopped again
    assert results == [True, "OutOfTime", "DeadFunction", True, "OutOfTime", True,
                       "OutOfTime", "DeadFunction"]
    assert died == [["mod", "loops"], ["mod", "calls_honest_forever"], ["mod", "Layer.run"]]
    # a later run: dead from the start, also where another module imported it by name
    results, died = run_cases(tmp_path, ["honest", "loops", "calls_loops", "Layer"],
                              dead=[["mod", "loops"], ["mod", "Layer.run"], ["other", "uses"],
                                    ["mod", "missing"], ["../x", "y"], "junk"])
    assert results == [True, "DeadFunction", "DeadFunction", "DeadFunction"] and died == []


def test_what_the_sandbox_says_is_checked(tmp_path):
    modules = {"mod": MODULE.encode(), "other": OTHER.encode(), "broken": b"def (:\n"}
    reports = {
        "good": {"dead": [["mod", "loops"], ["mod", "Layer.run"], ["other", "uses"]]},
        "forged": {"dead": [["mod", "print"], ["mod", "Layer"], ["mod", "Layer.run.x"],
                            ["nope", "loops"], ["../mod", "loops"], ["broken", "f"],
                            ["mod", 3], "mod.loops", ["mod", "loops", "x"], ["mod", "loops"]]},
        "not-a-list": {"dead": {"mod": "honest"}},
        "many": {"dead": [["mod", "honest"]] * 1000},
    }
    for name, report in reports.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / DEAD_FILE).write_text(json.dumps(report))
    (tmp_path / "not-json").mkdir()
    (tmp_path / "not-json" / DEAD_FILE).write_bytes(b"\xff{")
    (tmp_path / "none").mkdir()
    (tmp_path / "link").mkdir()
    (tmp_path / "link" / DEAD_FILE).symlink_to(tmp_path / "good" / DEAD_FILE)
    seen = OutOfTime(modules, 4.9)
    taken = {name: seen.take(Beneath(tmp_path) / name) for name in
             ("none", "not-json", "link", "not-a-list", "good", "forged", "many")}
    assert taken == {"none": False, "not-json": False, "link": False, "not-a-list": False,
                     "good": True, "forged": False, "many": True}
    assert seen.functions == [("mod", "loops"), ("mod", "Layer.run"), ("other", "uses"),
                              ("mod", "honest")]
    assert seen.request() == [["mod", "loops"], ["mod", "Layer.run"], ["other", "uses"],
                              ["mod", "honest"]]
    findings = seen.findings()  # helpers of the student's own: one finding per module, unnamed
    assert [f.code for f in findings] == ["out-of-time"] * 2
    assert findings[0].en.startswith("A helper function of yours in mod.py ran out of time")
    assert findings[0].es.startswith("Una función auxiliar tuya de mod.py se quedó sin tiempo")
    assert "4.9 s" in findings[0].es and "make check" in findings[0].en
    assert not any(name in f.en + f.es for f in findings for name in ("loops", "Layer", "honest"))
    assert MAX_FUNCTIONS >= MAX_DEAD
    assert case_cpu_s({"case_cpu_s": 5.0, "cpu_s": 21}) == 5.0
    assert case_cpu_s({"case_cpu_s": 5.0, "cpu_s": 2}) == 1.4  # the case dies before the group


def test_only_the_specifications_functions_are_named():
    """Which of many helpers ran out of time could spell a hidden input: the feedback names the
    course's functions (the released stub's) and says a helper once per module."""
    rope = b"def apply_rotary(x):\n    pass\n\n\ndef _spin_3(x):\n    pass\n\n\n" \
        b"def _spin_7(x):\n    pass\n"
    seen = OutOfTime({"rope": rope}, 5.0)
    seen.functions = [("rope", "_spin_7"), ("rope", "apply_rotary"), ("rope", "_spin_3")]
    said = [f.en.split(" ran out of time")[0] for f in seen.findings()]
    assert said == ["A helper function of yours in rope.py", "apply_rotary (rope.py)"]


def test_the_kernel_set_up_replaces_the_dead_functions():
    text = nbexec.setup_source("/runner", "/out", [["rope", "apply_rotary"]])
    assert "[['rope', 'apply_rotary']]" in text
    assert nbexec.setup_source("/runner", "/out") == nbexec.setup_source("/runner", "/out", [])


def test_a_loop_in_17_03_costs_little(tmp_path):
    """apply_rotary loops forever: graded beside the reference, on lab 17.03 (both with the
    solved notebook), it holds its worker at most 3 x as long; the items of the functions that
    do not call it keep their points; the feedback says once that it ran out of time."""
    notebook = nbformat.writes(nbexec.source_notebook("17_03_rope"))
    loop = fill_stub(released_text(STUBS_DIR / "rope.py"),
                     {**reference_bodies("rope"), "apply_rotary": SPIN})
    for name, module in (("honest", (REFERENCE_DIR / "rope.py").read_text()), ("loop", loop)):
        (tmp_path / "subs" / name / "src/minimodel/positional").mkdir(parents=True)
        (tmp_path / "subs" / name / "src/minimodel/positional/rope.py").write_text(module)
        (tmp_path / "subs" / name / "labs").mkdir()
        (tmp_path / "subs" / name / "labs/17_03_rope.ipynb").write_text(notebook)
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "grader.cli", "grade", str(tmp_path / "subs"),
                    "--out", str(out), "--workers", "2", "--lab", "17.03", "--no-progress"],
                   check=True, timeout=900, capture_output=True)
    honest, looped = (json.loads((out / f"records/{name}.json").read_text())
                      for name in ("honest", "loop"))
    assert looped["wall_s"] <= 3 * honest["wall_s"], (looped["wall_s"], honest["wall_s"])
    scores = {v["key"]: v["score"] for v in looped["labs"]["17.03"]["items"]}
    for key in ("frequencies", "cos_sin", "permutation", "nb/test-formulations"):
        assert scores[key] == honest_score(honest, key), key  # they do not call apply_rotary
    for key in ("rotary", "apply_rope", "module", "llama", "nb/test-partial-and-cache"):
        assert scores[key] == 0, key
    items = {v["key"]: [f["code"] for f in v["findings"]]
             for v in looped["labs"]["17.03"]["items"]}
    assert "out-of-time-case" in items["rotary"] and "out-of-time-case" in items["nb/test-by-hand"]
    for lang, words in (("en", "ran out of time"), ("es", "se quedó sin tiempo")):
        text = (out / "feedback/loop" / f"feedback.{lang}.md").read_text()
        said = [line for line in text.splitlines() if words in line and "apply_rotary" in line]
        assert len(said) == 1 and said[0].startswith("- apply_rotary (rope.py)"), said
    # charged one probe group's CPU limit for the loop, not one for each group that calls it
    assert looped["instructor"]["budget"]["used_s"] < 2 * 21


def honest_score(record: dict, key: str) -> float:
    return next(v["score"] for v in record["labs"]["17.03"]["items"] if v["key"] == key)
