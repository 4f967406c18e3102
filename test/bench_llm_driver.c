/*
 * bench_llm_driver: prefill and decode through a doccc library of a decoder-only LM,
 * for test/bench_llm.py (the doccc rows of `make bench-llm`).
 *
 *   cc -O2 test/bench_llm_driver.c -Ibackends -ldl -o bench_llm_driver
 *   bench_llm_driver LIB.so [--weights FILE] [--prompt 128 | --ids ID,ID,...] [--gen 128]
 *                    [--threads N] [--repeat 3] [--warmup 1] [--seed 0]
 *
 * THE DOCCC HOOK. The library is what `doccc model.pt2` makes of transformers'
 * static-cache export (TorchExportableModuleForDecoderOnlyLM(model, batch_size=1,
 * max_cache_len=PROMPT+GEN).export(input_ids=..., cache_position=...), the seq
 * dim dynamic). The driver loads it by the generic descriptor (dlsym
 * "doccc_model", backends/doccc_model.h), so it needs no NAME.h, and expects:
 *
 *   inputs   input_ids       int64 [1, s]   (by name, else the first int64 input of rank 2)
 *            cache_position  int64 [s]      (by name, else the first int64 input of rank 1)
 *            any other input: state passed in (the KV cache made functional);
 *                            it starts zeroed
 *   outputs  0: logits       float32, bfloat16 or float16 [1, s, vocab] (or [1, vocab])
 *            1..k: when the library has state inputs, the outputs after the
 *                  logits whose sizes match them, in order, are their new
 *                  values: the driver swaps the two buffers after each run
 *   state    otherwise the KV cache lives in the instance (the export's
 *            buffers key_cache_i, value_cache_i, cumulative_length_i, written
 *            in place; doccc's ABI 5 state): create() sets it, each run writes
 *            the positions cache_position names, and each repetition starts
 *            with reset() (ABI 5) at position 0
 *   dims     a library with run-time dims (abi 4: the seq symbol, range
 *            [1, >= PROMPT]) runs the prompt in one call (set_dims at s =
 *            PROMPT) and then decodes at s = 1; a library fixed at s = 1 runs
 *            the prompt one token at a time (and says so); any other fixed s is
 *            an error.
 *
 * Each repetition: the prompt (--ids, else PROMPT pseudo-random ids: srand(--seed), rand() % vocab) at
 * positions 0..PROMPT-1, then GEN decode steps, each feeding the argmax of
 * the previous logits' last row at the next position (a --warmup repetition
 * stops after 8 decode steps). It prints
 *
 *   doccc-llm: NAME target openmp, 1 dims, vocab 151936, logits float32, state in the instance (72 states, reset before each repetition)
 *   rep 0 prefill_ms 812.345 decode_ms 30123.456
 *   ...
 *   median prefill_ms 812.345 decode_ms 30123.456 prefill_tok_s 157.6 decode_tok_s 4.25
 *   tokens 17 4242 ...       (the first 16 generated ids of the last rep, for a check)
 *
 * Exit status 1 with a message on any error (load, create, dims, run).
 */

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doccc_model.h"

static const doccc_model_desc *D;
static void *M;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void die(const char *what, int status)
{
	const char *msg = D && D->abi_version >= 2 && D->last_error ? D->last_error(M) : NULL;

	fprintf(stderr, "bench_llm_driver: %s: %s%s%s\n", what, D && D->strerror ? D->strerror(status) : "error",
	        msg && *msg ? ": " : "", msg ? msg : "");
	exit(1);
}

static int cmpd(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof *v, cmpd);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static float to_f32(const void *p, int dtype, int64_t i)
{
	if (dtype == DOCCC_F32)
		return ((const float *)p)[i];
	if (dtype == DOCCC_BF16) {
		uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
		float f;
		memcpy(&f, &u, 4);
		return f;
	}
	return (float)((const _Float16 *)p)[i];
}

static size_t dtype_size(int dtype)
{
	switch (dtype) {
	case DOCCC_F64: case DOCCC_I64: return 8;
	case DOCCC_F32: case DOCCC_I32: return 4;
	case DOCCC_F16: case DOCCC_BF16: case DOCCC_I16: return 2;
	default: return 1;
	}
}

int main(int argc, char **argv)
{
	const char *lib = NULL, *weights = NULL, *idlist = NULL;
	int prompt = 128, gen = 128, threads = 1, repeat = 3, warmup = 1, i, s;
	unsigned seed = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (a[0] != '-' && !lib) { lib = a; continue; }
		if (!v) goto usage;
		if (!strcmp(a, "--weights")) weights = v;
		else if (!strcmp(a, "--prompt")) prompt = atoi(v);
		else if (!strcmp(a, "--gen")) gen = atoi(v);
		else if (!strcmp(a, "--threads")) threads = atoi(v);
		else if (!strcmp(a, "--repeat")) repeat = atoi(v);
		else if (!strcmp(a, "--warmup")) warmup = atoi(v);
		else if (!strcmp(a, "--seed")) seed = (unsigned)atoi(v);
		else if (!strcmp(a, "--ids")) idlist = v;
		else goto usage;
		i++;
	}
	if (idlist) {	/* the prompt given: its length is --prompt */
		prompt = 1;
		for (const char *p = idlist; *p; p++)
			prompt += *p == ',';
	}
	if (!lib || prompt < 1 || gen < 0 || threads < 1 || repeat < 1 || warmup < 0)
		goto usage;

	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) { fprintf(stderr, "bench_llm_driver: %s\n", dlerror()); return 1; }
	D = dlsym(h, "doccc_model");
	if (!D) { fprintf(stderr, "bench_llm_driver: %s has no doccc_model descriptor\n", lib); return 1; }

	/* weights: --weights, else embedded, else NAME.weights beside the library */
	char wbuf[4096];
	if (!weights && !D->weights_embedded) {
		const char *slash = strrchr(lib, '/');
		snprintf(wbuf, sizeof wbuf, "%.*s%s.weights", slash ? (int)(slash - lib + 1) : 0, lib, D->name);
		weights = wbuf;
	}
	if ((s = D->create(&M, D->weights_embedded ? NULL : weights)) != DOCCC_OK)
		die("create", s);
	if (D->set_num_threads && (s = D->set_num_threads(M, threads)) != DOCCC_OK)
		die("set_num_threads", s);

	/* the inputs */
	int ids = -1, pos = -1, nstate = 0;
	for (i = 0; i < D->ninputs; i++) {
		const doccc_tensor_desc *t = &D->inputs[i];
		if (t->name && !strcmp(t->name, "input_ids")) ids = i;
		else if (t->name && !strcmp(t->name, "cache_position")) pos = i;
	}
	for (i = 0; i < D->ninputs; i++) {
		const doccc_tensor_desc *t = &D->inputs[i];
		if (ids < 0 && i != pos && t->dtype == DOCCC_I64 && t->rank == 2) ids = i;
		else if (pos < 0 && i != ids && t->dtype == DOCCC_I64 && t->rank == 1) pos = i;
	}
	if (ids < 0 || pos < 0) {
		fprintf(stderr, "bench_llm_driver: %s has no input_ids [1, s] and cache_position [s] (int64)\n", lib);
		return 1;
	}
	int ndims = D->abi_version >= 4 ? D->ndims : 0;
	int64_t fixed_s = D->inputs[ids].shape[1];
	if (!ndims && fixed_s != 1) {
		fprintf(stderr, "bench_llm_driver: %s is fixed at %lld tokens a call: compile the export with its "
		        "seq dim dynamic, or at 1 token\n", lib, (long long)fixed_s);
		return 1;
	}
	if (ndims && D->dims[0].max >= 0 && D->dims[0].max < prompt)
		fprintf(stderr, "bench_llm_driver: note: dim %s is at most %lld, below the prompt\n", D->dims[0].name,
		        (long long)D->dims[0].max);

	/* state inputs (functional KV cache), two buffers each; outputs 1.. that match them */
	const void **in = calloc(D->ninputs, sizeof *in);
	void **out = calloc(D->noutputs, sizeof *out);
	void **state[2];
	int *state_in = calloc(D->ninputs, sizeof *state_in), *state_out = calloc(D->ninputs, sizeof *state_out);
	state[0] = calloc(D->ninputs, sizeof(void *));
	state[1] = calloc(D->ninputs, sizeof(void *));
	for (i = 0; i < D->ninputs; i++) {
		if (i == ids || i == pos)
			continue;
		if (D->inputs[i].numel < 0) {
			fprintf(stderr, "bench_llm_driver: state input %d (%s) has a run-time size\n", i, D->inputs[i].name);
			return 1;
		}
		state_in[nstate] = i;
		state_out[nstate] = -1;
		state[0][nstate] = calloc(1, D->inputs[i].nbytes + 1);
		state[1][nstate] = calloc(1, D->inputs[i].nbytes + 1);
		in[i] = state[0][nstate];
		nstate++;
	}
	for (int k = 0, o = 1; k < nstate && o < D->noutputs; o++)
		if (D->outputs[o].nbytes == D->inputs[state_in[k]].nbytes)
			state_out[k++] = o;

	/* the logits and their size at the prompt's length (the largest) */
	int ldt = D->outputs[0].dtype;
	if (ldt != DOCCC_F32 && ldt != DOCCC_BF16 && ldt != DOCCC_F16) {
		fprintf(stderr, "bench_llm_driver: output 0 (%s) is not float32, bfloat16 or float16\n", D->outputs[0].name);
		return 1;
	}
	int64_t vocab = D->outputs[0].shape[D->outputs[0].rank - 1];
	int64_t *dims = calloc(ndims + 1, sizeof *dims);
	if (vocab < 0) {
		fprintf(stderr, "bench_llm_driver: the vocabulary (last dim of output 0) is a run-time size\n");
		return 1;
	}
	int64_t ids_shape[2] = {1, ndims ? prompt : 1}, pos_shape[1] = {ids_shape[1]};
	int64_t rows = 1;	/* logits rows after the prompt: 1 when only the last is returned */
	for (int o = 0; o < D->noutputs; o++) {
		size_t n = D->outputs[o].nbytes;
		if (ndims) {
			const int64_t **shapes = calloc(D->ninputs, sizeof *shapes);
			int64_t sh[8];
			char msg[512];
			for (i = 0; i < D->ninputs; i++)
				shapes[i] = i == ids ? ids_shape : i == pos ? pos_shape : D->inputs[i].shape;
			if ((s = D->infer_dims(shapes, dims, msg, sizeof msg)) != DOCCC_OK) {
				fprintf(stderr, "bench_llm_driver: dims for %d tokens: %s\n", prompt, msg);
				return 1;
			}
			D->output_shape(dims, o, sh);
			n = dtype_size(D->outputs[o].dtype);
			for (int d = 0; d < D->outputs[o].rank; d++)
				n *= sh[d];
			free(shapes);
		}
		if (o == 0)
			rows = (int64_t)(n / dtype_size(ldt) / vocab);
		out[o] = calloc(1, n + 1);
	}
	int64_t *tok = calloc(prompt + gen + 1, sizeof *tok), *cpos = calloc(prompt + gen + 1, sizeof *cpos);

	int nst = D->abi_version >= 5 ? D->nstates : -1;
	printf("doccc-llm: %s target %s, %d dims, vocab %lld, logits %s, %s", D->name, D->target, ndims,
	       (long long)vocab, ldt == DOCCC_F32 ? "float32" : ldt == DOCCC_BF16 ? "bfloat16" : "float16",
	       nstate ? "state as inputs and outputs" : "state in the instance");
	if (!nstate && nst >= 0)
		printf(" (%d states, reset before each repetition)", nst);
	printf("%s\n", ndims ? "" : ", prompt one token a call");

	double *pre = calloc(repeat, sizeof *pre), *dec = calloc(repeat, sizeof *dec);
	int cur = 0;
	for (int r = -warmup; r < repeat; r++) {
		srand(seed);
		for (i = 0; i < prompt; i++)
			tok[i] = rand() % vocab;
		if (idlist) {
			const char *p = idlist;
			for (i = 0; i < prompt; i++) {
				tok[i] = strtoll(p, (char **)&p, 10);
				if (tok[i] < 0 || tok[i] >= vocab) {
					fprintf(stderr, "bench_llm_driver: --ids: id %d is outside the vocabulary\n", i);
					return 1;
				}
				p += *p == ',';
			}
		}
		for (i = 0; i < prompt + gen; i++)
			cpos[i] = i;
		for (int k = 0; k < nstate; k++)	/* a fresh cache */
			memset(state[cur][k], 0, D->inputs[state_in[k]].nbytes);
		if (D->abi_version >= 5 && D->nstates > 0 && D->reset && (s = D->reset(M)) != DOCCC_OK)
			die("reset", s);

		/* one run at positions [p, p + n): returns the argmax of its last logits row */
#define RUN(p, n, what) do { \
			in[ids] = tok + (p); in[pos] = cpos + (p); \
			for (int k = 0; k < nstate; k++) { \
				in[state_in[k]] = state[cur][k]; \
				if (state_out[k] >= 0) out[state_out[k]] = state[!cur][k]; } \
			if (ndims) { dims[0] = (n); \
				if ((s = D->set_dims(M, dims)) != DOCCC_OK) die("set_dims", s); } \
			if ((s = D->run(M, in, out)) != DOCCC_OK) die(what, s); \
			if (nstate && state_out[0] >= 0) cur = !cur; \
		} while (0)

		double t0 = now_ms();
		if (ndims)
			RUN(0, prompt, "prefill");
		else
			for (i = 0; i < prompt; i++)
				RUN(i, 1, "prefill");
		int64_t last = ndims ? rows - 1 : 0, best = 0;
		double t1 = now_ms();
		/* a warm-up repetition: the prompt and at most 8 decode steps */
		int steps = r < 0 && gen > 8 ? 8 : gen;
		for (int g = 0; g < steps; g++) {
			float bv = to_f32(out[0], ldt, last * vocab);
			best = 0;
			for (int64_t v = 1; v < vocab; v++) {
				float x = to_f32(out[0], ldt, last * vocab + v);
				if (x > bv) { bv = x; best = v; }
			}
			tok[prompt + g] = best;
			/* a one-token library keeps its dims: set them only when they change */
			if (ndims && g == 0) {
				dims[0] = 1;
				if ((s = D->set_dims(M, dims)) != DOCCC_OK) die("set_dims", s);
			}
			in[ids] = tok + prompt + g; in[pos] = cpos + prompt + g;
			for (int k = 0; k < nstate; k++) {
				in[state_in[k]] = state[cur][k];
				if (state_out[k] >= 0) out[state_out[k]] = state[!cur][k];
			}
			if ((s = D->run(M, in, out)) != DOCCC_OK) die("decode", s);
			if (nstate && state_out[0] >= 0) cur = !cur;
			last = 0;
		}
		double t2 = now_ms();
		if (r >= 0) {
			pre[r] = t1 - t0;
			dec[r] = t2 - t1;
			printf("rep %d prefill_ms %.3f decode_ms %.3f\n", r, pre[r], dec[r]);
			fflush(stdout);
		}
	}
	double mp = median(pre, repeat), md = median(dec, repeat);
	printf("median prefill_ms %.3f decode_ms %.3f prefill_tok_s %.2f decode_tok_s %.2f\n", mp, md,
	       prompt / (mp * 1e-3), gen ? gen / (md * 1e-3) : 0.0);
	printf("tokens");
	for (i = 0; i < gen && i < 16; i++)
		printf(" %lld", (long long)tok[prompt + i]);
	printf("\n");
	D->destroy(M);
	return 0;
usage:
	fprintf(stderr, "usage: bench_llm_driver LIB.so [--weights FILE] [--prompt N | --ids ID,ID,...] [--gen N] "
	        "[--threads N] [--repeat N] [--warmup N] [--seed N]\n");
	return 2;
}
