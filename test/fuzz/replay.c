/*
 * replay.c - main of the replay build of a harness: runs it once on every
 * file named, or every file inside each folder named (not recursive), in
 * name order. Exits 0 when every input passed; a failing input aborts, as
 * under libFuzzer, and the last "replay: FILE" line names it.
 */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	size_t n;
	char *d = file_read(path, &n);
	if (!d) return -1;
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput((const uint8_t *)d, n);
	free(d);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, int *count)
{
	DIR *d = opendir(dir);
	if (!d) { perror(dir); return -1; }
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.') continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof *names);
			if (!names) abort();
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmp);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path) != 0) rc = -1;
			++*count;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int count = 0, rc = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) continue;   /* an empty corpus is no folder */
		if (S_ISDIR(st.st_mode)) {
			if (run_dir(argv[i], &count) != 0) rc = 1;
		} else {
			if (run_file(argv[i]) != 0) rc = 1;
			count++;
		}
	}
	printf("%s: %d inputs, %s\n", argv[0], count, rc ? "some unreadable" : "all passed");
	return rc;
}
