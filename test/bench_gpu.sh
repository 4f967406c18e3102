#!/bin/sh
# The device side of `make bench-gpu` (test/bench_gpu.py documents both stages).
# Run on the GPU machine by the device tool, from the repository's root, after
# `make bench-gpu-build` here has filled build/bench-gpu/ (carried):
#
#     run(command="bash test/bench_gpu.sh", carry=["build/bench-gpu"], timeout_s=600)
#
# Arguments go to `bench_gpu.py run` (e.g. --models gpt2 --batches 32 --deadline 300).
# The log and the JSON report go to $OUT (build/ when OUT is unset).
set -u
OUT=${OUT:-build}
mkdir -p "$OUT"
rc=$(mktemp)
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
	PATH=/usr/local/cuda/bin:$PATH
fi
export PATH PYTHONUNBUFFERED=1
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
	nvcc --version 2>&1 | tail -1
	for c in clang gcc cc; do command -v $c >/dev/null 2>&1 && echo "C compiler: $c"; done
	${PYTHON:-python3} test/bench_gpu.py run --json "$OUT/bench_gpu.json" "$@"
	echo $? >"$rc"
} 2>&1 | tee "$OUT/bench_gpu.log"
status=$(cat "$rc" 2>/dev/null || echo 1)
rm -f "$rc"
echo "bench_gpu.py exit $status"
exit "$status"
