"""environment.yml (the conda route) must agree with pyproject.toml (the pip route)."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def pins(requirements):
    return dict(
        re.match(r"([A-Za-z0-9_.\-]+)==(\S+)$", r).groups() for r in requirements if "==" in r
    )


def test_environment_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [dep for dep in env["dependencies"] if isinstance(dep, str)]
    pip_section = next(dep["pip"] for dep in env["dependencies"] if isinstance(dep, dict))

    wanted_python = re.search(r">=(\d+\.\d+)", project["requires-python"]).group(1)
    assert f"python={wanted_python}" in conda
    assert "conda-forge" in env["channels"]
    # The project itself, with every extra, is installed through pip.
    extras = set(project["optional-dependencies"])
    installs = [line for line in pip_section if line.startswith("-e .")]
    assert installs and extras == set(re.search(r"\[(.*)\]", installs[0]).group(1).split(","))
    # Whatever the conda file pins explicitly is pinned identically in pyproject.toml.
    listed = project["dependencies"] + sum(project["optional-dependencies"].values(), [])
    assert pins(pip_section).items() <= pins(listed).items()


def test_every_dependency_is_pinned():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = project["dependencies"] + sum(project["optional-dependencies"].values(), [])
    assert all("==" in requirement for requirement in listed), listed
