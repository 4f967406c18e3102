/* fuzz_npy.c - npy_read (what `doccc run` reads its inputs with) on any
 * file: an array it accepts has a known dtype and exactly the bytes its
 * shape needs, and every dimension's extent fits in 64 bits. */
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_begin();
	Npy a;
	if (npy_read(fuzz_file(data, size, ".npy"), &a) != 0) {
		if (!fuzz_errors()) fuzz_fail("npy_read failed without a message");
		if (a.data || a.nbytes) fuzz_fail("npy_read failed but left data");
		return 0;
	}
	if (fuzz_errors()) fuzz_fail("npy_read succeeded after an error");
	size_t el = fuzz_elsize(a.descr);
	if (!el) fuzz_fail("descr '%s'", a.descr);
	if (a.rank < 0 || a.rank > 8) fuzz_fail("rank %d", a.rank);
	/* The extent of every dimension (ignoring empty ones) fits: strides
	 * computed from the shape cannot overflow. */
	int64_t span = (int64_t)el, n = (int64_t)el;
	for (int d = 0; d < a.rank; d++) {
		if (a.shape[d] < 0) fuzz_fail("dimension %d is %lld", d, (long long)a.shape[d]);
		if (ck_mul(span, a.shape[d] ? a.shape[d] : 1, &span))
			fuzz_fail("shape's extent overflows");
		n *= a.shape[d];
	}
	if ((size_t)n != a.nbytes) fuzz_fail("%zu bytes for a shape of %lld", a.nbytes, (long long)n);
	volatile unsigned sum = 0;
	for (size_t k = 0; k < a.nbytes; k++) sum += ((unsigned char *)a.data)[k];
	(void)sum;
	npy_free(&a);
	return 0;
}
