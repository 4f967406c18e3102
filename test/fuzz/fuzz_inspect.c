/* fuzz_inspect.c - `doccc inspect` on any file, read as an ELF library or
 * object, an ar archive or a weights file. cmd/inspect.c is included here
 * (the harnesses link libdoccc, which has no cmd/), so cmd_inspect and
 * inspect_bytes are defined here too, with external linkage. Whatever the bytes:
 * it returns 0 with a report and no error, or 1 after an error; the text
 * report carries no control character but newlines, and the --json report
 * is one valid JSON object (as any JSON reader sees it). */
#include <string.h>

#include "fuzz.h"
#include "../../cmd/inspect.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int json = 0; json < 2; json++) {
		fuzz_begin();
		Arena *a = arena_new();
		Buf out = {0};
		int rc = inspect_bytes(a, "in.so", data, size, json, &out);
		if (rc != EXIT_OK && rc != EXIT_INPUT)
			fuzz_fail("exit code %d", rc);
		if (rc == EXIT_INPUT && !fuzz_errors())
			fuzz_fail("failed without a message");
		if (rc == EXIT_OK && (fuzz_errors() || !out.len))
			fuzz_fail("succeeded after an error or without a report");
		for (size_t k = 0; !json && k < out.len; k++)
			if ((unsigned char)out.s[k] < 32 && out.s[k] != '\n')
				fuzz_fail("control byte %d in the text report", out.s[k]);
		if (json && out.len) {
			/* cJSON itself, not json_parse, which refuses the valid
			 * escape \u0001 (its int64 tag) that a member name can need */
			cJSON *j = cJSON_ParseWithLength(out.s, out.len);
			if (!j || !json_get(j, "format"))
				fuzz_fail("the JSON report does not parse: %s", out.s);
			json_free(j);
		}
		buf_free(&out);
		arena_free(a);
	}
	return 0;
}
