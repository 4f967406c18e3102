/* fuzz_safetensors.c - st_open and st_find on any file: every tensor it
 * accepts lies inside the file and has as many bytes as its shape needs. */
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_begin();
	Safetensors st;
	if (st_open(&st, fuzz_file(data, size, ".safetensors")) != 0) {
		if (!fuzz_errors()) fuzz_fail("st_open failed without a message");
		return 0;
	}
	if (fuzz_errors()) fuzz_fail("st_open succeeded after an error");
	for (int i = 0; i < st.nt; i++) {
		const StTensor *t = &st.t[i];
		if (st_find(&st, t->name) != t) fuzz_fail("st_find('%s') is not tensor %d", t->name, i);
		size_t el = fuzz_elsize(t->dtype);
		if (!el) fuzz_fail("tensor '%s' has dtype '%s'", t->name, t->dtype);
		if (t->rank < 0 || t->rank > 8) fuzz_fail("tensor '%s' has rank %d", t->name, t->rank);
		/* The extent (empty dims counted as 1) fits, as in fuzz_npy.c. */
		size_t n = el;
		int64_t span = (int64_t)el;
		for (int d = 0; d < t->rank; d++) {
			if (t->shape[d] < 0 || ck_mul(span, t->shape[d] ? t->shape[d] : 1, &span))
				fuzz_fail("tensor '%s': the shape's extent overflows", t->name);
			n *= (size_t)t->shape[d];
		}
		if (n != t->nbytes) fuzz_fail("tensor '%s': %zu bytes for a shape of %zu", t->name, t->nbytes, n);
		const char *p = t->data;
		if (p < st.mem || p > st.mem + st.len || t->nbytes > (size_t)(st.mem + st.len - p))
			fuzz_fail("tensor '%s' lies outside the file", t->name);
		if (t->nbytes) {
			volatile char c = p[0];
			c = p[t->nbytes - 1];
			(void)c;
		}
	}
	if (st_find(&st, "__metadata__")) fuzz_fail("__metadata__ read as a tensor");
	st_close(&st);
	return 0;
}
