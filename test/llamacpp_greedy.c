/*
 * llamacpp_greedy: greedy decoding with llama.cpp from given token ids, for
 * test/bench_llm.py --quick's check that its GGUFs hold the model torch runs.
 *
 *   built by test/llamacpp.sh against llama.cpp's static libraries
 *   llamacpp_greedy MODEL.gguf GEN ID,ID,...
 *
 * Decodes the prompt in one batch, then GEN steps, each feeding the argmax of
 * the last logits; fp32 KV cache, no flash attention (its CPU kernel rounds to
 * fp16), 1 thread. Prints
 *
 *   logits L0 L1 ...      (the prompt's last position, the whole vocabulary)
 *   tokens T0 T1 ...      (the GEN greedy tokens)
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

static void quiet(enum ggml_log_level level, const char *text, void *user)
{
	(void)user;
	if (level >= GGML_LOG_LEVEL_ERROR)
		fputs(text, stderr);
}

static int argmax(const float *x, int n)
{
	int best = 0;

	for (int i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: llamacpp_greedy MODEL.gguf GEN ID,ID,...\n");
		return 2;
	}
	int gen = atoi(argv[2]), n = 0;
	llama_token *ids = calloc(strlen(argv[3]) + 1, sizeof *ids);
	for (char *p = strtok(argv[3], ","); p; p = strtok(NULL, ","))
		ids[n++] = atoi(p);

	llama_log_set(quiet, NULL);
	llama_backend_init();
	struct llama_model_params mp = llama_model_default_params();
	struct llama_model *model = llama_model_load_from_file(argv[1], mp);
	if (!model) {
		fprintf(stderr, "llamacpp_greedy: cannot load %s\n", argv[1]);
		return 1;
	}
	struct llama_context_params cp = llama_context_default_params();
	cp.n_ctx = n + gen + 16;
	cp.n_batch = cp.n_ubatch = n > 0 ? n : 1;
	cp.n_threads = cp.n_threads_batch = 1;
	cp.type_k = cp.type_v = GGML_TYPE_F32;
	cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
	struct llama_context *ctx = llama_init_from_model(model, cp);
	if (!ctx) {
		fprintf(stderr, "llamacpp_greedy: cannot make a context\n");
		return 1;
	}
	int nv = llama_vocab_n_tokens(llama_model_get_vocab(model));
	if (llama_decode(ctx, llama_batch_get_one(ids, n))) {
		fprintf(stderr, "llamacpp_greedy: prompt decode failed\n");
		return 1;
	}
	const float *lg = llama_get_logits_ith(ctx, -1);
	printf("logits");
	for (int i = 0; i < nv; i++)
		printf(" %.7g", lg[i]);
	printf("\ntokens");
	for (int g = 0; g < gen; g++) {
		llama_token t = argmax(llama_get_logits_ith(ctx, -1), nv);
		printf(" %d", t);
		if (llama_decode(ctx, llama_batch_get_one(&t, 1))) {
			fprintf(stderr, "llamacpp_greedy: decode failed\n");
			return 1;
		}
	}
	printf("\n");
	llama_free(ctx);
	llama_model_free(model);
	llama_backend_free();
	free(ids);
	return 0;
}
