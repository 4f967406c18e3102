/*
 * failcreate.c - create() of a doccc library under allocation failure
 * (test/test_faults.py; run with LD_PRELOAD=failalloc.so).
 *
 *   failcreate LIB.so [WEIGHTS]
 *
 * After one create/destroy that warms up what stays for the process's
 * life (the OpenMP runtime's pool, the simulated device's table, the
 * library's thread-local storage), it creates the model with the k-th
 * allocation failing, for k = 1, 2, ... until a create sees no failure.
 * Each failed create must return DOCCC_ERR_NOMEM and leave as many live
 * allocations and mappings as before it; a create that absorbed the
 * failure and succeeded must run. Prints one line per k and a summary;
 * exit 0 if every k passed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../backends/doccc_model.h"

static void (*arm)(long);
static long (*fired)(void), (*live)(void), (*maps)(void);

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: failcreate LIB.so [WEIGHTS]\n");
		return 2;
	}
	const char *weights = argc > 2 ? argv[2] : NULL;
	arm = (void (*)(long))dlsym(RTLD_DEFAULT, "failalloc_arm");
	fired = (long (*)(void))dlsym(RTLD_DEFAULT, "failalloc_fired");
	live = (long (*)(void))dlsym(RTLD_DEFAULT, "failalloc_live");
	maps = (long (*)(void))dlsym(RTLD_DEFAULT, "failalloc_maps");
	if (!arm || !fired || !live || !maps) {
		fprintf(stderr, "failcreate: run me with LD_PRELOAD=failalloc.so\n");
		return 2;
	}
	void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	const doccc_model_desc *d = dl ? (const doccc_model_desc *)dlsym(dl, "doccc_model") : NULL;
	if (!d) {
		fprintf(stderr, "failcreate: %s: %s\n", argv[1], dlerror());
		return 2;
	}
	void *m = NULL;
	int rc = d->create(&m, weights);
	if (rc) {
		fprintf(stderr, "failcreate: the warm-up create failed: %s\n", d->strerror(rc));
		return 1;
	}
	d->destroy(m);
	int bad = 0, absorbed = 0;
	long k;
	for (k = 1; k < 100000; k++) {
		long live0 = live(), maps0 = maps();
		m = NULL;
		arm(k);
		rc = d->create(&m, weights);
		int hit = (int)fired();
		arm(0);
		const char *msg = d->abi_version >= 2 && d->last_error && !m ? d->last_error(NULL) : "";
		if (rc == DOCCC_OK) {
			if (!m) {
				printf("k=%ld: create returned DOCCC_OK and no model\n", k);
				bad++;
			} else if (hit)
				absorbed++;
			d->destroy(m);
		} else if (!hit) {
			printf("k=%ld: create failed (%s) with no allocation failing\n", k, d->strerror(rc));
			bad++;
		} else if (rc != DOCCC_ERR_NOMEM) {
			printf("k=%ld: create returned %d (%s; %s), expected DOCCC_ERR_NOMEM\n", k, rc, d->strerror(rc), msg);
			bad++;
		} else if (m) {
			printf("k=%ld: create failed but set *model\n", k);
			bad++;
		}
		if (live() != live0 || maps() != maps0) {
			printf("k=%ld: %s leaks %ld allocation(s) and %ld mapping(s)\n", k, rc ? "a failed create" : "create+destroy",
			       live() - live0, maps() - maps0);
			bad++;
		}
		if (!hit)
			break;
	}
	printf("failcreate: %ld allocation points in create, %d failure(s) absorbed, %d problem(s)\n", k - 1, absorbed, bad);
	return bad ? 1 : 0;
}
