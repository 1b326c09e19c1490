"""`make help` speaks both languages: every command once in Spanish and once in English, and the
language switch. `make clean` leaves a running JupyterLab alone."""

import re
import shutil
import subprocess

import pytest

from minimodel.implementation import REPO_ROOT


def commands(text: str) -> list[str]:
    return re.findall(r"^make (\S+)", text, re.M)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_help_lists_every_command_in_both_languages():
    out = subprocess.run(
        ["make", "-s", "help"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout
    spanish, english = out.split("Course commands:")
    assert spanish.startswith("Órdenes del curso:")
    assert commands(spanish) == commands(english) and "check" in commands(english)
    assert "MINIMODEL_LANG=es|en" in spanish and "Idioma" in spanish
    assert "MINIMODEL_LANG=es|en" in english and "Language" in english


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_clean_waits_for_jupyterlab_to_close(tmp_path):
    """`make clean` while `make lab` runs would delete the server's runtime files (its kernels
    then fail to start): it refuses, and cleans once the server is gone."""
    shutil.copy2(REPO_ROOT / "Makefile", tmp_path)
    runtime = tmp_path / "build" / "jupyter" / "runtime"
    runtime.mkdir(parents=True)
    server = subprocess.Popen(["sleep", "60"])  # a process that is running, as the server is
    try:
        (runtime / f"jpserver-{server.pid}.json").write_text("{}")
        refused = subprocess.run(["make", "-s", "clean"], cwd=tmp_path, capture_output=True,
                                 text=True)
        assert refused.returncode != 0 and runtime.is_dir()
        assert "[es] JupyterLab está abierto" in refused.stdout
        assert "[en] JupyterLab is running" in refused.stdout
    finally:
        server.kill()
        server.wait()
    subprocess.run(["make", "-s", "clean"], cwd=tmp_path, check=True, capture_output=True)
    assert not (tmp_path / "build").exists()
