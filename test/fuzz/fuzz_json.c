/* fuzz_json.c - json_parse (and json_parse_ex with JSON_REALS) and the
 * exact readers (json_int, json_float, json_is_real, json_str,
 * json_union_tag) on any text, over the whole tree it returns.
 * Properties beyond fuzz.h's: a document that parses holds no raw control
 * character (JSON forbids them; json.c's tag for big integers relies on
 * it), an integer read exactly agrees with its double, and json_str never
 * shows a tagged big integer as a string. */
#include <math.h>
#include <string.h>

#include <cJSON.h>

#include "fuzz.h"

static void walk(const cJSON *j, int depth)
{
	int64_t v;
	double f;
	int b;
	const char *s = json_str(j);
	if (s && s[0] == '\x01') fuzz_fail("json_str shows a tagged integer");
	if (json_int(j, &v) == 0) {
		if (json_float(j, &f) != 0) fuzz_fail("an integer that is no number");
		if (cJSON_IsNumber(j) && (double)v != f) fuzz_fail("json_int %lld, json_float %g", (long long)v, f);
	}
	if (json_is_real(j) && (json_float(j, &f) != 0 || json_int(j, &v) == 0))
		fuzz_fail("a real that json_float does not read, or json_int does");
	(void)json_bool(j, &b);
	(void)json_is_null(j);
	cJSON *val;
	const char *tag = json_union_tag(j, &val);
	if (tag && (!val || json_len(j) != 1)) fuzz_fail("a union tag without its one value");
	int n = json_len(j);
	for (int i = 0; i < n && i < 1000; i++) {
		const cJSON *e = json_at(j, i);
		if (!e) fuzz_fail("json_at(%d) of %d is NULL", i, n);
		if (cJSON_IsObject(j) && json_get(j, e->string) == NULL) fuzz_fail("json_get misses a key");
		if (depth < 200) walk(e, depth + 1);
	}
	if (json_at(j, n) || json_at(j, -1)) fuzz_fail("json_at past the end");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_begin();
	cJSON *j = json_parse((const char *)data, size, "fuzz.json");
	if (!j) {
		if (!fuzz_errors()) fuzz_fail("json_parse failed without a message");
		return 0;
	}
	if (fuzz_errors()) fuzz_fail("json_parse succeeded after an error");
	for (size_t i = 0; i < size; i++)
		if (data[i] < 0x20 && data[i] != '\t' && data[i] != '\n' && data[i] != '\r')
			fuzz_fail("a document with the control character 0x%02x at %zu parsed", data[i], i);
	walk(j, 0);
	json_free(j);
	/* JSON_REALS (the SDFG reader's): the same documents parse, and their
	 * reals read as they do without it */
	fuzz_begin();
	j = json_parse_ex((const char *)data, size, "fuzz.json", JSON_REALS);
	if (!j || fuzz_errors()) fuzz_fail("a document parses, but not with JSON_REALS");
	walk(j, 0);
	json_free(j);
	return 0;
}
