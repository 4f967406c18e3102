#!/bin/sh
# test/fuzz/run.sh NAME SECONDS - one harness of test/fuzz/fuzz.mk for SECONDS
# (0: over its corpora only, no fuzzing), from its seeds and regression
# inputs (FUZZ_SEED, FUZZ_RUNS: see fuzz.mk), new inputs kept in
# build/fuzz/work/NAME (FUZZ_WORK/NAME), a failure in
# build/fuzz/crash/NAME. Prints one line of counts; on failure the log's tail.
# The readers take files: the harness writes them under DOCC_TMP, /dev/shm
# when there is one (a disk file costs a hundred times the executions).
set -u
n=$1 secs=$2 dir=build/fuzz
work=${FUZZ_WORK:-$dir/work}/$n
log=$dir/fuzz_$n.log
mkdir -p "$work" "$dir/crash/$n"
if [ -z "${DOCC_TMP:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	DOCC_TMP=/dev/shm
	export DOCC_TMP
fi
corpora=
for d in "test/fuzz/corpus/$n" "test/fuzz/regress/$n"; do
	[ -d "$d" ] && corpora="$corpora $d"
done
dict=
[ -f "test/fuzz/$n.dict" ] && dict="-dict=test/fuzz/$n.dict"
if [ "$secs" = 0 ]; then
	# shellcheck disable=SC2086
	set -- -runs=0 $corpora
else
	# shellcheck disable=SC2086
	# FUZZ_RUNS "NAME:N ...": at most N inputs for harness NAME
	runs=$(printf '%s\n' ${FUZZ_RUNS:-} | sed -n "s/^$n://p")
	set -- -max_total_time="$secs" -print_final_stats=1 $dict ${FUZZ_SEED:+-seed=$FUZZ_SEED} ${runs:+-runs=$runs} \
		-artifact_prefix="$dir/crash/$n/" "$work" $corpora
fi
# shellcheck disable=SC2086
if ! "$dir/fuzz_$n" "$@" ${FUZZ_FLAGS:-} >"$log" 2>&1; then
	echo "fuzz_$n: FAILED (log $log; inputs in $dir/crash/$n/)"
	tail -60 "$log"
	exit 1
fi
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
if [ "$secs" = 0 ]; then
	echo "fuzz_$n: corpora passed"
else
	# the time it ran: it stops early when FUZZ_RUNS caps it
	took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
	echo "fuzz_$n: ${took:-$secs} s, ${execs:-?} executions, coverage ${cov:-?} edges, 0 findings"
fi
