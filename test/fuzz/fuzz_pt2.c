/* fuzz_pt2.c - the .pt2 archive reader (lib/zipread.c) on any file: open it,
 * then read every entry under the root, as the importer does: whole
 * (pt2_read), and as weights are read, its size first (pt2_size) and then
 * its bytes into memory of that size (pt2_read_into) or a part of them (pt2_read_range), which must agree;
 * and pt2_has must agree with the listing (an archive may hold the name probed). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_begin();
	const char *path = fuzz_file(data, size, ".pt2");
	Pt2 *z = pt2_open(path);
	if (!z) {
		if (!fuzz_errors()) fuzz_fail("pt2_open failed without a message");
		return 0;
	}
	if (fuzz_errors()) fuzz_fail("pt2_open succeeded after an error");
	const char *root = pt2_root(z);
	size_t rl = strlen(root);
	int n = pt2_count(z);
	if (n <= 0) fuzz_fail("pt2_open succeeded on an archive of %d entries", n);
	for (int i = 0; i < n && i < 256; i++) {
		const char *name = pt2_name(z, i);
		if (!name || strncmp(name, root, rl)) continue;
		int had = fuzz_errors();
		size_t len = 0;
		char *d = pt2_read(z, name + rl, &len);
		if (!d) {
			if (fuzz_errors() == had) fuzz_fail("pt2_read of '%s' failed without a message", name);
			continue;
		}
		if (fuzz_errors() != had) fuzz_fail("pt2_read of '%s' succeeded after an error", name);
		if (d[len] != '\0') fuzz_fail("pt2_read of '%s': no NUL after %zu bytes", name, len);
		/* Every byte is readable (ASan checks the span). */
		volatile unsigned sum = 0;
		for (size_t k = 0; k < len; k++) sum += (unsigned char)d[k];
		(void)sum;
		size_t sz = 0;
		if (pt2_size(z, name + rl, &sz) || sz != len) fuzz_fail("pt2_size of '%s': %zu, pt2_read read %zu", name, sz, len);
		char *e = malloc(len ? len : 1);
		if (!e) fuzz_fail("out of memory");
		if (pt2_read_into(z, name + rl, e, len) || memcmp(d, e, len))
			fuzz_fail("pt2_read_into of '%s' disagrees with pt2_read", name);
		size_t off = len / 3, part = len / 2;
		if (pt2_read_range(z, name + rl, off, e, part) || memcmp(d + off, e, part))
			fuzz_fail("pt2_read_range of '%s' [%zu, +%zu) disagrees with pt2_read", name, off, part);
		if (fuzz_errors() != had) fuzz_fail("reading '%s' again reported an error", name);
		free(e);
		free(d);
	}
	/* pt2_has agrees with the listing: for the first entry under the root,
	 * and for a name that a mutated archive may hold too */
	static const char *const probes[] = {NULL, "no/such/entry"};
	for (int p = 0; p < 2; p++) {
		const char *probe = probes[p];
		int listed = 0;
		for (int i = 0; i < n; i++) {
			const char *name = pt2_name(z, i);
			if (!name || strncmp(name, root, rl))
				continue;
			if (!probe)
				probe = name + rl;
			listed |= !strcmp(name + rl, probe);
		}
		if (probe && pt2_has(z, probe) != listed)
			fuzz_fail("pt2_has('%s') is %d, the listing says %d", probe, !listed, listed);
	}
	pt2_close(z);
	return 0;
}
