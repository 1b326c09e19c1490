"""`make lab`: JupyterLab starts (as root too) on the course folder, quietly, without nbgrader's
instructor panels, and `make check` runs from its terminal."""

import http.client
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from minimodel import jupyter_lab
from minimodel.implementation import REPO_ROOT

TOKEN = "course-test-token"
INSTRUCTOR_PLUGINS = ("formgrader", "create-assignment", "assignment-list", "course-list", "menu")
INSTRUCTOR_SERVER = ("formgrader", "assignment_list", "course_list")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server started as `make lab` starts it, from another folder, headless."""
    port = free_port()
    log = tmp_path_factory.mktemp("lab") / "server.log"
    command = [sys.executable, "-m", "minimodel.jupyter_lab", "--no-browser", f"--port={port}",
               f"--IdentityProvider.token={TOKEN}"]  # fmt: skip
    with log.open("w") as out:
        server = subprocess.Popen(
            command, cwd=log.parent, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited:\n{log.read_text()}")
            try:
                if get(f"{base}/api/status?token={TOKEN}")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail(f"JupyterLab did not answer:\n{log.read_text()}")
        yield base, log
    finally:
        os.killpg(server.pid, 9)
        server.wait()


def contents(base: str, path: str) -> set[str]:
    status, body = get(f"{base}/api/contents/{path}?token={TOKEN}")
    assert status == 200, path
    return {item["name"] for item in json.loads(body)["content"]}


def test_serves_the_course_folder_with_labs_and_the_files_to_complete(lab):
    base, _ = lab
    assert {"labs", "src", "Makefile"} <= contents(base, "")
    assert "17_01_sinusoidal.ipynb" in contents(base, "labs")
    assert "sinusoidal.py" in contents(base, "src/minimodel/positional")


def test_opens_on_the_labs_and_without_instructor_panels_or_news(lab):
    base, _ = lab
    status, page = get(f"{base}/lab?token={TOKEN}")
    assert status == 200
    match = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                      page, re.S)  # fmt: skip
    config = json.loads(match.group(1))
    disabled = set(config["disabledExtensions"])
    assert {f"@jupyter/nbgrader:{plugin}" for plugin in INSTRUCTOR_PLUGINS} <= disabled
    assert "@jupyterlab/apputils-extension:announcements" in disabled
    assert "@jupyter/nbgrader:validate-assignment" not in disabled
    home = http.client.HTTPConnection(base.removeprefix("http://"), timeout=30)
    home.request("GET", f"/?token={TOKEN}")
    assert home.getresponse().getheader("Location").startswith("/lab/tree/labs")


def test_instructor_and_exchange_extensions_are_not_loaded(lab):
    base, log = lab
    for path in ("formgrader", "assignments", "courses"):
        assert get(f"{base}/{path}?token={TOKEN}")[0] == 404, path
    text = log.read_text()
    assert "exchange directory" not in text and "Error fetching courses" not in text
    assert not re.search(r"^\[I ", text, re.M), text  # warnings only, no INFO lines


def test_make_check_runs_from_a_terminal_opened_in_labs(lab):
    from tornado.ioloop import IOLoop
    from tornado.websocket import websocket_connect

    base, _ = lab
    request = urllib.request.Request(
        f"{base}/api/terminals?token={TOKEN}",
        data=json.dumps({"cwd": "labs"}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        name = json.loads(response.read())["name"]
    url = base.replace("http", "ws") + f"/terminals/websocket/{name}?token={TOKEN}"

    async def run_make_check() -> str:
        socket = await websocket_connect(url)
        socket.write_message(json.dumps(["stdin", "make check LAB=17.01 MINIMODEL_LANG=en\r"]))
        seen = ""
        deadline = time.monotonic() + 240
        while "checks passed" not in seen and time.monotonic() < deadline:
            message = await socket.read_message()
            if message is None:
                break
            kind, *data = json.loads(message)
            if kind == "stdout":
                seen += data[0]
        socket.close()
        return seen

    seen = IOLoop.current().run_sync(run_make_check, timeout=300)
    assert "Lab 17.01" in seen and "checks passed" in seen, seen


def test_course_settings_name_what_nbgrader_installs():
    """The plugins and server extensions turned off exist under those names (nbgrader 0.9.6)."""
    page = json.loads((jupyter_lab.CONFIG_DIR / "labconfig" / "page_config.json").read_text())
    bundle = Path(sys.prefix, "share", "jupyter", "labextensions", "@jupyter", "nbgrader")
    code = "".join(path.read_text() for path in bundle.glob("static/*.js"))
    for plugin in INSTRUCTOR_PLUGINS:
        assert page["disabledExtensions"][f"@jupyter/nbgrader:{plugin}"] is True
        assert f'"@jupyter/nbgrader:{plugin}"' in code, plugin
    server = json.loads((jupyter_lab.CONFIG_DIR / "jupyter_server_config.json").read_text())
    extensions = server["ServerApp"]["jpserver_extensions"]
    for name in INSTRUCTOR_SERVER:
        module = f"nbgrader.server_extensions.{name}"
        assert extensions[module] is False
        assert importlib.util.find_spec(module) is not None, module
    assert server["ServerApp"]["log_level"] == "WARN"


def test_root_gets_allow_root_and_the_config_is_the_courses(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert "--allow-root" in jupyter_lab.lab_command()
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert "--allow-root" not in jupyter_lab.lab_command()
    env = jupyter_lab.lab_environment({"PATH": "/usr/bin", "HOME": "/home/student"})
    assert env["JUPYTER_CONFIG_DIR"] == str(REPO_ROOT / ".jupyter")
    for key in ("JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR", "JUPYTER_RUNTIME_DIR"):
        assert env[key].startswith(str(REPO_ROOT / "build")), key
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
