"""`make help` speaks both languages: every command once in Spanish and once in English, and the
language switch."""

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
