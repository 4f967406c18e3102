/*
 * buildsys.c - the files that tell a build system about a library doccc
 * installed: the make depfile of -MD/-MF/-MT, NAME.pc (--emit-pkgconfig) and
 * NAMEConfig.cmake (--emit-cmake).
 *
 * They are written after the library, its header and the rest are in place,
 * whether a build or the DOCC_REUSE_BINARIES cache put them there, each with
 * file_write (a temporary name renamed into place), so a reader sees a whole
 * file or the one from before. When one cannot be written, those this call
 * wrote are removed and the caller removes the library and the rest: no
 * output stays without the files that describe it.
 *
 * The depfile is gcc's: one rule "TARGETS: PREREQUISITES" (the files the
 * compile read, doccc's own executable), then an empty rule
 * for each prerequisite, as gcc -MP writes them, so that make does not stop
 * when one of them is deleted or moved. Paths are escaped as make reads them.
 * The packaging files name the library and the header relative to their own
 * directory (${pcfiledir}, ${CMAKE_CURRENT_LIST_DIR}), which is the
 * library's, so the whole directory can move.
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

/* path as make reads a target or prerequisite: a space or tab after a
 * backslash, the backslashes before it doubled (as gcc writes them), '$' as
 * "$$", '#' as "\#". A newline cannot be written: -1 (reported). */
static int make_escape(Buf *b, const char *path, const char *what)
{
	if (strchr(path, '\n')) {
		diag_error(path, "a %s whose name holds a newline cannot be written into a make depfile", what);
		return -1;
	}
	for (const char *p = path; *p; p++) {
		if (*p == ' ' || *p == '\t') {
			for (const char *q = p; q > path && q[-1] == '\\'; q--)
				buf_putc(b, '\\');
			buf_putc(b, '\\');
		} else if (*p == '#')
			buf_putc(b, '\\');
		else if (*p == '$')
			buf_putc(b, '$');
		buf_putc(b, *p);
	}
	return 0;
}

/* doccc's own executable: /proc/self/exe, else argv0 resolved (a path when
 * it holds a '/', else looked up in PATH), as an absolute path; NULL when
 * neither works (reported). */
static const char *self_exe(Arena *a, const char *argv0)
{
	char buf[PATH_MAX + 1];
	ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX);
	if (n > 0) {
		buf[n] = 0;
		return arena_strdup(a, buf);
	}
	const char *found = NULL;
	if (strchr(argv0, '/'))
		found = argv0;
	for (const char *p = getenv("PATH"); !found && p && *p;) {
		size_t len = strcspn(p, ":");
		const char *cand = arena_printf(a, "%.*s/%s", (int)len, len ? p : ".", argv0);
		if (access(cand, X_OK) == 0)
			found = cand;
		p += len + (p[len] == ':');
	}
	char *real = found ? realpath(found, NULL) : NULL;
	if (!real) {
		diag_error(argv0, "cannot find doccc's own executable (no /proc/self/exe) for the depfile");
		return NULL;
	}
	const char *r = arena_strdup(a, real);
	free(real);
	return r;
}

/* The depfile's path: -MF's, else the library's with its extension (.so,
 * .a) replaced by .d, or .d added when it has none. */
static const char *depfile_path(Arena *a, const BuildSys *s, const char *lib)
{
	if (s->mf)
		return s->mf;
	const char *base = path_base(lib), *dot = strrchr(base, '.');
	size_t n = dot && dot > base ? (size_t)(dot - lib) : strlen(lib);
	return arena_printf(a, "%.*s.d", (int)n, lib);
}

/* The regular files under dir, recursively, in name order (so the depfile
 * is the same every time), into ps. */
static void files_under(Arena *a, const char *dir, Paths *ps)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		if (strcmp(nm, ".") && strcmp(nm, "..")) {
			const char *p = arena_printf(a, "%s/%s", dir, nm);
			struct stat st;
			if (file_exists(p))
				VEC_PUSH(a, ps->v, ps->n, ps->cap, p);
			else if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
				files_under(a, p, ps); /* not through a link: no cycles */
		}
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
}

void compile_reads(Arena *a, const char *const files[4], Paths *ps)
{
	for (int i = 0; i < 4; i++)
		if (files[i])
			VEC_PUSH(a, ps->v, ps->n, ps->cap, files[i]);
	const char *in = files[0], *base = path_base(in);
	size_t dl = (size_t)(base - in);
	if (!files[1] && dl >= 7 && !strncmp(in + dl - 7, "models/", 7)) {
		const char *root = arena_strndup(a, in, dl - 7);
		if (file_exists(arena_printf(a, "%sdata/weights/model_weights_config.json", root))) {
			files_under(a, arena_printf(a, "%sdata/weights", root), ps);
			files_under(a, arena_printf(a, "%sdata/constants", root), ps);
		}
	}
}

/* What the compile read (compile_reads) and doccc's own executable. */
static int prerequisites(Arena *a, const BuildSys *s, const char *argv0, Paths *ps)
{
	compile_reads(a, s->prereqs, ps);
	const char *exe = self_exe(a, argv0);
	if (!exe)
		return -1;
	VEC_PUSH(a, ps->v, ps->n, ps->cap, exe);
	return 0;
}

static int depfile_text(Arena *a, const BuildSys *s, const char *argv0, const char *lib, Buf *b)
{
	Paths pre = {0};
	if (prerequisites(a, s, argv0, &pre))
		return -1;
	/* -MT targets go in as given (gcc's -MT); the default one is escaped. */
	for (int i = 0; i < s->nmt; i++)
		buf_printf(b, "%s%s", i ? " " : "", s->mt[i]);
	if (!s->nmt && make_escape(b, lib, "library"))
		return -1;
	buf_putc(b, ':');
	for (int i = 0; i < pre.n; i++) {
		buf_puts(b, " \\\n  ");
		if (make_escape(b, pre.v[i], "prerequisite"))
			return -1;
	}
	buf_putc(b, '\n');
	for (int i = 0; i < pre.n; i++) {
		buf_putc(b, '\n');
		make_escape(b, pre.v[i], "prerequisite");
		buf_puts(b, ":\n");
	}
	return 0;
}

/* A static archive is linked by path; a shared library by -lNAME for
 * libNAME.so, else by -l:FILE (GNU ld and lld), so that the program
 * records the library's file name, not a path (it has no soname). */
static int is_static(const char *lib)
{
	size_t n = strlen(lib);
	return n > 2 && !strcmp(lib + n - 2, ".a");
}

/* s with a backslash before each character of special: a .pc value's
 * (PC_SPECIAL: pkg-config splits values as a shell does, '#' starts a
 * comment) or a CMake quoted argument's (CMAKE_SPECIAL, ';' too: a
 * property's value is a list). */
#define PC_SPECIAL " \t\\\"'#$"
#define CMAKE_SPECIAL "\\\"$;"
static void backslash_escape(Buf *b, const char *s, const char *special)
{
	for (; *s; s++) {
		if (strchr(special, *s))
			buf_putc(b, '\\');
		buf_putc(b, *s);
	}
}

static void pc_text(const char *name, const Target *t, const char *lib, Buf *b)
{
	const char *file = path_base(lib);
	buf_printf(b, "# %s.pc: the library doccc %s compiled from the model %s (target %s, category %s).\n"
	              "# Paths are relative to this file's directory, so the directory can move.\n"
	              "libdir=${pcfiledir}\nincludedir=${pcfiledir}\n\n"
	              "Name: %s\nDescription: torch.export model %s compiled by doccc (target %s)\nVersion: %s\n"
	              "Cflags: -I${includedir}\nLibs:",
	           name, DOCCC_VERSION, name, t->name, t->category, name, name, t->name, DOCCC_VERSION);
	if (is_static(lib)) {
		buf_puts(b, " ${libdir}/");
		backslash_escape(b, file, PC_SPECIAL);
		const char *uses = backend_link_flags(t, 1);
		buf_printf(b, "%s%s\n", *uses ? " " : "", uses);
		return;
	}
	/* The run path: the program finds the library where it was linked,
	 * without LD_LIBRARY_PATH. */
	buf_puts(b, " -L${libdir} -Wl,-rpath,${libdir} -l");
	size_t n = strlen(file);
	if (n > 6 && !strncmp(file, "lib", 3) && !strcmp(file + n - 3, ".so"))
		buf_printf(b, "%.*s\n", (int)(n - 6), file + 3);
	else {
		buf_putc(b, ':');
		backslash_escape(b, file, PC_SPECIAL);
		buf_putc(b, '\n');
	}
}

static void cmake_text(const char *name, const Target *t, const char *lib, Buf *b)
{
	int st = is_static(lib);
	buf_printf(b, "# %sConfig.cmake: the library doccc %s compiled from the model %s (target %s,\n"
	              "# category %s), as the imported target doccc::%s. Paths are relative to this\n"
	              "# file's directory, so the directory can move.\n"
	              "if(NOT TARGET doccc::%s)\n"
	              "  add_library(doccc::%s %s IMPORTED)\n"
	              "  set_target_properties(doccc::%s PROPERTIES\n"
	              "    IMPORTED_LOCATION \"${CMAKE_CURRENT_LIST_DIR}/",
	           name, DOCCC_VERSION, name, t->name, t->category, name, name, name, st ? "STATIC" : "SHARED", name);
	backslash_escape(b, path_base(lib), CMAKE_SPECIAL);
	buf_puts(b, "\"\n    INTERFACE_INCLUDE_DIRECTORIES \"${CMAKE_CURRENT_LIST_DIR}\"");
	if (!st) {
		/* no soname: link by -l, so the program records the file name */
		buf_puts(b, "\n    IMPORTED_NO_SONAME TRUE");
	} else {
		buf_puts(b, "\n    IMPORTED_LINK_INTERFACE_LANGUAGES C\n    INTERFACE_LINK_LIBRARIES \"");
		const char *uses = backend_link_flags(t, 1);
		for (const char *p = uses; *p; p++)
			buf_putc(b, *p == ' ' ? ';' : *p);
		buf_putc(b, '"');
	}
	buf_puts(b, ")\nendif()\n");
}

int buildsys_write(Arena *a, const BuildSys *s, const char *argv0, const char *name, const Target *t,
                   const BuildArgs *ba)
{
	const char *path[3] = {NULL, NULL, NULL};
	Buf text[3] = {{0}, {0}, {0}};
	int rc = 0;
	if (s->pkgconfig) {
		path[0] = arena_printf(a, "%.*s%s.pc", (int)(path_base(ba->outlib) - ba->outlib), ba->outlib, name);
		pc_text(name, t, ba->outlib, &text[0]);
	}
	if (s->cmake) {
		path[1] = arena_printf(a, "%.*s%sConfig.cmake", (int)(path_base(ba->outlib) - ba->outlib), ba->outlib, name);
		cmake_text(name, t, ba->outlib, &text[1]);
	}
	if (s->depfile) {
		path[2] = depfile_path(a, s, ba->outlib);
		rc = depfile_text(a, s, argv0, ba->outlib, &text[2]);
	}
	/* the depfile last: make sees it only once everything it describes is there */
	int failed = 0;
	for (int i = 0; rc == 0 && i < 3; i++)
		if (path[i] && file_write(path[i], text[i].s, text[i].len)) {
			rc = -1;
			failed = i;
		}
	for (int i = 0; i < failed; i++)
		if (path[i])
			unlink(path[i]); /* written by this call before the one that failed */
	for (int i = 0; i < 3; i++)
		buf_free(&text[i]);
	return rc;
}
