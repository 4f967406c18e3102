# test/fuzz/fuzz.mk - fuzz harnesses, included by the Makefile.
#
#   make fuzz          every harness for FUZZ_SECONDS (default 60) each, from its
#                      seeds and regression inputs, under ASan + UBSan
#   make fuzz-short    the same for 30 s each (what CI runs)
#   make fuzz-corpus   the sanitized harnesses over their corpora, no fuzzing
#   make fuzz-replay   the normal build's replay programs over the corpora
#                      (part of `make test`)
#
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
# The corpora of harness $$n that exist (an empty one is no folder in git).
FUZZ_CORPORA  = $$(for d in test/fuzz/corpus/$$n test/fuzz/regress/$$n; do [ -d $$d ] && echo $$d; done)

# The sanitized libdoccc the harnesses link: a build of its own, as make asan's,
# made by a make whose BUILD is that folder (where the Makefile's own rule applies).
ifneq ($(BUILD),$(FUZZ_DIR)/lib)
$(FUZZ_DIR)/lib/libdoccc.a: $(CORE_SRC) $(HDRS) $(GPU_HDRS)
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

fuzz-corpus: $(FUZZ_BINS)
	@set -e; for n in $(FUZZ_NAMES); do \
		echo "== fuzz_$$n over its corpora"; \
		$(FUZZ_DIR)/fuzz_$$n -runs=0 $(FUZZ_FLAGS) $(FUZZ_CORPORA) \
			2>$(FUZZ_DIR)/fuzz_$$n.corpus.log || { tail -40 $(FUZZ_DIR)/fuzz_$$n.corpus.log; exit 1; }; done

fuzz: $(FUZZ_BINS)
	@set -e; for n in $(FUZZ_NAMES); do \
		mkdir -p $(FUZZ_DIR)/work/$$n $(FUZZ_DIR)/crash/$$n; \
		dict=; [ -f test/fuzz/$$n.dict ] && dict=-dict=test/fuzz/$$n.dict; \
		echo "== fuzz_$$n for $(FUZZ_SECONDS) s"; \
		$(FUZZ_DIR)/fuzz_$$n -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $$dict \
			-artifact_prefix=$(FUZZ_DIR)/crash/$$n/ $(FUZZ_FLAGS) \
			$(FUZZ_DIR)/work/$$n $(FUZZ_CORPORA) \
			>$(FUZZ_DIR)/fuzz_$$n.log 2>&1 || { tail -60 $(FUZZ_DIR)/fuzz_$$n.log; exit 1; }; \
		grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' $(FUZZ_DIR)/fuzz_$$n.log | tail -2; done

fuzz-short:
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=30

.PHONY: fuzz fuzz-short fuzz-corpus fuzz-replay
