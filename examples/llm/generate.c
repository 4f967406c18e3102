/*
 * generate.c - greedy generation from C with a doccc library of a decoder.
 *
 *     generate N TOKEN...
 *
 * The library is llm.h / libllm.so: a decoder-only LM exported with its
 * static KV cache (export.py), compiled by doccc with the name llm. Its
 * inputs are input_ids [1, seq] and cache_position [seq] (int64, seq a
 * run-time dim), its output the logits [1, seq, vocab]; the KV cache is the
 * instance's state, so each call passes only the new tokens. The prompt
 * TOKEN... is prefilled in one call, then N tokens are decoded one call
 * each, greedily. Prints the generated tokens on one line, then prefill and
 * decode speed on stderr. Nothing here depends on the model's sizes: the
 * header gives the vocabulary and the cache length, so a library compiled
 * from a real checkpoint works unchanged.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "llm.h"

#define VOCAB_DIM 2                    /* the logits' last dim: the vocabulary */
static const int64_t out_shape[] = LLM_OUTPUT0_SHAPE;
#define MAXPOS LLM_DIM0_MAX            /* the cache's length: no position past it */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* One call with n tokens from position pos; the argmax of the last row. */
static int step(llm_t *m, const int64_t *ids, int64_t n, int64_t pos, float *logits, int64_t *next)
{
	int64_t cp[MAXPOS], dims[LLM_NUM_DIMS] = {n};
	for (int64_t i = 0; i < n; i++)
		cp[i] = pos + i;
	int rc = llm_run_dims(m, dims, ids, cp, logits);
	if (rc)
		return rc;
	const int64_t vocab = out_shape[VOCAB_DIM];
	const float *row = logits + (n - 1) * vocab;
	*next = 0;
	for (int64_t v = 1; v < vocab; v++)
		if (row[v] > row[*next])
			*next = v;
	return 0;
}

int main(int argc, char **argv)
{
	int ntok = argc > 2 ? atoi(argv[1]) : 0, np = argc - 2;
	if (ntok < 1 || np + ntok > MAXPOS) {
		fprintf(stderr, "usage: generate N TOKEN... (prompt and N new tokens within the cache's %d positions)\n", MAXPOS);
		return 2;
	}
	int64_t *ids = malloc(sizeof(int64_t) * (size_t)np);
	float *logits = malloc(sizeof(float) * (size_t)(np * out_shape[VOCAB_DIM]));
	llm_t *m = NULL;
	int rc = ids && logits ? llm_create(&m) : DOCCC_ERR_NOMEM;
	if (rc) {
		fprintf(stderr, "generate: %s: %s\n", llm_strerror(rc), llm_last_error(NULL));
		return 1;
	}
	for (int i = 0; i < np; i++)
		ids[i] = atoll(argv[2 + i]);
	int64_t tok, pos = 0;
	double t0 = now();
	rc = step(m, ids, np, pos, logits, &tok);   /* prefill: the prompt in one call */
	double t1 = now();
	pos += np;
	printf("%lld", (long long)tok);
	for (int i = 1; i < ntok && !rc; i++) {     /* decode: one token per call */
		rc = step(m, &tok, 1, pos++, logits, &tok);
		if (!rc)
			printf(" %lld", (long long)tok);
	}
	double t2 = now();
	printf("\n");
	if (rc)
		fprintf(stderr, "generate: %s: %s\n", llm_strerror(rc), llm_last_error(m));
	else
		fprintf(stderr, "prefill: %d tokens, %.1f tokens/s; decode: %d tokens, %.1f tokens/s\n", np, np / (t1 - t0),
		        ntok - 1, ntok > 1 ? (ntok - 1) / (t2 - t1) : 0.0);
	llm_destroy(m);
	free(ids);
	free(logits);
	return rc ? 1 : 0;
}
