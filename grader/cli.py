"""``minimodel-grader``: the instructor's command line.

- ``references [--check]``: regenerate (or check) the hidden reference outputs from ``solutions/``.
- ``release OUT``: write the student repository (no solutions, hidden checks, references, samples).
- ``grade SUBMISSIONS --out OUT [--workers N] [--device cpu|cuda|auto] [--force] [--shard i/n]``:
  grade a class; exit status 0 when the run completed, whatever students scored.
- ``merge SOURCE... --out OUT [--manual gradebook.db]``: join the grading folders of several
  shards, and/or the written answers graded by hand in formgrader.
- ``nbgrader-course COURSE [--lab ID] [--scores OUT [--submissions SUBMISSIONS]]``: write the
  nbgrader course of the labs (config, ``source/``, ``release/``, ``gradebook.db``), or put the
  scores graded into ``OUT`` into its ``gradebook.db`` (and the notebooks of ``SUBMISSIONS``
  into its ``submitted/``, for formgrader).
- ``slurm SUBMISSIONS --out GRADES --shards N [--gpu] [--submit]``: write a Slurm job array (one
  task per shard) and the merge job that waits for it (``GRADES/slurm/``); submit both.
- ``gradescope BUNDLE.zip [--lab ID]``: write the autograder bundle for Gradescope (one container
  per submission; ``grader/trusted/gradescope.py`` grades there).
- ``demo``: grade the bundled sample submissions and print the table.

Splitting a class across machines: each job grades one shard into its own folder, then one
``merge`` joins them. ``slurm`` writes this for a Slurm cluster; by hand, with a Slurm array::

    #SBATCH --array=0-3
    minimodel-grader grade subs/ --out out/shard-$SLURM_ARRAY_TASK_ID \\
        --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT
    # afterwards, once: minimodel-grader merge out/shard-* --out out/all

With a Kubernetes indexed Job (``completionMode: Indexed``, ``completions: 4``), the index is in
``JOB_COMPLETION_INDEX``::

    minimodel-grader grade /shared/subs --shard $JOB_COMPLETION_INDEX/4 \
        --out /shared/out/shard-$JOB_COMPLETION_INDEX

Shard ``i/n`` takes the submissions whose student id hashes to ``i`` modulo ``n`` (a stable
hash, so adding a submission between jobs moves nobody else); ``merge`` refuses a missing or
repeated shard and folders graded with other settings.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from grader.trusted.sandbox import Limits
from minimodel.messages import bilingual

LAB_HELP = "only this lab: its id (17.01) or slug (17_01_sinusoidal); repeatable"


def _shard(text: str) -> tuple[int, int]:
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError("use i/n, e.g. 0/4") from None
    if not (count >= 1 and 0 <= index < count):
        raise argparse.ArgumentTypeError("need 0 <= i < n")
    return index, count


def _positive(kind: type) -> Callable[[str], float]:
    """An argparse type: a number of ``kind`` above 0."""
    def parse(text: str) -> float:
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
        return value

    parse.__name__ = kind.__name__  # argparse says "invalid float value" for a typo
    return parse


LIMIT_FLAGS = (  # flag, Limits field, type, help (every limit of a run has one)
    ("--timeout", "wall_s", float, "wall-clock seconds per probe group"),
    ("--cpu", "cpu_s", int, "CPU seconds per probe group (default: --timeout + 1)"),
    ("--case-cpu", "case_cpu_s", float, "CPU seconds per hidden case, at most 0.7 x --cpu: the "
     "function still running then is not run again for that student"),
    ("--memory", "memory_mb", int, "MiB per probe group, all its processes together"),
    ("--processes", "nproc", int, "processes and threads per probe group"),
    ("--file-size", "fsize_mb", int, "MiB per file written"),
    ("--open-files", "nofile", int, "open files per process"),
    ("--output-kb", "output_kb", int, "KiB of printed output kept per run"),
    ("--cell-timeout", "cell_timeout_s", int, "seconds per notebook cell"),
    ("--notebook-timeout", "notebook_wall_s", int,
     "seconds per notebook (default: the larger of 240 and 4 x --cell-timeout)"),
    ("--kernel-memory", "kernel_memory_mb", int, "MiB per notebook kernel, with all it forks"),
    ("--scratch", "scratch_mb", int, "MiB a submission's scratch folder holds (a tmpfs)"),
)
STUDENT_FLAGS = (  # 0 turns these caps off
    ("--student-cpu", "student_cpu_s", "CPU seconds one student may use over all items; then "
                                       "the items not yet run score 0"),
    ("--student-wall", "student_wall_s", "seconds one student's runs may hold a worker; then "
                                         "the items not yet run score 0"),
)


def _add_limits(parser: argparse.ArgumentParser) -> None:
    defaults = Limits()
    for flag, name, kind, text in LIMIT_FLAGS:
        derived = name in ("cpu_s", "notebook_wall_s")
        parser.add_argument(flag, type=_positive(kind), dest=name,
                            default=None if derived else getattr(defaults, name),
                            help=text if derived else f"{text} (default "
                                                      f"{getattr(defaults, name):g})")
    for flag, name, text in STUDENT_FLAGS:
        parser.add_argument(flag, type=float, dest=name, default=getattr(defaults, name),
                            help=f"{text} (default {getattr(defaults, name):g}; 0: none)")


def _add_device(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", choices=("cpu", "cuda", "auto"), default="auto",
                        help="cuda: the CUDA runs count for points (grade the whole class so); "
                             "auto (default): a GPU, if any, fills the gpu_checks column only")


def _add_export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--export", action="append", choices=("canvas", "moodle", "gradescope"),
                        help="also write OUT/export/<lms>.csv for that LMS's grade import "
                             "(repeatable; needs --roster)")
    parser.add_argument("--roster", type=Path,
                        help="CSV: submission,name,email,sis_id,canvas_id,section")
    parser.add_argument("--assignment", default="Positional encodings",
                        help="the assignment's name in the LMS")
    parser.add_argument("--assignment-id", default="", help="Canvas: the assignment's id")


def _export(args, out: Path) -> None:
    from grader.trusted import lms_export

    for lms in args.export or []:
        result = lms_export.export(out, lms, args.roster, args.assignment, args.assignment_id)
        print("\n".join(lms_export.report(result)))


def _limits(args) -> Limits:
    values = {name: getattr(args, name) for _f, name, *_rest in (*LIMIT_FLAGS, *STUDENT_FLAGS)}
    if values["cpu_s"] is None:
        values["cpu_s"] = int(args.wall_s) + 1
    if values["notebook_wall_s"] is None:
        values["notebook_wall_s"] = max(Limits().notebook_wall_s, 4 * args.cell_timeout_s)
    return Limits(**values)


def _slurm(args) -> int:
    from grader.trusted.grading import Options, check_class
    from grader.trusted.slurm import SlurmJobs

    gpu = args.gpu or args.device == "cuda"
    check_class(args.submissions, args.out, Options(device=args.device, labs=args.lab))
    limits = [(flag, getattr(args, name)) for flag, name, *_ in (*LIMIT_FLAGS, *STUDENT_FLAGS)]
    grade_args = ["--device", "cuda" if gpu else args.device,
                  *(arg for flag, value in limits if value is not None
                    for arg in (flag, f"{value:g}")),
                  *(arg for lab in args.lab or [] for arg in ("--lab", lab))]
    jobs = SlurmJobs(args.submissions.resolve(), args.out.resolve(), args.shards, gpu=gpu,
                     partition=args.partition, time=args.time, cpus=args.cpus_per_task)
    written = jobs.write(grade_args)
    print("\n".join(jobs.report(written)))
    if args.submit:
        array, merge = jobs.submit()
        print(bilingual(f"enviados: array {array} ({args.shards} tareas), fusión {merge} "
                        f"(después de {array})",
                        f"submitted: array {array} ({args.shards} tasks), merge {merge} "
                        f"(after {array})"))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="minimodel-grader", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    sub = parser.add_subparsers(dest="command", required=True)

    refs = sub.add_parser("references", help="regenerate the hidden reference outputs")
    refs.add_argument("--check", action="store_true", help="report drift, write nothing")
    refs.add_argument("--lab", action="append", help=LAB_HELP)

    release = sub.add_parser("release", help="write the student repository")
    release.add_argument("out", type=Path)
    release.add_argument("--force", action="store_true", help="replace OUT if it exists")

    grade = sub.add_parser("grade", help="grade a folder of submissions")
    grade.add_argument("submissions", type=Path)
    grade.add_argument("--out", type=Path, required=True)
    grade.add_argument("--workers", type=int, default=0, help="default: every core")
    _add_device(grade)
    grade.add_argument("--force", action="store_true", help="regrade finished students too")
    grade.add_argument("--shard", type=_shard, default=None, help="i/n: grade one shard")
    grade.add_argument("--lab", action="append", help=LAB_HELP)
    grade.add_argument("--no-progress", action="store_true")
    _add_limits(grade)
    _add_export(grade)

    slurm = sub.add_parser("slurm", help="write (and submit) a Slurm job array and its merge")
    slurm.add_argument("submissions", type=Path)
    slurm.add_argument("--out", type=Path, required=True, help="the merged grades")
    slurm.add_argument("--shards", type=_positive(int), required=True,
                       help="array tasks, one shard each")
    slurm.add_argument("--gpu", action="store_true",
                       help="one GPU per task (--gres=gpu:1) and --device cuda")
    slurm.add_argument("--partition", help="#SBATCH --partition")
    slurm.add_argument("--time", help="#SBATCH --time of each task, e.g. 2:00:00")
    slurm.add_argument("--cpus-per-task", type=_positive(int), default=4,
                       help="cores per task, all used as grading workers (default 4)")
    slurm.add_argument("--submit", action="store_true",
                       help="submit the array and the merge (sbatch --parsable)")
    slurm.add_argument("--lab", action="append", help=LAB_HELP)
    _add_device(slurm)
    _add_limits(slurm)

    scope = sub.add_parser("gradescope", help="write the Gradescope autograder bundle (.zip)")
    scope.add_argument("bundle", type=Path, help="the .zip to upload to Gradescope")
    scope.add_argument("--lab", action="append", help=LAB_HELP)
    scope.add_argument("--force", action="store_true", help="replace BUNDLE if it exists")
    scope.add_argument("--timeout", dest="timeout_s", type=float, default=600,
                       help="the assignment's time-out on Gradescope, in seconds (its default: "
                            "600); each student's budgets are set within it")
    _add_device(scope)

    merge = sub.add_parser("merge", help="join shard folders and/or manual grades")
    merge.add_argument("sources", type=Path, nargs="*")
    merge.add_argument("--out", type=Path, required=True)
    merge.add_argument("--manual", type=Path, help="nbgrader gradebook.db with manual grades")
    _add_export(merge)

    course = sub.add_parser("nbgrader-course",
                            help="write the nbgrader course, or bring scores into it")
    course.add_argument("course", type=Path, help="the nbgrader course folder")
    course.add_argument("--lab", action="append", help=LAB_HELP)
    course.add_argument("--scores", type=Path, metavar="OUT",
                        help="put the scores graded into OUT into the course's gradebook.db")
    course.add_argument("--submissions", type=Path,
                        help="with --scores: the repository submissions OUT was graded from; "
                             "their notebooks go to COURSE/submitted/ for formgrader")

    demo = sub.add_parser("demo", help="grade the bundled samples and print the table")
    demo.add_argument("--out", type=Path, default=None)
    demo.add_argument("--workers", type=int, default=0)
    _add_device(demo)

    args = parser.parse_args(argv)
    if getattr(args, "export", None) and args.roster is None:  # before an hour of grading
        parser.error("--export necesita --roster / --export needs --roster")
    return _dispatch(args)


def _dispatch(args) -> int:
    from grader.build.nbgrader_course import CourseError
    from grader.build.release import ReleaseError
    from grader.hidden import LabChoiceError
    from grader.trusted.grading import GradingError
    from grader.trusted.lms_export import ExportError
    from grader.trusted.merging import MergeError
    from grader.trusted.slurm import SlurmError

    try:
        if args.command == "references":
            from grader.build import references

            if args.check:
                problems = references.drift(labs=args.lab)
                print("\n".join(problems) if problems else "reference outputs up to date")
                return 1 if problems else 0
            references.regenerate(labs=args.lab)
        elif args.command == "release":
            from grader.build.release import release

            written = release(args.out, force=args.force)
            print(f"student repository: {len(written)} files in {args.out}")
        elif args.command == "grade":
            from grader.trusted.grading import Options, grade
            from grader.trusted.lms_export import read_roster

            if args.export:  # a roster it cannot read is said now, not after the whole class
                read_roster(args.roster)
            options = Options(workers=args.workers, device=args.device, force=args.force,
                              shard=args.shard, limits=_limits(args),
                              progress=not args.no_progress, labs=args.lab)
            grade(args.submissions, args.out, options)
            _export(args, args.out)
        elif args.command == "slurm":
            return _slurm(args)
        elif args.command == "gradescope":
            from grader.build.gradescope import build_bundle, settings_note

            names = build_bundle(args.bundle, args.lab, args.device, force=args.force,
                                 timeout_s=args.timeout_s)
            print(settings_note(args.timeout_s))
            print(bilingual(f"{args.bundle}: {len(names)} archivos, setup.sh y run_autograder en "
                            "la raíz; súbelo como autograder de la tarea en Gradescope.",
                            f"{args.bundle}: {len(names)} files, setup.sh and run_autograder at "
                            "its root; upload it as the assignment's autograder on Gradescope."))
        elif args.command == "merge":
            from grader.build import nbgrader_course
            from grader.trusted import gradebook, merging

            if args.sources:
                count = merging.merge(args.sources, args.out)
                print(f"merged {count} records into {args.out / 'grades.csv'}")
            if args.manual:
                taken = nbgrader_course.merge_manual(args.out, args.manual)
                print(f"took {taken} manual scores from {args.manual}")
            if not args.sources and not args.manual:
                gradebook.rebuild(args.out, rewrite_feedback=True)
            _export(args, args.out)
        elif args.command == "nbgrader-course":
            from grader.build import nbgrader_course

            if args.scores:
                count = nbgrader_course.write_scores(args.course, args.scores,
                                                     args.submissions)
                print(f"scores of {count} submitted notebooks written into "
                      f"{args.course / 'gradebook.db'}")
            else:
                slugs = nbgrader_course.write_course(args.course, labs=args.lab)
                print(f"nbgrader course in {args.course}: {', '.join(slugs)}")
        else:  # demo
            from grader.build.demo import run_demo

            return run_demo(out=args.out, workers=args.workers, device=args.device)
    except (GradingError, MergeError, CourseError, ExportError, LabChoiceError,
            ReleaseError, SlurmError) as error:
        print(f"minimodel-grader: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
