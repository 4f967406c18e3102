/* fuzz_yaml.c - the options file (opt_load_yaml), the pass options it
 * stores (passes_check_options) and single settings (opt_set) on any text.
 * The first line of the input, cut at 64 bytes, is also given to opt_set as
 * the value of every top-level option and of an unknown one. */
#include <string.h>

#include "fuzz.h"
#include "../../ir/ir.h"

static void check(int rc, int had, const char *what)
{
	if (rc != 0 && fuzz_errors() == had) fuzz_fail("%s failed without a message", what);
	if (rc == 0 && fuzz_errors() != had) fuzz_fail("%s succeeded after an error", what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_begin();
	Arena *a = arena_new();
	Options o;
	opt_init(&o, a);
	int rc = opt_load_yaml(&o, fuzz_file(data, size, ".yaml"));
	check(rc, 0, "opt_load_yaml");
	for (int i = 0; i < o.npassopts; i++)
		if (!o.passopts[i].key || !o.passopts[i].val || !o.passopts[i].loc || !*o.passopts[i].loc)
			fuzz_fail("pass option %d lacks a key, value or location", i);
	int had = fuzz_errors();
	check(passes_check_options(&o), had, "passes_check_options");
	char val[65];
	size_t n = 0;
	while (n < size && n < 64 && data[n] != '\n') n++;
	memcpy(val, data, n);
	val[n] = '\0';
	for (int i = 0; i <= opt_ntable; i++) {
		had = fuzz_errors();
		const char *key = i < opt_ntable ? opt_table[i].name : "no_such_option";
		check(opt_set(&o, key, val, "command line"), had, key);
	}
	if (!o.target || !o.category || !o.contraction_precision) fuzz_fail("an option became NULL");
	arena_free(a);
	return 0;
}
