/*
 * graph_bundle.h - the input of the graph harnesses (fuzz_import,
 * fuzz_pipeline): a whole program with its weights in one file.
 *
 * A bundle is the model JSON (models/model.json of a .pt2), then files,
 * each introduced by a line "@@file NAME" (test/fuzz/make_graph_seeds.py
 * writes them from real exports):
 *
 *   {"graph_module": ...}
 *   @@file data/weights/model_weights_config.json
 *   {"config": {...}}
 *   @@file data/weights/weight_0
 *   <raw bytes>
 *
 * bundle_write lays it out as an extracted archive in a folder of its own
 * under DOCC_TMP (or TMPDIR, or /tmp), emptied first: ROOT/models/model.json
 * with ROOT/data/... beside it, which import reads through the same weight
 * binding as a .pt2 (storage lookup, tensor_meta, strides and offsets). A
 * file named weights.safetensors is passed as --weights instead (the bare
 * JSON form). Names are confined to the folder: characters outside
 * [A-Za-z0-9_./-] become '_', ".." and leading '/' are dropped, and they are
 * cut at 127 characters. Nothing is
 * written into the source tree.
 */
#ifndef DOCCC_GRAPH_BUNDLE_H
#define DOCCC_GRAPH_BUNDLE_H

#include <string.h>
#include <unistd.h>

#include "fuzz.h"

#define BUNDLE_SEP "\n@@file "
#define BUNDLE_MAXFILES 64

static void bundle_put(const char *path, const uint8_t *d, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f) { perror(path); abort(); }
	if (n && fwrite(d, 1, n, f) != n) { perror(path); abort(); }
	fclose(f);
}

/* Names of at most 127 characters (so no component passes NAME_MAX). */
#define BUNDLE_NAMEMAX 128

/* A file name of the bundle made safe below root (see above); "" if none is left. */
static void bundle_name(char *out, size_t cap, const uint8_t *s, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < cap; i++) {
		int c = s[i];
		if (c == '/' && (k == 0 || out[k - 1] == '/')) continue;
		if (c == '.' && k > 0 && out[k - 1] == '.') continue;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		         c == '.' || c == '/' || c == '-';
		out[k++] = ok ? (char)c : '_';
	}
	while (k && out[k - 1] == '/') k--;
	out[k] = '\0';
}

static const uint8_t *bundle_find(const uint8_t *p, const uint8_t *end)
{
	size_t n = sizeof BUNDLE_SEP - 1;
	for (; p && end - p >= (ptrdiff_t)n; p++) {
		p = memchr(p, '\n', (size_t)(end - p));
		if (!p || end - p < (ptrdiff_t)n) return NULL;
		if (!memcmp(p, BUNDLE_SEP, n)) return p;
	}
	return NULL;
}

/* Lay out the bundle; returns the path of the model JSON and sets *weights
 * to the safetensors file's path or NULL. The paths stay valid until the
 * next call. */
static const char *bundle_write(const uint8_t *data, size_t size, const char **weights)
{
	static char root[1024], model[1200], st[1200];
	const char *dir = getenv("DOCC_TMP");
	if (!dir || !*dir) dir = getenv("TMPDIR");
	if (!dir || !*dir) dir = "/tmp";
	snprintf(root, sizeof root, "%s/doccc-fuzz-%ld-bundle", dir, (long)getpid());
	rm_rf(root);
	char sub[1100];
	snprintf(sub, sizeof sub, "%s/models", root);
	if (mkdir_p(sub)) abort();
	snprintf(model, sizeof model, "%s/model.json", sub);
	const uint8_t *end = data + size, *sep = bundle_find(data, end);
	bundle_put(model, data, sep ? (size_t)(sep - data) : size);
	*weights = NULL;
	for (int nf = 0; sep && nf < BUNDLE_MAXFILES; nf++) {
		const uint8_t *name = sep + sizeof BUNDLE_SEP - 1;
		const uint8_t *nl = memchr(name, '\n', (size_t)(end - name));
		const uint8_t *body = nl ? nl + 1 : end;
		sep = bundle_find(nl ? nl : end, end);
		if (sep && sep < body) body = sep;   /* the name line is the next file's separator */
		char rel[BUNDLE_NAMEMAX];
		bundle_name(rel, sizeof rel, name, (size_t)((nl ? nl : end) - name));
		if (!rel[0] || !strcmp(rel, "models/model.json")) continue;
		char path[1200];
		snprintf(path, sizeof path, "%s/%s", root, rel);
		char *slash = strrchr(path, '/');
		*slash = '\0';
		int isdir = dir_exists(path) || !mkdir_p(path);
		*slash = '/';
		if (!isdir || dir_exists(path)) continue;   /* a name that is a folder, or under a file */
		bundle_put(path, body, (size_t)((sep ? sep : end) - body));
		if (!strcmp(rel, "weights.safetensors")) {
			snprintf(st, sizeof st, "%s", path);
			*weights = st;
		}
	}
	return model;
}

#endif
