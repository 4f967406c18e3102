/* fuzz_json.c - json_parse and the exact integer readers on any text. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_begin();
	cJSON *j = json_parse((const char *)data, size, "fuzz.json");
	if (!j) {
		if (!fuzz_errors()) fuzz_fail("json_parse failed without a message");
		return 0;
	}
	int n = json_len(j);
	for (int i = 0; i < n && i < 64; i++) {
		cJSON *e = json_at(j, i);
		int64_t v;
		double f;
		(void)json_int(e, &v);
		(void)json_float(e, &f);
		(void)json_str(e);
	}
	json_free(j);
	return 0;
}
