"""`make check` checks the lab it is told, however it is told (LAB=, lab=, a word after check),
and none when it is told none: a typo never checks another lab and says all is well."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minimodel.implementation import REPO_ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
HEADER = {"es": "Laboratorio {} ·", "en": "Lab {} ·"}
SUMMARY = {"es": "comprobaciones superadas", "en": "checks passed"}
REFUSED = "check] Error 2"  # make's word for the command's exit status 2


def make_check(tmp_path: Path, lang: str, *words: str,
               where: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    stamp = tmp_path / "installed"
    stamp.touch()  # newer than pyproject.toml: make installs nothing
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINIMODEL_")}
    return subprocess.run(
        ["make", "-s", "check", *words, f"STAMP={stamp}", f"BIN={Path(sys.executable).parent}"],
        cwd=where, env={**env, "MINIMODEL_LANG": lang}, capture_output=True, text=True,
        timeout=300)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_no_lab_checks_none_and_says_how(tmp_path, lang):
    out = make_check(tmp_path, lang)
    assert REFUSED in out.stderr, out.stdout + out.stderr
    assert "make check LAB=17.01" in out.stdout and "17.03  RoPE" in out.stdout
    assert HEADER[lang].format("17.01") not in out.stdout


@pytest.mark.parametrize(("lang", "words"), [("es", ("lab=17.03",)), ("en", ("17.03",))],
                         ids=["lowercase", "goal"])
def test_the_lab_named_is_the_lab_checked(tmp_path, lang, words):
    out = make_check(tmp_path, lang, *words)
    assert out.stdout.startswith(HEADER[lang].format("17.03")), out.stdout + out.stderr
    assert "17.01" not in out.stdout and "No rule" not in out.stderr
    assert SUMMARY[lang] in out.stdout  # the checks ran: passed or not, as the files are


@pytest.mark.parametrize("lang", ["es", "en"])
def test_two_different_labs_are_refused(tmp_path, lang):
    out = make_check(tmp_path, lang, "LAB=17.01", "lab=17.03")
    assert REFUSED in out.stderr
    assert "(17.01, 17.03)" in out.stdout
    assert HEADER[lang].format("17.01") not in out.stdout


@pytest.mark.parametrize("words", [("17.03",), ("LAB=17.03",)], ids=["goal", "variable"])
def test_from_the_labs_folder_as_from_the_course_folder(tmp_path, words):
    """A JupyterLab terminal opens in labs/, whose Makefile forwards the words to the course's."""
    out = make_check(tmp_path, "en", *words, where=REPO_ROOT / "labs")
    assert out.stdout.startswith(HEADER["en"].format("17.03")), out.stdout + out.stderr
    assert "Which lab?" not in out.stdout and "No rule" not in out.stderr, out.stderr
    assert SUMMARY["en"] in out.stdout and out.stdout.count(SUMMARY["en"]) == 1
