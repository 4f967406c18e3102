/* fuzz_compare.c - doccc compare on any values.json: the index that doccc
 * run --dump-values writes, read back with the files it names. cmd/compare.c,
 * cmd/cmp.c and cmd/args.c are included here (the harnesses link libdoccc,
 * which has no cmd/). The input is GOT_DIR/values.json; GOT_DIR holds
 * relu.npy, linear.npy and softmax.npy, and REF_DIR the same names with
 * other values, shapes or kinds (relu.npy equal, linear.npy off by one
 * element, softmax.npy of another shape; ints.npy an integer array), so an
 * index can name files that compare, differ, are skipped or are missing.
 * Whatever the bytes: exit 0 or 1, never 1 from a bad index without a
 * message, never 0 after an error. Standard output goes to /dev/null. */
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "../../cmd/args.c"
#include "../../cmd/cmp.c"
#include "../../cmd/compare.c"

static char got[4096], ref[4096];

static void put(const char *dir, const char *name, const char *descr, int rank, const int64_t *shape, const void *data)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (npy_write(path, descr, rank, shape, data))
		abort();
}

static void setup(void)
{
	const char *d = fuzz_file((const uint8_t *)"", 0, ".keep");
	snprintf(got, sizeof got, "%.*s-got", (int)(strlen(d) - 5), d);
	snprintf(ref, sizeof ref, "%.*s-ref", (int)(strlen(d) - 5), d);
	mkdir(got, 0700);
	mkdir(ref, 0700);
	float a[6] = {0, 1, 2, 3, 4, 5}, b[6] = {0, 1, 2, 3, 4, 6};
	int64_t s6[1] = {6}, s23[2] = {2, 3}, i6[6] = {1, 2, 3, 4, 5, 6};
	put(got, "relu.npy", "<f4", 1, s6, a);
	put(ref, "relu.npy", "<f4", 1, s6, a);
	put(got, "linear.npy", "<f4", 1, s6, a);
	put(ref, "linear.npy", "<f4", 1, s6, b);
	put(got, "softmax.npy", "<f4", 1, s6, a);
	put(ref, "softmax.npy", "<f4", 2, s23, a);
	put(got, "ints.npy", "<i8", 1, s6, i6);
	put(ref, "ints.npy", "<f4", 1, s6, a);
	if (!freopen("/dev/null", "w", stdout))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!*got)
		setup();
	char path[4200];
	snprintf(path, sizeof path, "%s/values.json", got);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	for (int json = 0; json < 2; json++) {
		fuzz_begin();
		char *argv[] = {"compare", got, ref, json ? "--json" : NULL, NULL};
		int rc = cmd_compare(json ? 4 : 3, argv);
		if (rc != EXIT_OK && rc != EXIT_INPUT)
			fuzz_fail("exit code %d", rc);
		if (rc == EXIT_OK && fuzz_errors())
			fuzz_fail("exit 0 after an error");
	}
	return 0;
}
