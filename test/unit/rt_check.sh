#!/bin/sh
# rt_check.sh [OUTDIR] - make unit's check of the runtime sources (backends/rt/):
# each compiled on its own, under -Wall -Wextra -Werror, for every
# configuration a generated library uses, and run where this machine can:
#
#   the CPU targets   test/unit/rt_cpu.c with clang (the compiler doccc runs):
#                     none (no -march, no SIMD), sequential at x86-64-v2, -v3
#                     and -v4 (4, 8, 16 fp32 lanes), openmp at -v3; each run
#                     (a -march this CPU lacks is refused by the library's
#                     own CPU check, which is that check's test)
#   the GPU targets   test/unit/rt_gpu.cpp, static or with a run-time dim,
#                     without weights, embedded or from a file: in the
#                     simulation (clang++ -DDOCCC_SIM) compiled and run; with
#                     nvcc (sm_90) and hipcc (gfx90a) compiled only (no GPU
#                     here). A missing nvcc or hipcc is a note, and in CI
#                     (CI=true) an error.
#   doccc tune        backends/rt/tune_harness.h, the timing harness: compiled,
#                     and its usage exit checked
set -e
O=${1:-build/test/rt}
mkdir -p "$O"
W="-Wall -Wextra -Werror"
ci=$(echo "${CI:-}" | tr A-Z a-z)
for cfg in none::0: sequential-v2:x86-64-v2:4: sequential-v3:x86-64-v3:8: sequential-v4:x86-64-v4:16: \
           openmp-v3:x86-64-v3:8:-fopenmp; do
	n=${cfg%%:*}; r=${cfg#*:}; m=${r%%:*}; r=${r#*:}; l=${r%%:*}; x=${r#*:}
	if [ -n "$m" ]; then
		clang -std=c11 -O2 $W -march="$m" $x -DDC_LANES="$l" -DDC_MARCH="\"-march=$m\"" -o "$O/rt_cpu_$n" \
			test/unit/rt_cpu.c -lm
	else
		clang -std=c11 -O2 $W -DDC_LANES=0 -o "$O/rt_cpu_$n" test/unit/rt_cpu.c -lm
	fi
	"$O/rt_cpu_$n"
done
have() { command -v "$1" >/dev/null 2>&1; }
for tool in nvcc hipcc; do
	if ! have $tool; then
		case $ci in true|1|yes) echo "rt_check: $tool not found (CI: the GPU runtime sources must compile with it)"; exit 1;; esac
		echo "rt_check: note: $tool not found: the runtime sources are not compiled with it"
	fi
done
for d in 0 1; do
	for w in 0 1 2; do
		cfg="-DDC_NDIMS=$d -DDC_WEIGHTS=$w"
		clang++ -std=c++17 -O1 $W -DDOCCC_SIM $cfg -o "$O/rt_gpu_sim_$d$w" test/unit/rt_gpu.cpp -lpthread
		"$O/rt_gpu_sim_$d$w"
		if have nvcc; then
			nvcc -x cu -std=c++17 -O1 -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings \
				--generate-code=arch=compute_90,code=sm_90 $cfg -c -o "$O/rt_gpu_cuda_$d$w.o" test/unit/rt_gpu.cpp
			echo "rt_gpu (nvcc, DC_NDIMS $d, DC_WEIGHTS $w): compiled"
		fi
		if have hipcc; then
			hipcc --offload-arch=gfx90a -x hip -std=c++17 -O1 $W $cfg -c -o "$O/rt_gpu_hip_$d$w.o" test/unit/rt_gpu.cpp
			echo "rt_gpu (hipcc, DC_NDIMS $d, DC_WEIGHTS $w): compiled"
		fi
	done
done
# doccc tune's timing harness, a program of its own (test/test_tuning.py
# runs it on libraries): it compiles cleanly, and without its arguments
# prints its usage and exits 2
clang -std=c11 -O2 $W -Ibackends -o "$O/tune_harness" -x c backends/rt/tune_harness.h -ldl
st=0; "$O/tune_harness" 2>/dev/null || st=$?
[ "$st" -eq 2 ] || { echo "rt_check: tune_harness without arguments exited $st, not 2"; exit 1; }
echo "tune_harness: compiled; usage exit 2"
