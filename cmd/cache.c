/*
 * cache.c - DOCC_REUSE_BINARIES: a finished build kept for the next one.
 *
 * Builds are cached under $DOCC_TMP/doccc-cache/KEY/, KEY a hash of the
 * doccc version, the bytes of every file the compile reads (the input, the
 * weights, the options YAML, an extracted archive's data files), the
 * resolved target and every option of the command line that changes the
 * output. A compile with --report is not served from the cache (the
 * report describes a compilation) but stores its build.
 *
 * An entry holds the outputs and MANIFEST, one line "SHA256 NAME" per
 * output. It is built in a fresh KEY.tmp.XXXXXX beside it and renamed into
 * place whole, so concurrent doccc processes sharing the cache see an entry
 * complete or not at all (the first rename wins; a later one finds the
 * place taken and drops its copy). Before an entry is used every file is
 * read and its sha256 checked against MANIFEST; a missing, truncated or
 * altered file makes the entry stale (a note under -v): the model is
 * compiled again and the new entry replaces the old one.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

static int env_true(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") && strcasecmp(v, "false") && strcasecmp(v, "no") && strcasecmp(v, "off");
}

/* The sha256 of a file in hex (through a fixed buffer: outputs and inputs
 * may be gigabytes); -1 reported. */
static int hash_hex(const char *path, char hex[65])
{
	Sha256 h;
	unsigned char d[32];
	sha256_init(&h);
	if (file_hash(path, &h))
		return -1;
	sha256_final(&h, d);
	sha256_hex(d, hex);
	return 0;
}

static char *cache_dir(Arena *a, const Paths *reads, const char *key)
{
	Sha256 h;
	unsigned char d[32];
	char hex[65];
	sha256_init(&h);
	sha256_update(&h, DOCCC_VERSION, strlen(DOCCC_VERSION) + 1);
	sha256_update(&h, key, strlen(key) + 1);
	for (int i = 0; i < reads->n; i++) { /* their bytes, not their paths */
		Sha256 f;
		unsigned char fd[32];
		sha256_init(&f);
		if (file_hash(reads->v[i], &f))
			return NULL;
		sha256_final(&f, fd);
		sha256_update(&h, fd, sizeof fd);
	}
	sha256_final(&h, d);
	sha256_hex(d, hex);
	const char *base = getenv("DOCC_TMP");
	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	return arena_printf(a, "%s/doccc-cache/%.32s", base, hex);
}

enum { NOUTS = 4 };

/* The outputs of ba (NULL where not made) and their permission bits. */
static void cache_outputs(const BuildArgs *ba, const char *outs[NOUTS], int modes[NOUTS])
{
	const char *o[NOUTS] = {ba->outlib, ba->outhdr, ba->outsrc, ba->outweights};
	static const int m[NOUTS] = {0755, 0644, 0644, 0644};
	for (int i = 0; i < NOUTS; i++) {
		outs[i] = o[i];
		modes[i] = m[i];
	}
	if (ba->static_lib)
		modes[0] = 0644; /* an archive is not executable */
}

/* The hash MANIFEST man gives file name (its lines are "HEX  NAME\n",
 * HEX 64 digits), or NULL. */
static const char *manifest_hash(const char *man, const char *name)
{
	size_t n = strlen(name);
	for (const char *l = man; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		if (strspn(l, "0123456789abcdef") == 64 && !strncmp(l + 64, "  ", 2) && !strncmp(l + 66, name, n) &&
		    (l[66 + n] == '\n' || !l[66 + n]))
			return l;
	return NULL;
}

/* Install the outputs from cache entry dir. 0: done; 1: the entry is not
 * usable (why in *why, nothing written); -1: writing an output failed
 * (reported, what was written removed). */
static int entry_reuse(Arena *a, const BuildArgs *ba, const char *dir, const char **why)
{
	const char *outs[NOUTS];
	int modes[NOUTS];
	cache_outputs(ba, outs, modes);
	Buf quiet = {0};
	diag_capture(&quiet);
	char *man = file_read(arena_printf(a, "%s/MANIFEST", dir), NULL);
	*why = man ? NULL : "MANIFEST is missing";
	for (int i = 0; i < NOUTS && !*why; i++) {
		if (!outs[i])
			continue;
		const char *nm = path_base(outs[i]);
		char hex[65];
		int bad = hash_hex(arena_printf(a, "%s/%s", dir, nm), hex);
		const char *want = manifest_hash(man, nm);
		if (bad)
			*why = arena_printf(a, "%s is missing", nm);
		else if (!want)
			*why = arena_printf(a, "%s is not in MANIFEST", nm);
		else if (strncmp(want, hex, 64))
			*why = arena_printf(a, "%s does not match its sha256 in MANIFEST", nm);
	}
	free(man);
	diag_capture(NULL);
	buf_free(&quiet);
	int rc = *why ? 1 : 0;
	for (int i = 0; i < NOUTS && rc == 0; i++) {
		if (!outs[i] || file_copy(arena_printf(a, "%s/%s", dir, path_base(outs[i])), outs[i], modes[i]) == 0)
			continue;
		for (int j = 0; j < i; j++)
			if (outs[j])
				unlink(outs[j]);
		rc = -1;
	}
	return rc;
}

/* Store the installed outputs as cache entry dir (see above). replace:
 * the entry there is stale and goes; else one that is there was stored by
 * another doccc first and stays. Quiet: the build succeeded whatever
 * happens to the cache. */
static void entry_store(Arena *a, const BuildArgs *ba, const char *dir, int replace)
{
	const char *outs[NOUTS];
	int modes[NOUTS];
	cache_outputs(ba, outs, modes);
	Buf quiet = {0}, man = {0};
	diag_capture(&quiet);
	const char *parent = arena_strndup(a, dir, (size_t)(path_base(dir) - dir));
	char *tmp = arena_printf(a, "%s.tmp.XXXXXX", dir);
	if (mkdir_p(parent) != 0 || !mkdtemp(tmp)) {
		diag_capture(NULL);
		buf_free(&quiet);
		return;
	}
	tmp_register(tmp);
	int ok = 1;
	for (int i = 0; i < NOUTS && ok; i++) {
		if (!outs[i])
			continue;
		char hex[65];
		ok = file_copy(outs[i], arena_printf(a, "%s/%s", tmp, path_base(outs[i])), modes[i]) == 0 &&
		     hash_hex(outs[i], hex) == 0;
		if (ok)
			buf_printf(&man, "%s  %s\n", hex, path_base(outs[i]));
	}
	ok = ok && file_write(arena_printf(a, "%s/MANIFEST", tmp), man.s, man.len) == 0;
	if (ok && rename(tmp, dir) != 0 && replace) {
		char *old = arena_printf(a, "%s.old", tmp);
		tmp_register(old);
		if (rename(dir, old) == 0)
			(void)rename(tmp, dir);
		(void)rm_rf(old);
		tmp_unregister(old);
	}
	(void)rm_rf(tmp); /* nothing left there once renamed into place */
	tmp_unregister(tmp);
	diag_capture(NULL);
	buf_free(&quiet);
	buf_free(&man);
}


int cache_lookup(Arena *a, Cache *c, const BuildArgs *ba, const Paths *reads, const char *key, int reuse)
{
	c->dir = NULL;
	c->stale = 0;
	if (!env_true("DOCC_REUSE_BINARIES"))
		return 0;
	c->dir = cache_dir(a, reads, key);
	if (!c->dir || !dir_exists(c->dir))
		return 0;
	c->stale = 1; /* replaced when stored */
	if (!reuse)
		return 0;
	const char *why;
	int rc = entry_reuse(a, ba, c->dir, &why);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		if (spawn_verbose)
			fprintf(stderr, "doccc: reused the build in %s\n", c->dir);
		return 1;
	}
	if (spawn_verbose)
		diag_note(c->dir, "stale cache entry (%s); compiling again", why);
	return 0;
}

void cache_store(Arena *a, const Cache *c, const BuildArgs *ba)
{
	if (c->dir)
		entry_store(a, ba, c->dir, c->stale);
}
