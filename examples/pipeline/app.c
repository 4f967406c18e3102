/*
 * app.c - the program the pipeline example ships: it links libtinynet through
 * the flags of tinynet.pc (pkg-config), runs the model on one row of ones
 * and prints the class with the highest probability.
 */
#include <stdio.h>

#include "tinynet.h"

int main(void)
{
	static float x[TINYNET_INPUT0_NUMEL], y[TINYNET_OUTPUT0_NUMEL];
	for (int i = 0; i < TINYNET_INPUT0_NUMEL; i++)
		x[i] = 1.0f;
	tinynet_t *m;
	int st = tinynet_create(&m);
	if (st == 0)
		st = tinynet_run(m, x, y);
	if (st != 0) {
		fprintf(stderr, "app: %s\n", tinynet_strerror(st));
		return 1;
	}
	tinynet_destroy(m);
	int best = 0;
	for (int i = 1; i < 10; i++)
		if (y[i] > y[best])
			best = i;
	printf("class %d (p = %.4f)\n", best, y[best]);
	return 0;
}
