#!/usr/bin/env bash
# One session on a GPU machine: the GPU checks (benchmarks/gpu_check.py), then the demo class
# graded with --device cuda (the CUDA runs count for points). Without a GPU both say so and
# nothing is graded: "no GPU" is never "passed".
#
#   benchmarks/gpu_run.sh [OUT]          # OUT: where the demo writes (default build/gpu-demo)
#   PYTHON=python3 benchmarks/gpu_run.sh # another interpreter than .venv/bin/python
#
# Exit status: 0 when both ran and passed (or there is no GPU), 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
OUT=${1:-build/gpu-demo}

"$PY" -c "import sys, torch; print(f'python {sys.version.split()[0]}, torch {torch.__version__}, ' \
  f'CUDA build {torch.version.cuda}, GPU seen: {torch.cuda.is_available()}')" || exit 1
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

echo "== benchmarks/gpu_check.py"
SECONDS=0
"$PY" benchmarks/gpu_check.py
check=$?
echo "gpu_check: exit $check, ${SECONDS} s"

if ! "$PY" -c "import sys, torch; sys.exit(not torch.cuda.is_available())"; then
  echo "no GPU: the demo class was not graded on CUDA (not run, not passed)."
  exit "$check"
fi
echo "== minimodel-grader demo --device cuda --out $OUT"
SECONDS=0
"$PY" -m grader.cli demo --device cuda --out "$OUT"
demo=$?
echo "demo --device cuda: exit $demo, ${SECONDS} s"
"$PY" - "$OUT/grades/grades.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
for row in rows:
    print(f"{row['student_id']:<12} total {row['total']:>7}  gpu_checks {row['gpu_checks']:<9} "
          f"device {row['device']:<6} status {row['status']}")
PY
[ "$check" = 0 ] && [ "$demo" = 0 ]
