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
