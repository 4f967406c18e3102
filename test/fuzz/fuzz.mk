# test/fuzz/fuzz.mk - fuzz harnesses, included by the Makefile.
#
#   make fuzz          every harness for FUZZ_SECONDS (default 60) each, from its
#                      seeds and regression inputs, under ASan + UBSan
#   make fuzz-short    the same for 30 s each
#   make fuzz-ci       fuzz-corpus, then fuzz-short two at a time (make test in CI)
#   make fuzz-corpus   the sanitized harnesses over their corpora, no fuzzing
#   make fuzz-replay   the normal build's replay programs over the corpora
#                      (part of `make test`)
#
# FUZZ_JOBS=N runs N harnesses at a time; FUZZ_SEED=S fixes libFuzzer's seed;
# FUZZ_RUNS="NAME:N ..." caps a harness at N inputs.
# test/fuzz/run.sh runs one.
# New inputs go to build/fuzz/work/NAME/, failures to build/fuzz/crash/NAME/;
# minimize a failure (build/fuzz/fuzz_NAME -minimize_crash=1 FILE) and add it
# to test/fuzz/regress/NAME/.

FUZZ_SECONDS ?= 60
FUZZ_FLAGS   ?=
FUZZ_NAMES    = $(sort $(patsubst test/fuzz/fuzz_%.c,%,$(wildcard test/fuzz/fuzz_*.c)))
FUZZ_DIR      = build/fuzz
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_BINS     = $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)
REPLAY_BINS   = $(FUZZ_NAMES:%=$(BUILD)/test/replay_%)
# ir.h's size limits, lowered (32 MiB a tensor, 128 MiB of weights) to fit libFuzzer's memory limit
FUZZ_LIMITS   = -DDOCC_MAX_TENSOR_BYTES='((int64_t)1<<25)' -DDOCC_MAX_WEIGHT_BYTES='((int64_t)1<<27)'
FUZZ_COMMON   = test/fuzz/fuzz.c $(wildcard test/fuzz/*.h)

# The sanitized libdoccc the harnesses link: a build of its own, as make asan's,
# made by a make whose BUILD is that folder (where the Makefile's own rule applies).
ifneq ($(BUILD),$(FUZZ_DIR)/lib)
$(FUZZ_DIR)/lib/libdoccc.a: $(CORE_SRC) $(HDRS) $(RT_SRC)
	$(MAKE) --no-print-directory BUILD=$(FUZZ_DIR)/lib CC=clang \
		SANFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN) $(FUZZ_LIMITS)" $@
endif

$(FUZZ_DIR)/fuzz_%: test/fuzz/fuzz_%.c $(FUZZ_COMMON) $(FUZZ_DIR)/lib/libdoccc.a
	@mkdir -p $(dir $@)
	clang $(CFLAGS) $(XCFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< test/fuzz/fuzz.c \
		$(FUZZ_DIR)/lib/libdoccc.a $(LDLIBS)

$(BUILD)/test/replay_%: test/fuzz/fuzz_%.c $(FUZZ_COMMON) test/fuzz/replay.c $(BUILD)/libdoccc.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< test/fuzz/fuzz.c test/fuzz/replay.c $(BUILD)/libdoccc.a $(LDLIBS)

fuzz-replay: $(REPLAY_BINS)
	@set -e; for n in $(FUZZ_NAMES); do \
		$(BUILD)/test/replay_$$n test/fuzz/corpus/$$n test/fuzz/regress/$$n 2>/dev/null; done

# FUZZ_JOBS harnesses at a time (each one process).
FUZZ_JOBS ?= 1
FUZZ_RUN   = printf '%s\n' $(FUZZ_NAMES) | xargs -P $(FUZZ_JOBS) -I@ sh test/fuzz/run.sh @

fuzz-corpus: $(FUZZ_BINS)
	@$(FUZZ_RUN) 0

fuzz: $(FUZZ_BINS)
	@$(FUZZ_RUN) $(FUZZ_SECONDS)

fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=30

# What CI runs after the suite: the corpora, then each harness two at a
# time for a fixed number of inputs (about 30 s each on these machines; 30 s
# caps it) from a fixed seed and the committed corpora alone (a fresh work
# folder). That fixes most of what libFuzzer tries, not all: the values it
# learns from comparisons include addresses, which differ from run to run, so
# CI's inputs drift from a local `make fuzz-ci`'s after a while. A finding in
# CI is a finding like any other: its input is in CI's log, and goes to
# test/fuzz/regress/NAME/ once fixed. New findings come from `make fuzz`,
# which draws a new seed each time and keeps what it found in build/fuzz/work.
FUZZ_CI_SEED ?= 1
FUZZ_CI_RUNS ?= expr:40000 import:8000 inspect:150000 json:250000 names:40000 npy:400000 pipeline:8000 \
                pt2:70000 safetensors:250000 sdfg:80000 tunedb:20000 yaml:50000
fuzz-ci:
	@rm -rf $(FUZZ_DIR)/ci-work
	@$(MAKE) --no-print-directory fuzz-corpus fuzz-short FUZZ_JOBS=2 FUZZ_SEED=$(FUZZ_CI_SEED) \
		FUZZ_RUNS="$(FUZZ_CI_RUNS)" FUZZ_WORK=$(FUZZ_DIR)/ci-work

.PHONY: fuzz fuzz-short fuzz-corpus fuzz-replay fuzz-ci
