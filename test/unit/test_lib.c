/*
 * test_lib.c - unit tests of lib/: every module, through lib.h only.
 *
 * Each test_* function covers one file of lib/. Messages are checked
 * through diag_capture, files are written under a fresh temporary
 * directory that is removed at the end, and every expected value is
 * spelled out (known SHA-256 vectors, exact int64 limits, exact
 * "file:line:col" positions), so a wrong implementation fails.
 */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zip.h>

#include "../../lib/lib.h"
#include "check.h"

static char tdir[64];  /* this run's scratch directory */
/* A path inside the scratch directory (static buffer, one at a time). */
static const char *tpath(const char *name)
{
	static char p[256];
	snprintf(p, sizeof(p), "%s/%s", tdir, name);
	return p;
}

static int contains(const char *hay, const char *needle)
{
	return hay && strstr(hay, needle) != NULL;
}

/* ---- diag.c ---- */

static void test_diag(void)
{
	diag_reset();
	capture();
	diag_error(NULL, "x %d", 1);
	diag_warn("f.yaml:1:2", "w");
	diag_note("", "n");
	diag_error("m.pt2: graph.nodes[3]", "bad");
	CHECK_STR(captured(), "doccc: error: x 1\nf.yaml:1:2: warning: w\ndoccc: note: n\n"
	                      "m.pt2: graph.nodes[3]: error: bad\n");
	CHECK_INT(diag_errors(), 2);
	/* a name from the model cannot write to the terminal or forge a line */
	capture();
	diag_error("m.pt2: graph.nodes[0] (node 'a\nm.pt2: note: ok')", "op '%s'", "\x1b[31mred\x1b[0m");
	CHECK_STR(captured(), "m.pt2: graph.nodes[0] (node 'a\\nm.pt2: note: ok'): error: op '\\x1b[31mred\\x1b[0m'\n");
	diag_reset();
	diag_reset();
	CHECK_INT(diag_errors(), 0);

	/* DOCC_ASSERT prints file:line and the expression, then aborts. */
	int fds[2];
	CHECK(pipe(fds) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		int one = 1;
		DOCC_ASSERT(one == 2);
		_exit(0);
	}
	close(fds[1]);
	char msg[512];
	ssize_t n = 0, r;
	while ((r = read(fds[0], msg + n, sizeof(msg) - 1 - (size_t)n)) > 0)
		n += r;
	msg[n] = '\0';
	close(fds[0]);
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	CHECK(contains(msg, "doccc: internal error at "));
	CHECK(contains(msg, "test_lib.c:"));
	CHECK(contains(msg, "assertion failed: one == 2\n"));
}

/* ---- arena.c ---- */

static void test_arena(void)
{
	Arena *a = arena_new();
	int zero = 1, aligned = 1;
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)(i % 97) + 1;
		unsigned char *p = arena_alloc(a, n);
		for (size_t k = 0; k < n; k++)
			zero &= p[k] == 0;
		aligned &= (uintptr_t)p % 16 == 0;
		memset(p, 0xab, n); /* must not leak into later allocations */
	}
	CHECK(zero);
	CHECK(aligned);
	char *big = arena_alloc(a, 3u << 20); /* over a chunk: its own */
	CHECK(big != NULL && big[0] == 0 && big[(3u << 20) - 1] == 0);
	char *after = arena_alloc(a, 16);
	CHECK(after != NULL && after[0] == 0);
	void *p64 = arena_alloc_aligned(a, 10, 64);
	CHECK((uintptr_t)p64 % 64 == 0);
	void *p4k = arena_alloc_aligned(a, 1 << 20, 4096);
	CHECK((uintptr_t)p4k % 4096 == 0);

	CHECK_STR(arena_strdup(a, "hello"), "hello");
	CHECK_STR(arena_strndup(a, "hello", 3), "hel");
	CHECK_STR(arena_strndup(a, "hi", 10), "hi");
	CHECK_STR(arena_printf(a, "%s-%d", "x", 42), "x-42");

	int *v = NULL, n = 0, cap = 0;
	for (int i = 0; i < 1000; i++)
		VEC_PUSH(a, v, n, cap, i * 3);
	CHECK_INT(n, 1000);
	CHECK(cap >= 1000);
	int ok = 1;
	for (int i = 0; i < n; i++)
		ok &= v[i] == i * 3;
	CHECK(ok);
	arena_free(a);
}

/* ---- buf.c ---- */

static void test_buf(void)
{
	Buf b = {0};
	buf_puts(&b, "ab");
	buf_putc(&b, 'c');
	buf_putn(&b, "defg", 2);
	buf_printf(&b, "[%d,%s]", 7, "x");
	CHECK_STR(b.s, "abcde[7,x]");
	CHECK_INT(b.len, 10);
	for (int i = 0; i < 1000; i++)
		buf_putc(&b, 'z');
	CHECK_INT(b.len, 1010);
	CHECK_INT(strlen(b.s), 1010);
	buf_free(&b);
	CHECK(b.s == NULL && b.len == 0);

}

/* What buf_escape writes for s (n bytes) as kind how (static, one at a time). */
static const char *esc(Esc how, const char *s, size_t n)
{
	static Buf b;
	buf_free(&b);
	buf_escape(&b, how, s, n);
	return b.s ? b.s : "";
}
#define ESC(how, lit) esc(how, lit, sizeof(lit) - 1)

static void test_escape(void)
{
	/* C comment bodies: nothing closes, opens, splices or hides */
	CHECK_STR(ESC(ESC_COMMENT, "conv2d_1"), "conv2d_1");
	CHECK_STR(ESC(ESC_COMMENT, "a */ b"), "a *\\x2f b");
	CHECK_STR(ESC(ESC_COMMENT, "a /* b"), "a \\x2f* b");
	CHECK_STR(ESC(ESC_COMMENT, "/x*"), "\\x2fx*");        /* a leading '/' after the opener's '*' */
	CHECK_STR(ESC(ESC_COMMENT, "x/"), "x\\x2f");          /* a trailing '/' before the closer */
	CHECK_STR(ESC(ESC_COMMENT, "/tmp/m.pt2 -o lib.so"), "\\x2ftmp/m.pt2 -o lib.so");
	CHECK_STR(ESC(ESC_COMMENT, "a\\\nb"), "a\\x5c\\nb");
	CHECK_STR(ESC(ESC_COMMENT, "a?\?/b ?\?= ???"), "a?\\x3f/b ?\\x3f= ?\\x3f?");
	CHECK_STR(ESC(ESC_COMMENT, "t\tr\r\x1b[2J\x7f"), "t\\tr\\r\\x1b[2J\\x7f");
	CHECK_STR(ESC(ESC_COMMENT, "n\0ul"), "n\\x00ul");
	CHECK_STR(ESC(ESC_COMMENT, "caf\xc3\xa9 \xff\xc3"), "caf\xc3\xa9 \\xff\\xc3"); /* UTF-8 kept, bad bytes shown */
	CHECK_STR(ESC(ESC_COMMENT, "\xe2\x80\xae" "rtl \xc2\x9b"), "\\xe2\\x80\\xaertl \\xc2\\x9b"); /* bidi, C1 */
	CHECK_STR(ESC(ESC_COMMENT, "\xed\xa0\x80\xc0\xaf"), "\\xed\\xa0\\x80\\xc0\\xaf"); /* surrogate, overlong */

	/* C string literals: exact, plain ASCII, no trigraph */
	CHECK_STR(ESC(ESC_CSTR, "x"), "\"x\"");
	CHECK_STR(ESC(ESC_CSTR, ""), "\"\"");
	CHECK_STR(ESC(ESC_CSTR, "a\"b\\c\nd\te\rf\x01g\x7f\xc3\xa9"), "\"a\\\"b\\\\c\\nd\\te\\rf\\001g\\177\\303\\251\"");
	CHECK_STR(ESC(ESC_CSTR, "x?\?=y??z?"), "\"x?\\?=y?\\?z?\"");
	CHECK_STR(ESC(ESC_CSTR, "??\?/"), "\"?\\?\\?/\"");   /* "\?" ends in '?': the next '?' is escaped too */
	CHECK_STR(ESC(ESC_CSTR, "\0" "1"), "\"\\0001\"");    /* three octal digits: the '1' stays a '1' */
	CHECK_STR(ESC(ESC_CSTR, "#include \"/etc/passwd\""), "\"#include \\\"/etc/passwd\\\"\"");

	/* JSON: valid for any input */
	CHECK_STR(ESC(ESC_JSON, "a\"b\\c\nd\te\rf\x01g\x7f\xc3\xa9"), "\"a\\\"b\\\\c\\nd\\te\\rf\\u0001g\\u007f\xc3\xa9\"");
	CHECK_STR(ESC(ESC_JSON, "x?\?=\xff\xe2\x80\xa8"), "\"x?\?=\\\\xff\\u2028\"");
	CHECK_STR(ESC(ESC_JSON, "n\0" "1"), "\"n\\u00001\"");
	Buf b = {0};
	buf_quote(&b, "q\"");
	CHECK_STR(b.s, "\"q\\\"\"");
	buf_free(&b);
	buf_quote(&b, NULL);
	CHECK_STR(b.s, "\"\"");
	buf_free(&b);

	/* DOT: the text is shown, never read as DOT's escapes */
	CHECK_STR(ESC(ESC_DOT, "a\"b\\n\nc\x01"), "\"a\\\"b\\\\n\\\\nc\\\\x01\"");

	/* identifiers: plain names kept, others encoded injectively */
	CHECK_STR(ESC(ESC_IDENT, "conv2d_1"), "conv2d_1");
	CHECK_STR(ESC(ESC_IDENT, "_x"), "_x");
	CHECK_STR(ESC(ESC_IDENT, "fc1.weight"), "dcx_fc1_2Eweight");
	CHECK_STR(ESC(ESC_IDENT, "fc1_2Eweight"), "fc1_2Eweight");
	CHECK_STR(ESC(ESC_IDENT, "dcx_a"), "dcx_dcx__a");      /* the prefix itself is encoded */
	CHECK_STR(ESC(ESC_IDENT, "9lives"), "dcx_9lives");
	CHECK_STR(ESC(ESC_IDENT, ""), "dcx_");
	CHECK_STR(ESC(ESC_IDENT, "a\0b"), "dcx_a_00b");
	CHECK_STR(ESC(ESC_IDENT, "x;system"), "dcx_x_3Bsystem");

	/* terminal text: printable kept, escape sequences shown */
	CHECK_STR(ESC(ESC_TERM, "node 'a\\b\"' \x1b]0;pwn\x07\n"), "node 'a\\b\"' \\x1b]0;pwn\\x07\\n");

	CHECK(c_is_keyword("int") && c_is_keyword("class") && c_is_keyword("static_assert"));
	CHECK(!c_is_keyword("model") && !c_is_keyword("exp") && !c_is_keyword("Int"));
}

/* ---- file.c ---- */

static void test_file(void)
{
	Arena *a = arena_new();
	CHECK_STR(path_to_ident(a, "my-model.v2.pt2"), "my_model_v2");
	CHECK_STR(path_to_ident(a, "/x/y/9lives.pt2"), "_9lives");
	CHECK_STR(path_to_ident(a, "dir/resnet18.pt2"), "resnet18");
	CHECK_STR(path_to_ident(a, "plain"), "plain");
	CHECK_STR(path_to_ident(a, "dir/.pt2"), "model");
	CHECK_STR(path_to_ident(a, ""), "model");
	CHECK_STR(path_to_ident(a, "a b\xc3\xa9.pt2"), "a_b__");
	CHECK_STR(path_base("a/b/c.txt"), "c.txt");
	CHECK_STR(path_base("c.txt"), "c.txt");
	arena_free(a);

	const char *p = tpath("f.txt");
	CHECK_INT(file_write(p, "hello\0world", 11), 0);
	size_t len = 0;
	char *s = file_read(p, &len);
	CHECK(s && len == 11 && !memcmp(s, "hello\0world", 11) && s[11] == '\0');
	free(s);
	CHECK(file_exists(p));
	CHECK(!dir_exists(p));
	CHECK_INT(file_write(p, "x", 1), 0); /* replaces */
	s = file_read(p, &len);
	CHECK(s && len == 1 && s[0] == 'x');
	free(s);

	capture();
	CHECK(file_read(tpath("missing"), &len) == NULL);
	CHECK(contains(captured(), "/missing: error: cannot read: No such file or directory\n"));
	capture();
	CHECK_INT(file_write(tpath("nodir/x"), "x", 1), -1);
	CHECK(contains(captured(), "/nodir/x: error: cannot write: "));

	CHECK_INT(mkdir_p(tpath("d1/d2//d3/")), 0);
	CHECK(dir_exists(tpath("d1/d2/d3")));
	CHECK_INT(mkdir_p(tpath("d1/d2")), 0); /* exists: fine */
	CHECK_INT(file_write(tpath("d1/d2/d3/f"), "x", 1), 0);
	capture();
	CHECK_INT(mkdir_p(tpath("f.txt/sub")), -1);
	CHECK(contains(captured(), "f.txt: error: cannot create directory: Not a directory\n"));
	CHECK_INT(rm_rf(tpath("d1")), 0);
	CHECK(!dir_exists(tpath("d1")));
	CHECK_INT(rm_rf(tpath("d1")), 0); /* already gone */
	CHECK_INT(rm_rf(p), 0);
	CHECK(!file_exists(p));
}

/* ---- hash.c ---- */

static void test_hash(void)
{
	char hex[65];
	sha256_hex_of("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256_hex_of("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256_hex_of(m448, strlen(m448), hex);
	CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

	/* One million 'a', fed in uneven pieces across block boundaries. */
	static char ma[1000000];
	memset(ma, 'a', sizeof(ma));
	Sha256 s;
	unsigned char d[32];
	sha256_init(&s);
	for (size_t off = 0, step = 1; off < sizeof(ma); off += step, step = step % 131 + 7)
		sha256_update(&s, ma + off, MIN(step, sizeof(ma) - off));
	sha256_final(&s, d);
	sha256_hex(d, hex);
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* ---- json.c ---- */

static void test_json(void)
{
	const char *text =
		"{\"max\": 9223372036854775807, \"min\": -9223372036854775808,\n"
		" \"p53\": 9007199254740993, \"inf\": \"Infinity\", \"ninf\": \"-Infinity\",\n"
		" \"nan\": \"NaN\", \"half\": 1.5, \"exp\": 1e3, \"huge\": 12345678901234567890,\n"
		" \"s\": \"12345678901234567890\", \"t\": true, \"n\": null, \"arr\": [1, 2, 3],\n"
		" \"u\": {\"as_int\": 4}, \"two\": {\"a\": 1, \"b\": 2}, \"longfrac\": 1234567890123456.5}";
	cJSON *j = json_parse(text, strlen(text), "t.json");
	CHECK(j != NULL);
	int64_t v = 0;
	CHECK(json_int(json_get(j, "max"), &v) == 0 && v == INT64_MAX);
	CHECK(json_int(json_get(j, "min"), &v) == 0 && v == INT64_MIN);
	CHECK(json_int(json_get(j, "p53"), &v) == 0 && v == 9007199254740993LL);
	CHECK(json_int(json_get(j, "exp"), &v) == 0 && v == 1000);
	CHECK_INT(json_int(json_get(j, "half"), &v), -1);
	CHECK_INT(json_int(json_get(j, "huge"), &v), -1); /* above int64 */
	CHECK_INT(json_int(json_get(j, "s"), &v), -1);
	double f = 0;
	CHECK(json_float(json_get(j, "huge"), &f) == 0 && f == 12345678901234567890.0);
	CHECK(json_float(json_get(j, "inf"), &f) == 0 && isinf(f) && f > 0);
	CHECK(json_float(json_get(j, "ninf"), &f) == 0 && isinf(f) && f < 0);
	CHECK(json_float(json_get(j, "nan"), &f) == 0 && isnan(f));
	CHECK(json_float(json_get(j, "half"), &f) == 0 && f == 1.5);
	CHECK(json_float(json_get(j, "longfrac"), &f) == 0 && f == 1234567890123456.5);
	CHECK(json_float(json_get(j, "max"), &f) == 0 && f == 9223372036854775807.0);
	CHECK_INT(json_float(json_get(j, "s"), &f), -1);
	CHECK_STR(json_str(json_get(j, "s")), "12345678901234567890");
	CHECK(json_str(json_get(j, "max")) == NULL); /* tagged: a number, not a string */
	int b = 0;
	CHECK(json_bool(json_get(j, "t"), &b) == 0 && b == 1);
	CHECK_INT(json_bool(json_get(j, "n"), &b), -1);
	CHECK(json_is_null(json_get(j, "n")));
	CHECK(json_is_null(json_get(j, "absent")));
	CHECK(!json_is_null(json_get(j, "t")));
	CHECK_INT(json_len(json_get(j, "arr")), 3);
	CHECK(json_int(json_at(json_get(j, "arr"), 2), &v) == 0 && v == 3);
	CHECK(json_at(json_get(j, "arr"), 3) == NULL);
	CHECK_INT(json_len(json_get(j, "t")), 0);
	cJSON *uv = NULL;
	CHECK_STR(json_union_tag(json_get(j, "u"), &uv), "as_int");
	CHECK(json_int(uv, &v) == 0 && v == 4);
	CHECK(json_union_tag(json_get(j, "two"), &uv) == NULL && uv == NULL);
	CHECK(json_union_tag(json_get(j, "arr"), &uv) == NULL);
	json_free(j);

	/* Errors: line and column of the original text, also after a number
	 * the pre-pass rewrote (which shifts the rewritten text by 3). */
	const char *bad = "{\n  \"a\": 1,\n  \"b\": 12345678901234567890 x\n}";
	diag_reset();
	capture();
	CHECK(json_parse(bad, strlen(bad), "bad.json") == NULL);
	CHECK_STR(captured(), "bad.json:3:29: error: malformed JSON near 'x'\n");
	CHECK_INT(diag_errors(), 1);
	const char *bad2 = "[12345678901234567, 12345678901234567890, 1.5, tru]";
	capture();
	CHECK(json_parse(bad2, strlen(bad2), "b2.json") == NULL);
	CHECK_STR(captured(), "b2.json:1:48: error: malformed JSON near 'tru]'\n");
	capture();
	CHECK(json_parse("{} x", 4, "trail.json") == NULL);
	CHECK_STR(captured(), "trail.json:1:4: error: malformed JSON near 'x'\n");
	capture();
	CHECK(json_parse("", 0, "empty.json") == NULL);
	CHECK(contains(captured(), "empty.json:1:1: error: malformed JSON"));
	/* Only the first len bytes count. */
	j = json_parse("[1]garbage", 3, "n.json");
	CHECK(j != NULL && json_len(j) == 1);
	json_free(j);
	/* Control characters (which cJSON would take) and the escapes that
	 * would forge the big-integer tag or cut a string short are errors
	 * (test/fuzz/regress/json). */
	static const struct { const char *text; size_t len; const char *msg; } refused[] = {
		{"[\"a\001b\"]", 6, "c.json:1:4: error: malformed JSON: a control character in a string\n"},
		{"{\"a\":1}\0", 8, "c.json:1:8: error: malformed JSON: a control character\n"},
		{"[\0011]", 4, "c.json:1:2: error: malformed JSON: a control character\n"},
		{"[\"\\u00015\"]", 11, "c.json:1:3: error: malformed JSON: the escape \\u0000 or \\u0001 in a string\n"},
		{"{\"w\\u0000x\": 1}", 16, "c.json:1:4: error: malformed JSON: the escape \\u0000 or \\u0001 in a string\n"},
		{"[\"a\\\001\"]", 7, "c.json:1:5: error: malformed JSON: a control character in a string\n"},
	};
	for (size_t k = 0; k < COUNTOF(refused); k++) {
		capture();
		CHECK(json_parse(refused[k].text, refused[k].len, "c.json") == NULL);
		CHECK_STR(captured(), refused[k].msg);
	}
	j = json_parse("[\"\\\\u0001\\u0002\"]\t", 18, "ok.json");   /* an escaped backslash; U+0002 */
	CHECK(j && json_str(json_at(j, 0)) && !strcmp(json_str(json_at(j, 0)), "\\u0001\002"));
	json_free(j);
	/* JSON_REALS: a fraction or an exponent makes a real, read exactly by
	 * json_float and refused by json_int; integers stay integers; a
	 * malformed literal is still cJSON's syntax error. */
	const char *reals = "[1, 1.0, -0.0, 1e3, 2.5E-3, 12345678901234567890, -7, \"1.5\"]";
	j = json_parse_ex(reals, strlen(reals), "r.json", JSON_REALS);
	CHECK(j != NULL);
	CHECK(!json_is_real(json_at(j, 0)) && json_int(json_at(j, 0), &v) == 0 && v == 1);
	CHECK(json_is_real(json_at(j, 1)) && json_int(json_at(j, 1), &v) == -1);
	CHECK(json_float(json_at(j, 1), &f) == 0 && f == 1.0);
	CHECK(json_is_real(json_at(j, 2)) && json_float(json_at(j, 2), &f) == 0 && f == 0 && signbit(f));
	CHECK(json_is_real(json_at(j, 3)) && json_float(json_at(j, 3), &f) == 0 && f == 1000);
	CHECK(json_is_real(json_at(j, 4)) && json_float(json_at(j, 4), &f) == 0 && f == 2.5e-3);
	CHECK(!json_is_real(json_at(j, 5)) && json_float(json_at(j, 5), &f) == 0);
	CHECK(!json_is_real(json_at(j, 6)) && json_int(json_at(j, 6), &v) == 0 && v == -7);
	CHECK(!json_is_real(json_at(j, 7)) && json_str(json_at(j, 7)) && json_str(json_at(j, 1)) == NULL);
	json_free(j);
	j = json_parse(reals, strlen(reals), "r.json");
	CHECK(j && !json_is_real(json_at(j, 1)) && json_int(json_at(j, 1), &v) == 0 && v == 1);
	json_free(j);
	capture();
	CHECK(json_parse_ex("[1.2.3]", 7, "m.json", JSON_REALS) == NULL);
	CHECK(contains(captured(), "m.json:1:"));
	/* nor is a number where a key belongs (it was a tagged key for a big integer) */
	capture();
	CHECK(json_parse_ex("{1.5: 2}", 8, "k.json", JSON_REALS) == NULL);
	CHECK(contains(captured(), "k.json:1:3: error: malformed JSON"));
	capture();
	CHECK(json_parse("{12345678901234567890 : 2}", 26, "k.json") == NULL);
	CHECK(contains(captured(), "k.json:1:3: error: malformed JSON"));
}

/* ---- npy.c ---- */

/* Write a .npy file by hand: v1.0 header from dict text (padded here). */
static void npy_by_hand(const char *path, const char *dict, const void *data, size_t n)
{
	Buf b = {0};
	buf_putn(&b, "\x93NUMPY\x01\x00\x00\x00", 10);
	buf_puts(&b, dict);
	while ((b.len + 1) % 64)
		buf_putc(&b, ' ');
	buf_putc(&b, '\n');
	b.s[8] = (char)(b.len - 10);
	buf_putn(&b, data, n);
	CHECK_INT(file_write(path, b.s, b.len), 0);
	buf_free(&b);
}

static void test_npy(void)
{
	float x[6] = {1, 2, 3, 4.5f, -5, 6};
	int64_t shape[2] = {2, 3};
	const char *p = tpath("x.npy");
	CHECK_INT(npy_write(p, "<f4", 2, shape, x), 0);
	size_t len = 0;
	char *raw = file_read(p, &len);
	/* Data starts at a multiple of 64 (here 128), right after the '\n'. */
	CHECK(raw && len == 128 + sizeof(x) && raw[127] == '\n');
	CHECK(raw && !memcmp(raw, "\x93NUMPY\x01\x00\x76\x00", 10));
	CHECK(raw && contains(raw + 10, "'shape': (2, 3)"));
	free(raw);
	Npy a;
	CHECK_INT(npy_read(p, &a), 0);
	CHECK_STR(a.descr, "<f4");
	CHECK_INT(a.rank, 2);
	CHECK(a.shape[0] == 2 && a.shape[1] == 3);
	CHECK(a.nbytes == sizeof(x) && !memcmp(a.data, x, sizeof(x)));
	npy_free(&a);

	/* Rank 1 ("(5,)") and rank 0 ("()"). */
	int64_t l[5] = {INT64_MIN, -1, 0, 1, INT64_MAX}, s1 = 5;
	CHECK_INT(npy_write(p, "<i8", 1, &s1, l), 0);
	CHECK_INT(npy_read(p, &a), 0);
	CHECK(a.rank == 1 && a.shape[0] == 5 && a.nbytes == sizeof(l) && !memcmp(a.data, l, sizeof(l)));
	npy_free(&a);
	double d0 = 3.25;
	CHECK_INT(npy_write(p, "<f8", 0, NULL, &d0), 0);
	CHECK_INT(npy_read(p, &a), 0);
	CHECK(a.rank == 0 && a.nbytes == 8 && *(double *)a.data == 3.25);
	npy_free(&a);

	/* Equivalent spellings are normalised. */
	unsigned char u8[3] = {1, 2, 250};
	npy_by_hand(p, "{'descr': '<u1', 'fortran_order': False, 'shape': (3,), }", u8, 3);
	CHECK_INT(npy_read(p, &a), 0);
	CHECK_STR(a.descr, "|u1");
	CHECK(a.nbytes == 3 && ((unsigned char *)a.data)[2] == 250);
	npy_free(&a);

	capture();
	npy_by_hand(p, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", x, sizeof(x));
	CHECK_INT(npy_read(p, &a), -1);
	CHECK(contains(captured(), "x.npy: error: npy: Fortran-order arrays are not supported"));
	CHECK(a.data == NULL);
	capture();
	npy_by_hand(p, "{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", x, sizeof(x));
	CHECK_INT(npy_read(p, &a), -1);
	CHECK(contains(captured(), "x.npy: error: npy: big-endian dtype '>f4' is not supported"));
	capture();
	npy_by_hand(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }", x, sizeof(x));
	CHECK_INT(npy_read(p, &a), -1);
	CHECK(contains(captured(), "x.npy: error: npy: file holds 24 data bytes, shape and dtype need 28"));
	capture();
	npy_by_hand(p, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", x, sizeof(x));
	CHECK_INT(npy_read(p, &a), -1);
	CHECK(contains(captured(), "unsupported dtype '<c8'"));
	capture();
	CHECK_INT(file_write(p, "hello world", 11), 0);
	CHECK_INT(npy_read(p, &a), -1);
	CHECK(contains(captured(), "x.npy: error: npy: not a .npy file"));
	/* Empty, but the other dims' extent overflows: strides from it would
	 * (test/fuzz/regress/npy). */
	capture();
	npy_by_hand(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4), }", x, 0);
	CHECK_INT(npy_read(p, &a), -1);
	CHECK(contains(captured(), "x.npy: error: npy: header: shape too large"));
	CHECK(a.data == NULL);
	capture();
	npy_by_hand(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", x, 4);
	CHECK_INT(npy_read(p, &a), -1);
	CHECK(contains(captured(), "x.npy: error: npy: shape has more than 8 dimensions"));
	/* The largest extent that fits is read (it is empty). */
	npy_by_hand(p, "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 9223372036854775807), }", x, 0);
	CHECK_INT(npy_read(p, &a), 0);
	CHECK(a.rank == 2 && a.nbytes == 0);
	npy_free(&a);
}

/* ---- safetensors.c ---- */

static void test_safetensors(void)
{
	const char *hdr = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
	                  "\"b\":{\"dtype\":\"I64\",\"shape\":[1,1],\"data_offsets\":[8,16]},"
	                  "\"__metadata__\":{\"format\":\"pt\"}}";
	Buf b = {0};
	size_t hlen = strlen(hdr);
	size_t padded = (hlen + 7) / 8 * 8;
	unsigned char le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)((uint64_t)padded >> (8 * i));
	buf_putn(&b, (const char *)le, 8);
	buf_puts(&b, hdr);
	while (b.len < 8 + padded)
		buf_putc(&b, ' ');
	float w[2] = {1.5f, -2};
	int64_t bias = -7;
	buf_putn(&b, (const char *)w, sizeof(w));
	buf_putn(&b, (const char *)&bias, sizeof(bias));
	const char *p = tpath("m.safetensors");
	CHECK_INT(file_write(p, b.s, b.len), 0);

	Safetensors st;
	CHECK_INT(st_open(&st, p), 0);
	CHECK_INT(st.nt, 2);
	const StTensor *t = st_find(&st, "w");
	CHECK(t != NULL);
	if (t) {
		CHECK_STR(t->dtype, "F32");
		CHECK(t->rank == 1 && t->shape[0] == 2 && t->nbytes == 8);
		CHECK(!memcmp(t->data, w, sizeof(w)));
	}
	t = st_find(&st, "b");
	CHECK(t && t->rank == 2 && t->nbytes == 8 && !memcmp(t->data, &bias, 8));
	CHECK(st_find(&st, "__metadata__") == NULL);
	st_close(&st);

	/* Truncated: the data no longer covers the offsets. */
	const char *q = tpath("trunc.safetensors");
	CHECK_INT(file_write(q, b.s, b.len - 4), 0);
	capture();
	CHECK_INT(st_open(&st, q), -1);
	CHECK(contains(captured(), "trunc.safetensors: error: safetensors header: tensor 'b': "
	                           "data_offsets outside the data"));
	CHECK(st.mem == NULL && st.nt == 0);
	/* Truncated inside the header. */
	CHECK_INT(file_write(q, b.s, 20), 0);
	capture();
	CHECK_INT(st_open(&st, q), -1);
	CHECK(contains(captured(), "trunc.safetensors: error: safetensors header: length"));
	/* Offsets that disagree with dtype and shape. */
	b.s[8 + (strstr(hdr, "[0,8]") - hdr) + 3] = '4';
	CHECK_INT(file_write(q, b.s, b.len), 0);
	capture();
	CHECK_INT(st_open(&st, q), -1);
	CHECK(contains(captured(), "tensor 'w': data_offsets span 4 bytes, but F32 with this shape needs 8"));
	buf_free(&b);
	/* A name twice, and an empty tensor whose extent overflows
	 * (test/fuzz/regress/safetensors). */
	static const struct { const char *hdr, *msg; } refused[] = {
		{"{\"w\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1]},"
		 "\"w\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1]}}", "tensor 'w' appears twice"},
		{"{\"e\":{\"dtype\":\"F32\",\"shape\":[0,4611686018427387904,2],\"data_offsets\":[0,0]}}",
		 "tensor 'e': shape too large"},
	};
	for (size_t k = 0; k < COUNTOF(refused); k++) {
		Buf f = {0};
		uint64_t n = strlen(refused[k].hdr);
		for (int i = 0; i < 8; i++)
			buf_putc(&f, (int)(n >> (8 * i) & 0xff));
		buf_puts(&f, refused[k].hdr);
		buf_putc(&f, 'x');
		CHECK_INT(file_write(q, f.s, f.len), 0);
		capture();
		CHECK_INT(st_open(&st, q), -1);
		CHECK(contains(captured(), refused[k].msg));
		buf_free(&f);
	}
}

/* ---- zipread.c ---- */

static void test_zip(void)
{
	const char *p = tpath("m.pt2");
	static const char fmt[] = "pt2";
	static const char model[] = "{\"graph\": 1}";
	int err = 0;
	zip_t *z = zip_open(p, ZIP_CREATE | ZIP_TRUNCATE, &err);
	CHECK(z != NULL);
	if (!z)
		return;
	zip_source_t *s1 = zip_source_buffer(z, fmt, strlen(fmt), 0);
	zip_int64_t i1 = zip_file_add(z, "m/archive_format", s1, 0);
	CHECK(i1 >= 0);
	CHECK(zip_set_file_compression(z, (zip_uint64_t)i1, ZIP_CM_STORE, 0) == 0);
	zip_source_t *s2 = zip_source_buffer(z, model, strlen(model), 0);
	zip_int64_t i2 = zip_file_add(z, "m/models/model.json", s2, 0);
	CHECK(i2 >= 0); /* left at the default, deflate */
	CHECK(zip_close(z) == 0);

	Pt2 *a = pt2_open(p);
	CHECK(a != NULL);
	if (!a)
		return;
	CHECK_STR(pt2_root(a), "m/");
	CHECK_INT(pt2_count(a), 2);
	CHECK_STR(pt2_name(a, 0), "m/archive_format");
	CHECK(pt2_has(a, "models/model.json"));
	CHECK(!pt2_has(a, "models/other.json"));
	size_t len = 0;
	char *d = pt2_read(a, "models/model.json", &len);
	CHECK(d && len == strlen(model) && !strcmp(d, model));
	free(d);
	d = pt2_read(a, "archive_format", &len);
	CHECK(d && len == 3 && !strcmp(d, "pt2"));
	free(d);
	capture();
	CHECK(pt2_read(a, "data/weights", &len) == NULL);
	CHECK(contains(captured(), "m.pt2: error: archive has no entry 'm/data/weights'\n"));
	pt2_close(a);

	/* A recorded size is checked against what the archive can hold before
	 * it sizes an allocation (test/fuzz/regress/pt2); the data against its
	 * CRC. Both patched into the stored entry's records. */
	size_t zl = 0;
	char *zb = file_read(p, &zl);
	char *cen = NULL, *loc = NULL;
	for (size_t k = 0; zb && k + 4 <= zl; k++) {
		if (!memcmp(zb + k, "PK\001\002", 4) && !cen) cen = zb + k;
		if (!memcmp(zb + k, "PK\003\004", 4) && !loc) loc = zb + k;
	}
	CHECK(cen && loc);
	if (cen && loc) {
		const char *q = tpath("size.pt2");
		memcpy(cen + 24, "\xff\xff\xff\x7f", 4);   /* uncompressed size */
		CHECK_INT(file_write(q, zb, zl), 0);
		a = pt2_open(q);
		CHECK(a != NULL);
		capture();
		CHECK(a && pt2_read(a, "archive_format", &len) == NULL);
		CHECK(contains(captured(), "size.pt2: error: entry 'm/archive_format' is too large: it claims "
		                           "2147483647 bytes, more than the archive"));
		pt2_close(a);
		memcpy(cen + 24, "\x03\x00\x00\x00", 4);
		loc[30 + strlen("m/archive_format")] ^= 1;   /* "pt2" -> "qt2" */
		CHECK_INT(file_write(q, zb, zl), 0);
		a = pt2_open(q);
		capture();
		CHECK(a && pt2_read(a, "archive_format", &len) == NULL);
		CHECK(contains(captured(), "size.pt2: error: cannot read entry 'm/archive_format': CRC error"));
		pt2_close(a);
	}
	free(zb);

	const char *q = tpath("notzip.pt2");
	CHECK_INT(file_write(q, "this is not a zip archive at all", 32), 0);
	capture();
	CHECK(pt2_open(q) == NULL);
	CHECK(contains(captured(), "notzip.pt2: error: not a zip archive: "));
	capture();
	CHECK(pt2_open(tpath("absent.pt2")) == NULL);
	CHECK(contains(captured(), "absent.pt2: error: cannot open: "));
}

/* ---- spawn.c ---- */

static void test_spawn(void)
{
	char *err = NULL;
	char *const a1[] = {"sh", "-c", "echo hi >&2; exit 3", NULL};
	CHECK_INT(spawn_run(a1, &err), 3);
	CHECK_STR(err, "hi\n");
	free(err);
	CHECK_INT(spawn_run(a1, NULL), 3);

	/* Much more than a pipe holds: must not deadlock. */
	char *const a2[] = {"sh", "-c", "head -c 300000 /dev/zero | tr '\\000' x >&2", NULL};
	CHECK_INT(spawn_run(a2, &err), 0);
	CHECK(err && strlen(err) == 300000 && err[299999] == 'x');
	free(err);

	char *const a3[] = {"sh", "-c", "kill -TERM $$", NULL};
	CHECK_INT(spawn_run(a3, &err), 128 + SIGTERM);
	free(err);

	char *const a4[] = {"doccc-no-such-program-xyz", "arg", NULL};
	capture();
	err = (char *)"untouched";
	CHECK_INT(spawn_run(a4, &err), -1);
	CHECK(err == NULL);
	CHECK_STR(captured(), "doccc: error: cannot run 'doccc-no-such-program-xyz': "
	                      "No such file or directory\n");

	/* -v echo (quoted for the shell) and the child's stdout both go to our
	 * stderr: send fd 2 to a file for the duration. */
	const char *ef = tpath("stderr.txt");
	fflush(stderr);
	int saved = dup(2);
	FILE *f = fopen(ef, "w");
	CHECK(saved >= 0 && f != NULL);
	if (saved < 0 || !f)
		return;
	dup2(fileno(f), 2);
	spawn_verbose = 1;
	char *const a5[] = {"sh", "-c", "echo out; echo err >&2", "a b", "it's", "", "x=1,y:2/z+.-", NULL};
	int rc = spawn_run(a5, &err);
	spawn_verbose = 0;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fclose(f);
	CHECK_INT(rc, 0);
	CHECK_STR(err, "err\n");
	free(err);
	size_t len;
	char *text = file_read(ef, &len);
	CHECK_STR(text, "sh -c 'echo out; echo err >&2' 'a b' 'it'\\''s' '' x=1,y:2/z+.-\nout\n");
	free(text);

	/* spawn_run_in: the child's directory; a relative program with a '/'
	 * is found from there (./x is the dir's x, not ours). */
	char *d = strdup(tpath("spawn dir")); /* tpath's buffer is reused */
	CHECK_INT(mkdir_p(d), 0);
	CHECK_INT(file_write(tpath("spawn dir/x.sh"), "#!/bin/sh\npwd >&2\n", strlen("#!/bin/sh\npwd >&2\n")), 0);
	CHECK_INT(chmod(tpath("spawn dir/x.sh"), 0755), 0);
	char *const a6[] = {"./x.sh", NULL};
	CHECK_INT(spawn_run_in(d, a6, &err), 0);
	char *real = realpath(d, NULL);
	CHECK(real && err && !strncmp(err, real, strlen(real)) && err[strlen(real)] == '\n');
	free(real);
	free(d);
	free(err);
	capture();
	CHECK_INT(spawn_run(a6, NULL), -1); /* not in our directory */
	CHECK(contains(captured(), "cannot run './x.sh'"));
}

static void test_spawn_words(void)
{
	Arena *a = arena_new();
	int n = -1;
	char **v = spawn_words(a, "  ccache\tclang  -O2 'a b'\n", &n);
	CHECK_INT(n, 5);
	CHECK_STR(v[0], "ccache");
	CHECK_STR(v[1], "clang");
	CHECK_STR(v[2], "-O2");
	CHECK_STR(v[3], "'a"); /* no shell: quotes are characters */
	CHECK_STR(v[4], "b'");
	CHECK(v[5] == NULL);
	v = spawn_words(a, " \t \n", &n);
	CHECK_INT(n, 0);
	CHECK(v[0] == NULL);
	spawn_words(a, "", &n);
	CHECK_INT(n, 0);
	/* spawn_which: PATH lookup, links resolved */
	const char *sh = spawn_which(a, "sh");
	CHECK(sh && sh[0] == '/' && access(sh, X_OK) == 0);
	CHECK(spawn_which(a, "doccc-no-such-program-xyz") == NULL);
	CHECK(spawn_which(a, "./doccc-no-such-program-xyz") == NULL);
	arena_free(a);
}

static void test_tmp(void)
{
	Arena *a = arena_new();
	const char *old = getenv("DOCC_TMP");
	char base[128];
	snprintf(base, sizeof(base), "%s/tmpbase/nested", tdir);
	CHECK_INT(setenv("DOCC_TMP", base, 1), 0);
	char *d = tmp_dir(a);
	CHECK(d != NULL && dir_exists(d));
	CHECK(d && !strncmp(d, base, strlen(base)) && contains(d, "/doccc-"));
	if (!d)
		return;
	char f[256];
	snprintf(f, sizeof(f), "%s/inner.c", d);
	CHECK_INT(file_write(f, "x", 1), 0);
	char g[256];
	snprintf(g, sizeof(g), "%s/loose", tdir);
	CHECK_INT(file_write(g, "y", 1), 0);
	tmp_register(g);
	char h[256];
	snprintf(h, sizeof(h), "%s/kept", tdir);
	CHECK_INT(file_write(h, "z", 1), 0);
	tmp_register(h);
	tmp_unregister(h);
	tmp_cleanup();
	CHECK(!dir_exists(d));
	CHECK(!file_exists(g));
	CHECK(file_exists(h));

	tmp_keep = 1;
	tmp_register(h);
	tmp_cleanup();
	CHECK(file_exists(h));
	tmp_keep = 0;
	tmp_cleanup(); /* the registry was emptied: nothing to remove */
	CHECK(file_exists(h));
	if (old)
		setenv("DOCC_TMP", old, 1);
	else
		unsetenv("DOCC_TMP");
	arena_free(a);
}

/* ---- options.c ---- */

/* Write a YAML file into the scratch directory; its path (static). */
static const char *yaml_file(const char *name, const char *text)
{
	const char *p = tpath(name);
	CHECK_INT(file_write(p, text, strlen(text)), 0);
	return p;
}

static void test_options(void)
{
	Arena *a = arena_new();
	Options o;
	opt_init(&o, a);
	CHECK_STR(o.target, "none");
	CHECK_STR(o.category, "server");
	CHECK(o.march == NULL);
	CHECK_INT(o.approximate_math, -1);
	CHECK_STR(o.contraction_precision, "highest");
	CHECK_INT(o.npassopts, 0);

	const char *p = yaml_file("ok.yaml",
	                          "# options\n"
	                          "target: openmp\n"
	                          "category: desktop\n"
	                          "march: native\n"
	                          "approximate_math: Yes\n"
	                          "contraction_precision: high\n"
	                          "pass_options:\n"
	                          "  map_fusion: {enabled: false}\n"
	                          "  expand.tile_m: 8\n"
	                          "  expand:\n"
	                          "    tile_n: \"16\"\n");
	capture();
	CHECK_INT(opt_load_yaml(&o, p), 0);
	CHECK_STR(captured(), "");
	CHECK_STR(o.target, "openmp");
	CHECK_STR(o.category, "desktop");
	CHECK_STR(o.march, "native");
	CHECK_INT(o.approximate_math, 1);
	CHECK_STR(o.contraction_precision, "high");
	CHECK_INT(o.npassopts, 3);
	const PassOpt *po = opt_find_passopt(&o, "map_fusion.enabled");
	CHECK(po != NULL);
	if (po) {
		CHECK_STR(po->val, "false");
		char want[256];
		snprintf(want, sizeof(want), "%s:8:25", p);
		CHECK_STR(po->loc, want);
	}
	po = opt_find_passopt(&o, "expand.tile_m");
	CHECK(po && !strcmp(po->val, "8"));
	po = opt_find_passopt(&o, "expand.tile_n");
	CHECK(po && !strcmp(po->val, "16"));
	CHECK(opt_find_passopt(&o, "expand") == NULL);
	opt_add_passopt(&o, "expand.tile_m", "4", "--pass-opt");
	po = opt_find_passopt(&o, "expand.tile_m");
	CHECK(po && !strcmp(po->val, "4") && !strcmp(po->loc, "--pass-opt"));

	/* CLI settings. */
	capture();
	CHECK_INT(opt_set(&o, "target", "rocm", "--target"), 0);
	CHECK_STR(o.target, "rocm");
	CHECK_INT(opt_set(&o, "approximate_math", "OFF", "--approximate-math"), 0);
	CHECK_INT(o.approximate_math, 0);
	CHECK_INT(opt_set(&o, "category", "huge", "--category"), -1);
	CHECK_INT(opt_set(&o, "speed", "11", "--opt"), -1);
	CHECK_INT(opt_set(&o, "march", "", "--march"), -1);
	CHECK_STR(captured(), "--category: error: option 'category' must be one of edge, desktop, "
	                      "server (got 'huge')\n"
	                      "--opt: error: unknown option 'speed'\n"
	                      "--march: error: option 'march' must be a non-empty string (got '')\n");
	CHECK_STR(o.category, "desktop");

	/* Unknown key: a warning, and the rest still applies. */
	opt_init(&o, a);
	p = yaml_file("unknown.yaml", "target: cuda\n  # c\nfoo: 1\n");
	capture();
	CHECK_INT(opt_load_yaml(&o, p), 0);
	char want[512];
	snprintf(want, sizeof(want), "%s:3:1: warning: unknown option 'foo' ignored\n", p);
	CHECK_STR(captured(), want);
	CHECK_STR(o.target, "cuda");

	/* Wrong values: every one reported, at the value. The targets are the
	 * caller's (doccc's backend table); without a list, any name is taken. */
	opt_init(&o, a);
	CHECK_INT(opt_set(&o, "target", "sycl", "test"), 0);
	CHECK_STR(o.target, "sycl");
	opt_init(&o, a);
	o.targets = "none, sequential, openmp, cuda, rocm";
	p = yaml_file("bad.yaml", "category: edge\ntarget:   gpu\napproximate_math: 3\n"
	                          "contraction_precision: [high]\nmarch:\n");
	capture();
	CHECK_INT(opt_load_yaml(&o, p), -1);
	snprintf(want, sizeof(want),
	         "%s:2:11: error: option 'target' must be one of none, sequential, openmp, cuda, rocm "
	         "(got 'gpu')\n"
	         "%s:3:19: error: option 'approximate_math' must be a boolean (true/false, yes/no, "
	         "on/off) (got '3')\n"
	         "%s:4:24: error: option 'contraction_precision' must be one of highest, high, medium "
	         "(got a sequence)\n",
	         p, p, p);
	const char *got = captured();
	CHECK(!strncmp(got, want, strlen(want)));
	CHECK(contains(got, "error: option 'march' must be a non-empty string (got null)\n"));
	CHECK_STR(o.category, "edge");
	CHECK_STR(o.target, "none");

	/* pass_options errors. */
	opt_init(&o, a);
	p = yaml_file("passbad.yaml", "pass_options:\n  fuse: 3\n  a.b: {c: 1}\n  ok.x: 1\n");
	capture();
	CHECK_INT(opt_load_yaml(&o, p), -1);
	got = captured();
	snprintf(want, sizeof(want), "%s:2:9: error: pass_options: 'fuse' must map to", p);
	CHECK(contains(got, want));
	snprintf(want, sizeof(want), "%s:3:8: error: pass option 'a.b' must be written", p);
	CHECK(contains(got, want));
	CHECK(opt_find_passopt(&o, "ok.x") != NULL);
	opt_init(&o, a);
	p = yaml_file("passlist.yaml", "pass_options: [a, b]\n");
	capture();
	CHECK_INT(opt_load_yaml(&o, p), -1);
	snprintf(want, sizeof(want), "%s:1:15: error: option 'pass_options' must be a mapping (got a sequence)\n", p);
	CHECK_STR(captured(), want);

	/* Malformed YAML: libyaml's message, at its position. */
	p = yaml_file("malformed.yaml", "target: openmp\ncategory: a: b\n");
	capture();
	CHECK_INT(opt_load_yaml(&o, p), -1);
	snprintf(want, sizeof(want), "%s:2:12: error: mapping values are not allowed", p);
	CHECK(contains(captured(), want));

	/* Empty file: no options. Top level not a mapping: error. */
	opt_init(&o, a);
	p = yaml_file("empty.yaml", "");
	capture();
	CHECK_INT(opt_load_yaml(&o, p), 0);
	p = yaml_file("comments.yaml", "# nothing here\n");
	CHECK_INT(opt_load_yaml(&o, p), 0);
	CHECK_STR(captured(), "");
	CHECK_STR(o.target, "none");
	p = yaml_file("list.yaml", "- target\n");
	capture();
	CHECK_INT(opt_load_yaml(&o, p), -1);
	snprintf(want, sizeof(want), "%s:1:1: error: an options file must be a mapping", p);
	CHECK(contains(captured(), want));
	capture();
	CHECK_INT(opt_load_yaml(&o, tpath("absent.yaml")), -1);
	CHECK(contains(captured(), "absent.yaml: error: cannot read: "));

	/* The table for --list-options. */
	CHECK_INT(opt_ntable, 8);
	int docs = 1;
	for (int i = 0; i < opt_ntable; i++)
		docs &= opt_table[i].doc && *opt_table[i].doc && opt_table[i].type;
	CHECK(docs);
	CHECK_STR(opt_table[0].name, "target");
	CHECK_STR(opt_table[3].name, "triple");
	CHECK_STR(opt_table[4].name, "approximate_math");
	CHECK_STR(opt_table[4].type, "bool");
	CHECK_STR(opt_table[6].name, "remote_tuning");
	CHECK_STR(opt_table[7].type, "mapping");
	/* triple: a string, taken as given (backends/target.c checks it) */
	Options tr;
	opt_init(&tr, a);
	CHECK(tr.triple == NULL);
	CHECK_INT(opt_set(&tr, "triple", "aarch64-linux-gnu", "command line"), 0);
	CHECK_STR(tr.triple, "aarch64-linux-gnu");
	/* remote_tuning: docc's bool */
	Options r;
	opt_init(&r, a);
	CHECK_INT(r.remote_tuning, 0);
	CHECK_INT(opt_set(&r, "remote_tuning", "true", "command line"), 0);
	CHECK_INT(r.remote_tuning, 1);
	capture();
	CHECK_INT(opt_set(&r, "remote_tuning", "maybe", "command line"), -1);
	CHECK(contains(captured(), "remote_tuning"));
	arena_free(a);
}

/* ---- progress.c ---- */

/* What progress calls between progress_start and progress_end write to
 * stderr (a file here: DOCC_PROGRESS=1 draws whatever stderr is). */
static char *progress_capture(int allowed, const char *env, int (*body)(void), int *on)
{
	const char *path = tpath("progress.txt");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), saved = dup(2);
	CHECK(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	if (env)
		setenv("DOCC_PROGRESS", env, 1);
	else
		unsetenv("DOCC_PROGRESS");
	progress_start(allowed);
	*on = body();
	progress_end();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	unsetenv("DOCC_PROGRESS");
	CHECK(!progress_active()); /* progress_end turned it off */
	return file_read(path, NULL);
}

static int progress_body(void)
{
	int on = progress_active();
	progress_phase("writing %s", "weights");
	progress_bytes(0, (int64_t)3 << 30);       /* the phase's first detail: drawn */
	progress_bytes((int64_t)1 << 29, (int64_t)3 << 30); /* 100 ms have not passed: not drawn */
	progress_puts("msg\n");                     /* erased, written, drawn again (the latest detail) */
	progress_phase("name '%s'", "a\033[31mb");  /* a name from the model cannot colour the terminal */
	return on;
}

static void test_progress(void)
{
	Buf b = {0};
	const int64_t sizes[] = {0, 1023, 1024, 4096, 10 * 1024 - 1, 432013312, (int64_t)1503238553, (int64_t)5 << 40};
	const char *want[] = {"0 B", "1023 B", "1.0 KiB", "4.0 KiB", "10 KiB", "412 MiB", "1.4 GiB", "5.0 TiB"};
	for (size_t i = 0; i < COUNTOF(sizes); i++) {
		b.len = 0;
		progress_fmt_bytes(&b, sizes[i]);
		CHECK_STR(b.s, want[i]);
	}
	buf_free(&b);
	int on;
	char *t = progress_capture(1, "1", progress_body, &on);
	CHECK(on);
	CHECK_STR(t, "\rdoccc: writing weights\033[K"
	             "\rdoccc: writing weights 0 B / 3.0 GiB\033[K"
	             "\r\033[Kmsg\n"
	             "\rdoccc: writing weights 512 MiB / 3.0 GiB\033[K"
	             "\rdoccc: name 'a\\x1b[31mb'\033[K"
	             "\r\033[K");
	free(t);
	/* off: -q and --json (allowed 0), DOCC_PROGRESS=0, or a file that is no
	 * terminal; progress_puts still writes its text */
	const char *envs[] = {"1", "0", NULL};
	for (int i = 0; i < 3; i++) {
		t = progress_capture(i != 0, envs[i], progress_body, &on);
		CHECK(!on);
		CHECK_STR(t, "msg\n");
		free(t);
	}
}

int main(void)
{
	snprintf(tdir, sizeof(tdir), "/tmp/doccc-test-XXXXXX");
	if (!mkdtemp(tdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_diag();
	test_arena();
	test_buf();
	test_escape();
	test_file();
	test_hash();
	test_json();
	test_npy();
	test_safetensors();
	test_zip();
	test_spawn();
	test_spawn_words();
	test_tmp();
	test_progress();
	test_options();
	diag_capture(NULL);
	buf_free(&diagbuf);
	CHECK_INT(rm_rf(tdir), 0);
	return check_done("test_lib");
}
