"""``minimodel-grader slurm``: the job array and its merge, run on a real one-node Slurm.

The cluster is started by the test itself, with no systemd: a ``slurm.conf``, a munge key and
every state, spool, log and pid file under a temporary folder, ``munged``, ``slurmctld`` and
``slurmd`` in the foreground of child processes, stopped by their PIDs at the end. Where Slurm
cannot start (packages missing, not root) the test is skipped and says why, unless
``MINIMODEL_REQUIRE_SLURM=1`` (set by CI where it installed them), which makes that a failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.build.demo import build_sample
from grader.cli import main
from grader.trusted.slurm import SlurmJobs

BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue", "scontrol")
LABS = ("--lab", "17.01", "--lab", "17.03")  # the demo class on two labs keeps the test short
DEMO_LIMITS = ("--timeout", "6")  # the demo's limits (grader/build/demo.py)


def test_the_scripts_split_the_class_and_merge_every_shard(tmp_path):
    (tmp_path / "subs").mkdir()
    jobs = SlurmJobs(tmp_path / "subs", tmp_path / "grades", 3)
    grade = jobs.grade_script(["--device", "cpu"])
    assert "#SBATCH --array=0-2" in grade and "--shard $SLURM_ARRAY_TASK_ID/3" in grade
    assert "--gres" not in grade
    merge = jobs.merge_script()
    assert all(str(jobs.shard_dir(i)) in merge for i in range(3))
    assert "--dependency=afterok:" in jobs.submit_script()


def test_gpu_asks_slurm_for_one_and_grades_on_cuda(tmp_path, capsys):
    (tmp_path / "subs").mkdir()
    for flag in ("--gpu", "--device=cuda"):
        assert main(["slurm", str(tmp_path / "subs"), "--out", str(tmp_path / "g"),
                     "--shards", "2", flag]) == 0
        grade = (tmp_path / "g" / "slurm" / "grade.sbatch").read_text()
        assert "#SBATCH --gres=gpu:1" in grade and "--device cuda" in grade
    assert "sbatch --array=I" in capsys.readouterr().out  # how to rerun one task is said


def test_nothing_is_written_for_a_class_that_is_not_there(tmp_path, capsys):
    assert main(["slurm", str(tmp_path / "missing"), "--out", str(tmp_path / "g"),
                 "--shards", "2"]) == 2
    assert "[es]" in capsys.readouterr().err and not (tmp_path / "g").exists()


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def _why_not() -> str | None:
    missing = [name for name in BINARIES if not shutil.which(name)]
    if missing:
        return (f"Slurm is not installed ({', '.join(missing)} missing: apt-get install "
                "slurmd slurmctld munge)")
    if os.geteuid() != 0:
        return "Slurm's daemons need root here (slurmd runs the jobs' processes)"
    return None


def _wait(what: str, ready, seconds: float, logs: list[Path]) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(1)
    tails = "\n".join(f"--- {log}\n{log.read_text(errors='replace')[-2000:]}"
                      for log in logs if log.exists())
    raise TimeoutError(f"{what} after {seconds:g} s\n{tails}")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A one-node Slurm cluster of our own: ``{"env": ..., "root": ...}`` for its commands."""
    reason = _why_not()
    if reason:
        if os.environ.get("MINIMODEL_REQUIRE_SLURM") == "1":
            pytest.fail(f"{reason}; MINIMODEL_REQUIRE_SLURM=1 requires it", pytrace=False)
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("slurm")
    for folder in ("state", "spool", "munge"):
        (root / folder).mkdir(mode=0o700)
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    munge_socket = root / "munge" / "munge.socket"
    ctld_port, node_port = _free_ports(2)
    host = socket.gethostname().split(".")[0]
    conf = root / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=minimodel", f"SlurmctldHost={host}(127.0.0.1)",
        "AuthType=auth/munge", f"AuthInfo=socket={munge_socket}", "CredType=cred/munge",
        "SlurmUser=root", "SlurmdUser=root", f"SlurmctldPort={ctld_port}",
        f"SlurmdPort={node_port}", f"StateSaveLocation={root / 'state'}",
        f"SlurmdSpoolDir={root / 'spool'}", f"SlurmctldPidFile={root / 'slurmctld.pid'}",
        f"SlurmdPidFile={root / 'slurmd.pid'}", f"SlurmctldLogFile={root / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'slurmd.log'}", "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none", "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
        "MpiDefault=none", "SwitchType=switch/none", "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none", "ReturnToService=2",
        "MinJobAge=600", "MailProg=/bin/true", "SlurmdTimeout=300", "InactiveLimit=0",
        f"NodeName=minimodel-node NodeAddr=127.0.0.1 CPUs={max(2, os.cpu_count() or 2)} "
        "State=UNKNOWN",
        "PartitionName=debug Nodes=minimodel-node Default=YES MaxTime=INFINITE State=UP", ""]))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    logs = [root / "munged.log", root / "slurmctld.log", root / "slurmd.log"]
    daemons = []
    try:
        daemons.append(subprocess.Popen(
            ["munged", "--foreground", "--force", f"--socket={munge_socket}",
             f"--key-file={key}", f"--pid-file={root / 'munge' / 'munged.pid'}",
             f"--log-file={logs[0]}", f"--seed-file={root / 'munge' / 'seed'}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
        _wait("munged did not start", munge_socket.exists, 30, logs)
        daemons.append(subprocess.Popen(["slurmctld", "-D", "-i", "-f", str(conf)], env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
        daemons.append(subprocess.Popen(["slurmd", "-D", "-N", "minimodel-node", "-f", str(conf)],
                                        env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.STDOUT))

        def idle() -> bool:
            if any(daemon.poll() is not None for daemon in daemons):
                raise RuntimeError("a Slurm daemon stopped:\n" + "\n".join(
                    log.read_text(errors="replace")[-2000:] for log in logs if log.exists()))
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True,
                                   text=True).stdout.strip()
            return state == "idle"

        _wait("the Slurm node is not idle", idle, 90, logs)
        yield {"env": env, "root": root}
    finally:
        for daemon in reversed(daemons):  # ours, by PID
            if daemon.poll() is None:
                os.kill(daemon.pid, signal.SIGTERM)
                try:
                    daemon.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.kill(daemon.pid, signal.SIGKILL)
                    daemon.wait()


def _job_state(job: str, env: dict) -> str:
    shown = subprocess.run(["scontrol", "show", "job", job], env=env, capture_output=True,
                           text=True).stdout
    states = [word.split("=", 1)[1] for word in shown.split() if word.startswith("JobState=")]
    return ",".join(sorted(set(states)))


def _grader(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader.cli", *args], env=env,
                          capture_output=True, text=True)


def test_more_cpus_than_a_node_has_is_refused_before_anything_is_queued(slurm, tmp_path):
    env = slurm["env"]
    build_sample("stubs", tmp_path / "subs" / "stubs")
    done = _grader("slurm", str(tmp_path / "subs"), "--out", str(tmp_path / "grades"),
                   "--shards", "1", "--cpus-per-task", "4096", "--submit", env=env)
    assert done.returncode != 0 and "--cpus-per-task 4096" in done.stderr
    assert "[es]" in done.stderr and "[en]" in done.stderr
    queued = subprocess.run(["squeue", "--noheader", "--name=minimodel-grade"], env=env,
                            capture_output=True, text=True).stdout
    assert not queued.strip()


@pytest.mark.slow
def test_a_class_graded_by_a_job_array_is_graded_as_on_one_machine(slurm, tmp_path):
    env = slurm["env"]
    subs = tmp_path / "subs"
    for sample in ("reference", "stubs", "buggy", "hostile"):  # shards 0/2: reference, stubs
        build_sample(sample, subs / sample)
    done = _grader("slurm", str(subs), "--out", str(tmp_path / "grades"), "--shards", "2",
                   "--cpus-per-task", "1", "--submit", *LABS, *DEMO_LIMITS, env=env)
    assert done.returncode == 0, done.stderr
    said = done.stdout.split("submitted: array ")[1]
    array, merge = said.split()[0], said.split("merge ")[1].split()[0]
    one = _grader("grade", str(subs), "--out", str(tmp_path / "one"), "--workers", "2",
                  "--no-progress", *LABS, *DEMO_LIMITS, env=env)  # while the array runs
    assert one.returncode == 0, one.stderr
    logs = [slurm["root"] / "slurmctld.log", *sorted((tmp_path / "grades" / "slurm").glob("*"))]
    _wait("the merge job did not complete", lambda: _job_state(merge, env) in
          ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"), 900, logs)
    assert _job_state(array, env) == "COMPLETED"
    assert _job_state(merge, env) == "COMPLETED", "\n".join(p.read_text() for p in logs[1:])
    merged = (tmp_path / "grades" / "grades.csv").read_bytes()
    assert merged == (tmp_path / "one" / "grades.csv").read_bytes()
    for index in (0, 1):
        assert (tmp_path / "grades" / "shards" / f"shard-{index}" / "run.json").exists()

    # a task killed before it recorded a student: the merge refuses, the task rerun alone grades
    # that student only, and the merge then gives the same grades
    (tmp_path / "grades" / "shards" / "shard-1" / "records" / "buggy.json").unlink()
    refused = _grader("merge", *(str(tmp_path / "grades" / "shards" / f"shard-{i}")
                                 for i in (0, 1)), "--out", str(tmp_path / "again"), env=env)
    assert refused.returncode == 2 and "[es]" in refused.stderr
    rerun = subprocess.run(["sbatch", "--parsable", "--array=1",
                            str(tmp_path / "grades" / "slurm" / "grade.sbatch")], env=env,
                           capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    again = subprocess.run(["sbatch", "--parsable", f"--dependency=afterok:{rerun.stdout.strip()}",
                            str(tmp_path / "grades" / "slurm" / "merge.sbatch")], env=env,
                           capture_output=True, text=True).stdout.strip()
    _wait("the second merge did not complete", lambda: _job_state(again, env) in
          ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"), 900, logs)
    assert _job_state(again, env) == "COMPLETED"
    assert (tmp_path / "grades" / "grades.csv").read_bytes() == merged
