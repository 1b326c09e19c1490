"""A class graded on a Slurm cluster: one job-array task per shard, then one merge job.

``minimodel-grader slurm SUBMISSIONS --out GRADES --shards N`` writes, under ``GRADES/slurm/``:

- ``grade.sbatch``, the job array ``0..N-1``: task ``i`` runs ``grade --shard i/N`` into
  ``GRADES/shards/shard-i`` (the same ``--shard`` as by hand, see ``grading.in_shard``);
- ``merge.sbatch``, which joins the N shard folders into ``GRADES`` (``merging.merge``, which
  refuses a missing shard); submitted with ``--dependency=afterok:<array>``, it starts only
  once every task succeeded;
- ``submit.sh``, the two ``sbatch`` calls, for a cluster reached from another machine.

A task that failed or was killed is rerun alone (``sbatch --array=i grade.sbatch``): grading
resumes where it stopped, and the merge is then submitted again. Every path in the scripts is
absolute and the grader runs with this interpreter, so the repository and its ``.venv`` must
be on a file system the nodes share.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from minimodel.messages import bilingual


class SlurmError(RuntimeError):
    """``sbatch`` refused a job; the message says what it answered, in both languages."""


@dataclass
class SlurmJobs:
    """The scripts written for one class, and where everything goes."""

    submissions: Path
    out: Path
    shards: int
    gpu: bool = False
    partition: str | None = None
    time: str | None = None
    cpus: int = 4

    @property
    def folder(self) -> Path:
        return self.out / "slurm"

    def shard_dir(self, index: int | str) -> Path:
        return self.out / "shards" / f"shard-{index}"

    def _header(self, name: str, log: str) -> list[str]:
        lines = ["#!/bin/bash", f"#SBATCH --job-name={name}",
                 f"#SBATCH --output={self.folder}/{log}"]
        lines += [f"#SBATCH --partition={self.partition}"] if self.partition else []
        lines += [f"#SBATCH --time={self.time}"] if self.time else []
        return lines

    def grade_script(self, grade_args: list[str]) -> str:
        """The array script: ``grade --shard $SLURM_ARRAY_TASK_ID/N``, one task per shard
        (``grade_args``: the other options of ``grade``, the same for every shard)."""
        python = shlex.quote(sys.executable)
        args = " ".join(shlex.quote(a) for a in grade_args)
        lines = self._header("minimodel-grade", "grade-%A_%a.out")
        lines += [f"#SBATCH --array=0-{self.shards - 1}", f"#SBATCH --cpus-per-task={self.cpus}"]
        lines += ["#SBATCH --gres=gpu:1"] if self.gpu else []
        lines += ["# Rerun one task alone (it resumes): sbatch --array=I THIS_FILE", "set -eu",
                  f"{python} -m grader.cli grade {shlex.quote(str(self.submissions))} \\",
                  f"    --out {shlex.quote(str(self.out / 'shards'))}/shard-$SLURM_ARRAY_TASK_ID"
                  f" \\\n    --shard $SLURM_ARRAY_TASK_ID/{self.shards}"
                  f" --workers $SLURM_CPUS_PER_TASK --no-progress" + (f" {args}" if args else "")]
        return "\n".join(lines) + "\n"

    def merge_script(self) -> str:
        """The merge: every shard named, so that a missing one is refused."""
        python = shlex.quote(sys.executable)
        shards = " ".join(shlex.quote(str(self.shard_dir(i))) for i in range(self.shards))
        lines = self._header("minimodel-merge", "merge-%j.out")
        lines += ["#SBATCH --cpus-per-task=1", "set -eu",
                  f"{python} -m grader.cli merge {shards} --out {shlex.quote(str(self.out))}"]
        return "\n".join(lines) + "\n"

    def submit_script(self) -> str:
        grade, merge = (shlex.quote(str(self.folder / n)) for n in ("grade.sbatch", "merge.sbatch"))
        return ("#!/bin/bash\nset -eu\n"
                f"array=$(sbatch --parsable {grade})\n"
                f"merge=$(sbatch --parsable --dependency=afterok:${{array%%;*}} {merge})\n"
                'echo "array ${array%%;*}, merge $merge"\n')

    def write(self, grade_args: list[str]) -> list[Path]:
        """Write the three scripts; return their paths."""
        self.folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in (("grade.sbatch", self.grade_script(grade_args)),
                           ("merge.sbatch", self.merge_script()),
                           ("submit.sh", self.submit_script())):
            path = self.folder / name
            path.write_text(text, encoding="utf-8")
            path.chmod(0o755)
            written.append(path)
        return written

    def submit(self) -> tuple[str, str]:
        """Submit the array, then the merge after it: ``(array job id, merge job id)``. A task
        that asks for more CPUs than any node of the partition has is refused first: Slurm
        would queue it for ever (``Reason=PartitionConfig``)."""
        largest = _largest_node(self.partition)
        if largest is not None and self.cpus > largest:
            where = f"la partición {self.partition}" if self.partition else "el clúster"
            there = f"partition {self.partition}" if self.partition else "the cluster"
            raise SlurmError(bilingual(
                f"--cpus-per-task {self.cpus}: ningún nodo de {where} tiene más de {largest} "
                f"CPU, y Slurm dejaría las tareas esperando para siempre. Usa "
                f"--cpus-per-task {largest} o menos.",
                f"--cpus-per-task {self.cpus}: no node of {there} has more than {largest} "
                f"CPUs, and Slurm would leave the tasks waiting for ever. Use "
                f"--cpus-per-task {largest} or fewer."))
        array = _sbatch([str(self.folder / "grade.sbatch")])
        merge = _sbatch([f"--dependency=afterok:{array}", str(self.folder / "merge.sbatch")])
        return array, merge

    def report(self, written: list[Path]) -> list[str]:
        """What was written, and how to submit, rerun one task and merge, in both languages."""
        grade, merge = self.folder / "grade.sbatch", self.folder / "merge.sbatch"
        return [*(f"  {path}" for path in written), bilingual(
            f"Enviar: sbatch {grade}, y después sbatch --dependency=afterok:<id> {merge} (o bien "
            f"{self.folder / 'submit.sh'}). Si una tarea I falla, vuelve a lanzarla sola "
            f"(sbatch --array=I {grade}; sigue donde se quedó) y luego sbatch {merge}; la fusión "
            "rechaza una parte que falte.",
            f"Submit: sbatch {grade}, then sbatch --dependency=afterok:<id> {merge} (or "
            f"{self.folder / 'submit.sh'}). If task I fails, rerun it alone "
            f"(sbatch --array=I {grade}; it resumes) and then sbatch {merge}; the merge refuses "
            "a missing shard.")]


def _largest_node(partition: str | None) -> int | None:
    """The most CPUs one node of ``partition`` (the default one: any) has, as ``sinfo`` says;
    ``None`` when it cannot tell."""
    args = ["sinfo", "--noheader", "--format=%c", *(["--partition", partition] if partition
                                                     else [])]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    counts = [int(word.rstrip("+")) for word in done.stdout.split() if word.rstrip("+").isdigit()]
    return max(counts) if done.returncode == 0 and counts else None


def _sbatch(args: list[str]) -> str:
    """Run ``sbatch --parsable``; the job id (without a cluster name)."""
    try:
        done = subprocess.run(["sbatch", "--parsable", *args], capture_output=True, text=True,
                              timeout=120)
    except (OSError, subprocess.SubprocessError) as error:
        raise SlurmError(bilingual(f"No se pudo ejecutar sbatch: {error}.",
                                   f"Could not run sbatch: {error}.")) from None
    if done.returncode != 0 or not done.stdout.strip():
        answer = (done.stderr or done.stdout).strip()
        raise SlurmError(bilingual(f"sbatch rechazó {args[-1]}: {answer}",
                                   f"sbatch refused {args[-1]}: {answer}"))
    return done.stdout.strip().split(";")[0]
