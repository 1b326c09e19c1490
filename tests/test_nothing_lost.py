"""No course command overwrites what a student wrote: `make sync`, the drift check, the samples.

Each test builds a small course folder (the real solutions, one lab notebook) in ``tmp_path``, lets
a "student" write in the generated files, and runs the command on it.
"""

import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.build import sync
from minimodel import generated

ROOT = Path(__file__).resolve().parent.parent
LAB = "17_01_sinusoidal"
STUDENT_CODE = "\n# my own work: pe[:, 0::2] = np.sin(angles)\n"


@pytest.fixture(scope="module")
def course_template(tmp_path_factory) -> Path:
    """A course folder with every solution module and one lab, generated once."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(ROOT / "solutions" / "positional", root / "solutions" / "positional")
    (root / "solutions" / "labs" / LAB).mkdir(parents=True)
    shutil.copy(ROOT / "solutions/labs" / LAB / "notebook.py", root / "solutions/labs" / LAB)
    assert sync.sync(root, out=io.StringIO()) == 0
    return root


@pytest.fixture
def course(course_template, tmp_path) -> Path:
    root = tmp_path / "course"
    shutil.copytree(course_template, root)
    return root


def stub(root: Path) -> Path:
    return root / "src" / "minimodel" / "positional" / "sinusoidal.py"


def notebook(root: Path) -> Path:
    return root / "labs" / f"{LAB}.ipynb"


def write_in_notebook(path: Path, text: str) -> None:
    """Answer the first solution cell, as a student does in JupyterLab."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))
    cell["source"] = text
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def change_solutions(root: Path) -> None:
    """The instructor changes the sources, so that `make sync` wants to rewrite both files."""
    for source in (root / "solutions/positional/sinusoidal.py",
                   root / "solutions/labs" / LAB / "notebook.py"):
        source.write_text(source.read_text(encoding="utf-8") + "\n# revised\n", encoding="utf-8")


def test_generated_files_are_pristine_until_somebody_writes_in_them(course):
    assert generated.is_pristine(stub(course)) and generated.is_pristine(notebook(course))
    ran = json.loads(notebook(course).read_text(encoding="utf-8"))
    for cell in ran["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [{"output_type": "stream"}], 1
    ran["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook(course).write_text(json.dumps(ran), encoding="utf-8")
    assert generated.is_pristine(notebook(course)), "running and saving is not writing"
    write_in_notebook(notebook(course), "pe = 1")
    stub(course).write_text(stub(course).read_text() + STUDENT_CODE)
    assert not generated.is_pristine(stub(course))
    assert not generated.is_pristine(notebook(course))


def test_sync_refuses_and_changes_nothing_when_a_student_wrote_in_a_generated_file(course):
    stub(course).write_text(stub(course).read_text() + STUDENT_CODE)
    write_in_notebook(notebook(course), "closed_form = 'mine'")
    change_solutions(course)
    before = {p: p.read_bytes() for p in course.rglob("*") if p.is_file()}
    said = io.StringIO()
    assert sync.sync(course, out=said) == 1
    assert {p: p.read_bytes() for p in course.rglob("*") if p.is_file()} == before
    message = said.getvalue()
    assert "[es] make sync no ha cambiado nada" in message
    assert "[en] make sync changed nothing" in message
    assert "src/minimodel/positional/sinusoidal.py" in message and f"labs/{LAB}.ipynb" in message
    assert "KEEP_COPIES=1" in message


def test_sync_with_keep_copies_saves_the_work_and_says_where(course):
    stub(course).write_text(stub(course).read_text() + STUDENT_CODE)
    work = stub(course).read_bytes()
    change_solutions(course)
    said = io.StringIO()
    assert sync.sync(course, keep=True, out=said) == 0
    saved = list((course / sync.SAVED_DIR).glob("*/src/minimodel/positional/sinusoidal.py"))
    assert len(saved) == 1 and saved[0].read_bytes() == work
    assert str(saved[0].parents[3]) in said.getvalue()
    assert generated.is_pristine(stub(course)) and "# revised" in stub(course).read_text()


def test_sync_rewrites_files_nobody_edited(course):
    change_solutions(course)
    assert sync.sync(course, out=io.StringIO()) == 0
    assert "# revised" in stub(course).read_text()
    assert not (course / sync.SAVED_DIR).exists()


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                   check=True, capture_output=True)


def test_drift_check_judges_the_committed_copy_of_a_file_the_student_edited(course):
    git(course, "init", "-q")
    git(course, "add", ".")
    git(course, "commit", "-qm", "course")
    stub(course).write_text(stub(course).read_text() + STUDENT_CODE)
    write_in_notebook(notebook(course), "closed_form = 'mine'")
    files = sync.generated_files(course)
    assert sync.out_of_date(files, course) == [], "the student's work is not drift"
    assert STUDENT_CODE not in sync.released_text(stub(course), course)
    git(course, "commit", "-qam", "my work")  # a reader who commits their own work
    assert sync.released_text(stub(course), course) == files[stub(course)]
    change_solutions(course)
    files = sync.generated_files(course)
    assert set(sync.out_of_date(files, course)) == {stub(course), notebook(course)}


def test_released_copy_ignores_the_students_work_without_git(course):
    stub(course).write_text(stub(course).read_text() + STUDENT_CODE)
    write_in_notebook(notebook(course), "closed_form = 'mine'")
    files = sync.generated_files(course)
    assert sync.released_text(stub(course), course) == files[stub(course)]
    assert sync.released_text(notebook(course), course) == files[notebook(course)]


def test_the_demo_never_replaces_a_folder_it_did_not_make(tmp_path):
    """``minimodel-grader demo --out X`` replaces X/submissions and X/grades: a folder of one's
    own (a class's submissions, say) is refused, untouched."""
    from grader.build.demo import DEMO_MARK, demo_folder
    from grader.trusted.grading import GradingError

    mine = tmp_path / "class" / "submissions" / "ana" / "notes.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("mine")
    with pytest.raises(GradingError, match="no demo made it"):
        demo_folder(tmp_path / "class")
    assert mine.read_text() == "mine" and not (tmp_path / "class" / DEMO_MARK).exists()
    for _ in range(2):  # a new folder, then one the demo made
        assert demo_folder(tmp_path / "new") == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    assert demo_folder(tmp_path / "empty") == tmp_path / "empty"
