"""The control group of a run: its processes are held together, killed and the group removed
when it ends; groups left by a grader that was killed are removed by the next run."""

from __future__ import annotations

import os
import subprocess

import pytest

from grader.child import cgroup


@pytest.fixture
def cgroups():
    if os.geteuid() != 0 or cgroup.available()[0] is None:
        pytest.skip("no control groups here (needs root and cgroups v1 or v2)")


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_what_is_left_in_a_group_is_killed_and_the_group_removed(cgroups):
    group = cgroup.create(64, 8)
    child = subprocess.Popen(["sleep", "600"], preexec_fn=lambda: cgroup.join(group))
    seen = cgroup.close(group)
    assert child.wait(timeout=10) == -9
    assert not any(os.path.isdir(folder) for folder in group)
    assert seen["oom_kills"] == 0


def test_groups_a_killed_grader_left_are_removed(cgroups):
    group = cgroup.create(64, 8)
    stale = [folder.replace(f"mmg-{os.getpid()}-", f"mmg-{_dead_pid()}-") for folder in group]
    for folder in group:
        os.rmdir(folder)
    for folder in stale:
        os.mkdir(folder)
    alive = cgroup.create(64, 8)  # this process's own: kept
    assert sorted(cgroup.remove_stale()) == sorted(stale)
    assert all(os.path.isdir(folder) for folder in alive)
    cgroup.close(alive)
