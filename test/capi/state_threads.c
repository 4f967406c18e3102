/*
 * state_threads.c - two instances of a decoder library generate at once.
 *
 *     state_threads LIB.so N TOKEN...
 *
 * LIB is a doccc library of a static-cache decoder (inputs input_ids
 * [1, seq] and cache_position [seq], int64, seq a run-time dim; output the
 * logits [1, seq, vocab]). The prompt TOKEN... is prefilled, then N - 1
 * tokens are decoded greedily: once on one instance, then on two instances
 * in two threads at the same time. Prints the tokens of the single run and
 * exits 0 if all three runs gave the same; test/test_state.py builds it
 * with ThreadSanitizer, which fails it on any race between the instances.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doccc_model.h"

enum { MAXTOK = 256 };

static const doccc_model_desc *d;
static int64_t prompt[MAXTOK];
static int nprompt, ntok;

typedef struct {
	int64_t toks[MAXTOK];
	int rc;
} Gen;

static int step(void *m, const int64_t *ids, int64_t n, int64_t pos, float *logits)
{
	int64_t cp[MAXTOK], dims[1] = {n};
	for (int64_t i = 0; i < n; i++)
		cp[i] = pos + i;
	const void *in[2] = {ids, cp};
	void *out[1] = {logits};
	int rc = d->set_dims(m, dims);
	return rc ? rc : d->run(m, in, out);
}

static void *generate(void *arg)
{
	Gen *g = arg;
	void *m = NULL;
	int64_t vocab = d->outputs[0].shape[2];
	float *logits = malloc(sizeof(float) * (size_t)(MAXTOK * vocab));
	g->rc = logits ? d->create(&m, NULL) : DOCCC_ERR_NOMEM;
	int64_t pos = 0, ids[MAXTOK], n = nprompt;
	memcpy(ids, prompt, sizeof(int64_t) * (size_t)n);
	for (int t = 0; t < ntok && !g->rc; t++) {
		if ((g->rc = step(m, ids, n, pos, logits)) != 0)
			break;
		const float *row = logits + (n - 1) * vocab;
		int64_t best = 0;
		for (int64_t v = 1; v < vocab; v++)
			if (row[v] > row[best])
				best = v;
		g->toks[t] = best;
		pos += n;
		ids[0] = best, n = 1;
	}
	if (m)
		d->destroy(m);
	free(logits);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4 || (ntok = atoi(argv[2])) < 1 || ntok > MAXTOK || argc - 3 > MAXTOK) {
		fprintf(stderr, "usage: state_threads LIB.so N TOKEN...\n");
		return 2;
	}
	nprompt = argc - 3;
	for (int i = 0; i < nprompt; i++)
		prompt[i] = atoll(argv[3 + i]);
	void *h = dlopen(argv[1], RTLD_NOW);
	d = h ? dlsym(h, "doccc_model") : NULL;
	if (!d || d->abi_version < 5 || d->nstates < 1 || d->ninputs != 2 || d->noutputs != 1 || d->ndims != 1) {
		fprintf(stderr, "%s: not a decoder library with state (%s)\n", argv[1], h ? "descriptor" : dlerror());
		return 1;
	}
	Gen one = {{0}, 0}, two[2];
	memset(two, 0, sizeof two);
	generate(&one);
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, generate, &two[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	int bad = one.rc || two[0].rc || two[1].rc;
	for (int t = 0; t < ntok; t++) {
		printf("%lld%c", (long long)one.toks[t], t + 1 < ntok ? ' ' : '\n');
		bad |= two[0].toks[t] != one.toks[t] || two[1].toks[t] != one.toks[t];
	}
	if (bad)
		fprintf(stderr, "the runs differ or failed (status %d, %d, %d)\n", one.rc, two[0].rc, two[1].rc);
	dlclose(h);
	return bad;
}
