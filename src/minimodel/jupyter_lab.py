"""``make lab``: JupyterLab on the whole course folder, set up for students.

It opens on ``labs/`` with ``src/minimodel/positional/`` (the files to complete) and a terminal one
click away, where ``make check LAB=17.01`` runs. The course's Jupyter configuration lives in
``.jupyter/`` (``JUPYTER_CONFIG_DIR``), never in the user's home:

- ``jupyter_server_config.json``: warnings only, no INFO lines; nbgrader's instructor and exchange
  extensions (formgrader, assignment list, course list) off, its "Validate" button kept;
- ``labconfig/page_config.json``: the same nbgrader panels off in the browser, and no "Jupyter
  news" announcements.

JupyterLab's own settings, workspaces and runtime files go to ``build/jupyter/``. Running as
root (containers, cloud notebooks) adds ``--allow-root``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from minimodel.implementation import REPO_ROOT

CONFIG_DIR = REPO_ROOT / ".jupyter"
STATE_DIR = REPO_ROOT / "build" / "jupyter"
OPEN_AT = "labs"


def lab_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment JupyterLab runs in: the course's configuration, the venv first on PATH."""
    env = dict(os.environ if base is None else base)
    env["JUPYTER_CONFIG_DIR"] = str(CONFIG_DIR)
    env["JUPYTERLAB_SETTINGS_DIR"] = str(STATE_DIR / "settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(STATE_DIR / "workspaces")
    env["JUPYTER_RUNTIME_DIR"] = str(STATE_DIR / "runtime")
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([venv_bin, env.get("PATH", "")])
    return env


def lab_command(extra: list[str] | None = None) -> list[str]:
    """``jupyter lab`` on the course folder, opening on ``labs/``."""
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={REPO_ROOT}",
        f"--LabApp.default_url=/lab/tree/{OPEN_AT}",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    return command + list(extra or [])


def main(argv: list[str] | None = None) -> None:
    """Replace this process with JupyterLab (extra arguments go to ``jupyter lab``)."""
    os.chdir(REPO_ROOT)  # the terminal opens here, where `make check` runs
    command = lab_command(sys.argv[1:] if argv is None else argv)
    os.execve(command[0], command, lab_environment())


if __name__ == "__main__":
    main()
