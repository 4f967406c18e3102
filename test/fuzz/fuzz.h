/*
 * fuzz.h - what every fuzz harness shares.
 *
 * A harness is test/fuzz/fuzz_NAME.c: it defines LLVMFuzzerTestOneInput and
 * nothing else with external linkage. test/fuzz/fuzz.mk builds it twice:
 *
 *   build/fuzz/fuzz_NAME      libFuzzer + AddressSanitizer + UBSan (fatal),
 *                             over a sanitized libdoccc (`make fuzz`)
 *   $(BUILD)/test/replay_NAME the normal build with replay.c's main, which
 *                             feeds it every file of the corpora (`make test`)
 *
 * Corpora: test/fuzz/corpus/NAME/ holds seeds made from real exports
 * (test/fuzz/make_seeds.py; make_graph_seeds.py for import and pipeline,
 * make_sdfg_seeds.py for sdfg), test/fuzz/regress/NAME/ every input that ever
 * failed, minimized. test/fuzz/NAME.dict, when present, is the dictionary.
 *
 * The property every harness checks is the one users rely on: whatever the
 * input, the reader returns a result or reports an error; it never crashes,
 * never runs undefined behaviour, never asks for an absurd allocation, and
 * never reports success after an error. A harness aborts (fuzz_fail) when
 * that last rule or a property of its own is broken.
 */
#ifndef DOCCC_FUZZ_H
#define DOCCC_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../lib/lib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The readers take paths: write the input to one per-process file (under
 * DOCC_TMP, TMPDIR or /tmp) whose name ends in suffix, and return its path.
 * The file is rewritten by each call with the same suffix. */
const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix);

/* Diagnostics go to a buffer, not stderr (a fuzzer prints millions).
 * fuzz_begin clears the buffer and the error count; fuzz_errors returns the
 * errors reported since. */
void fuzz_begin(void);
int fuzz_errors(void);

/* Bytes per element of a dtype named as safetensors ("F32") or numpy
 * ("<f4") names it, for the dtypes doccc reads; 0 for any other name. */
size_t fuzz_elsize(const char *dtype);

/* A broken property: prints what and aborts, so libFuzzer keeps the input. */
#define fuzz_fail(...) \
	(fprintf(stderr, "fuzz: property broken at %s:%d: ", __FILE__, __LINE__), \
	 fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), abort())

#endif
