/* fuzz.c - the helpers of fuzz.h, linked into every harness. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
	static char path[4096];
	const char *dir = getenv("DOCC_TMP");
	if (!dir || !*dir) dir = getenv("TMPDIR");
	if (!dir || !*dir) dir = "/tmp";
	snprintf(path, sizeof path, "%s/doccc-fuzz-%ld%s", dir, (long)getpid(), suffix);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) { perror(path); abort(); }
	while (size) {
		ssize_t w = write(fd, data, size);
		if (w <= 0) { perror(path); abort(); }
		data += w;
		size -= (size_t)w;
	}
	close(fd);
	return path;
}

static Buf sink;

void fuzz_begin(void)
{
	sink.len = 0;
	if (sink.s) sink.s[0] = '\0';
	diag_capture(&sink);
	diag_reset();
}

int fuzz_errors(void)
{
	return diag_errors();
}

size_t fuzz_elsize(const char *dtype)
{
	static const struct { const char *st, *npy; size_t size; } t[] = {
		{"F64", "<f8", 8}, {"F32", "<f4", 4}, {"F16", "<f2", 2}, {"BF16", "<u2", 2}, {"I64", "<i8", 8},
		{"I32", "<i4", 4}, {"I16", "<i2", 2}, {"I8", "|i1", 1},  {"U8", "|u1", 1},   {"BOOL", "|b1", 1},
	};
	for (size_t i = 0; i < COUNTOF(t); i++)
		if (!strcmp(t[i].st, dtype) || !strcmp(t[i].npy, dtype)) return t[i].size;
	return 0;
}
