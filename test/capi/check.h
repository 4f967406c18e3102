/* check.h - CHECK(x) for the C API test programs: a failed check prints
 * the place and the expression and exits 1 (C and C++). */
#ifndef DOCCC_CAPI_CHECK_H
#define DOCCC_CAPI_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                               \
	do {                                                                       \
		if (!(x)) {                                                            \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #x); \
			exit(1);                                                           \
		}                                                                      \
	} while (0)

#endif
