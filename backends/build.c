/*
 * build.c - weights layout, files, and the C compiler.
 *
 * Every live constant is placed at a 64-byte aligned offset of one blob.
 * The blob reaches the library without passing through the C compiler: an
 * assembler file holds `.incbin "weights.bin"`, so compile time does not grow
 * with the model. With --external-weights it is written instead to
 * NAME.weights (a 128-byte header: magic "DOCCCW01", size, the blob's
 * sha256 in hex, then the blob), which create() maps and checks.
 *
 * clang runs through lib/spawn (argv vector, -v echoes it). Everything is
 * produced in the working directory first; only when all of it succeeded
 * are the outputs copied to their final paths, each through a temporary
 * name and a rename, and a failure part-way removes what was written.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit.h"

void blob_layout(Sdfg *g, Blob *b)
{
	size_t off = 0;
	for (int i = 0; i < g->ncs; i++) {
		Container *c = &g->cs[i];
		if (c->kind != CK_CONST || c->dead)
			continue;
		off = (off + 63) & ~(size_t)63;
		c->wofs = (int64_t)off;
		off += (size_t)(sdfg_numel(g, i) * dtype_info[c->dt].size);
	}
	b->size = off;
	b->data = arena_alloc_aligned(g->arena, off ? off : 1, 64);
	for (int i = 0; i < g->ncs; i++) {
		Container *c = &g->cs[i];
		if (c->kind != CK_CONST || c->dead)
			continue;
		memcpy(b->data + c->wofs, c->data, (size_t)(sdfg_numel(g, i) * dtype_info[c->dt].size));
	}
	Sha256 h;
	unsigned char d[32];
	sha256_init(&h);
	sha256_update(&h, b->data, b->size);
	sha256_final(&h, d);
	sha256_hex(d, b->sha);
}

/* Copy a file of the working directory to its final place (atomically). */
static int install(const char *from, const char *to, int mode)
{
	size_t len;
	char *data = file_read(from, &len);
	if (!data)
		return -1;
	int rc = file_write(to, data, len);
	free(data);
	if (rc == 0)
		chmod(to, (mode_t)mode);
	return rc;
}

int backend_build(Sdfg *g, const Target *t, const BuildArgs *a)
{
	Arena *ar = g->arena;
	const char *nm = g->name;
	Blob w = {0};
	blob_layout(g, &w);
	Buf src = {0}, hdr = {0};
	emit_source(g, t, &printer_cpu, a, &w, &src);
	emit_h(g, t, a, &hdr);
	char *csrc = arena_printf(ar, "%s/%s.c", a->workdir, nm);
	char *chdr = arena_printf(ar, "%s/%s.h", a->workdir, nm);
	char *wbin = arena_printf(ar, "%s/weights.bin", a->workdir);
	char *wasm = arena_printf(ar, "%s/weights.S", a->workdir);
	char *lib = arena_printf(ar, "%s/lib%s.so", a->workdir, nm);
	char *wext = arena_printf(ar, "%s/%s.weights", a->workdir, nm);
	int rc = file_write(csrc, src.s, src.len) || file_write(chdr, hdr.s, hdr.len);
	buf_free(&src);
	buf_free(&hdr);
	if (rc)
		return 1;
	int embed = w.size && !a->outweights;
	if (embed) {
		Buf as = {0};
		buf_printf(&as, "/* weights of %s: %zu bytes, sha256 %s */\n"
		                "\t.section .rodata.doccc_weights,\"a\",@progbits\n\t.balign 64\n"
		                "\t.globl %s_weights_blob\n\t.hidden %s_weights_blob\n\t.type %s_weights_blob, @object\n"
		                "%s_weights_blob:\n\t.incbin \"%s\"\n\t.size %s_weights_blob, .-%s_weights_blob\n"
		                "\t.section .note.GNU-stack,\"\",@progbits\n",
		           nm, w.size, w.sha, nm, nm, nm, nm, wbin, nm, nm);
		rc = file_write(wbin, w.data, w.size) || file_write(wasm, as.s, as.len);
		buf_free(&as);
		if (rc)
			return 1;
	}
	if (a->outweights) {
		size_t n = 128 + w.size;
		unsigned char *f = calloc(1, n);
		if (!f) {
			diag_error(NULL, "out of memory");
			return 1;
		}
		memcpy(f, "DOCCCW01", 8);
		uint64_t sz = w.size;
		memcpy(f + 8, &sz, 8);
		memcpy(f + 16, w.sha, 64);
		memcpy(f + 128, w.data, w.size);
		rc = file_write(wext, f, n);
		free(f);
		if (rc)
			return 1;
	}
	/* clang */
	const char *argv[48];
	int n = 0;
	argv[n++] = "clang";
	argv[n++] = "-std=c11";
	argv[n++] = t->opt;
	argv[n++] = "-fPIC";
	argv[n++] = "-shared";
	argv[n++] = "-fno-math-errno";
	argv[n++] = "-fwrapv"; /* integer overflow wraps, as in PyTorch's kernels in practice */
	if (t->kind != TG_NONE) {
		argv[n++] = arena_printf(ar, "-march=%s", t->march);
		if (t->vec_bits == 512)
			argv[n++] = "-mprefer-vector-width=512";
	}
	if (t->kind == TG_OPENMP)
		argv[n++] = "-fopenmp";
	argv[n++] = "-I";
	argv[n++] = a->workdir;
	argv[n++] = "-o";
	argv[n++] = lib;
	argv[n++] = csrc;
	if (embed)
		argv[n++] = wasm;
	argv[n++] = "-lm";
	argv[n] = NULL;
	char *err = NULL;
	int st = spawn_run((char *const *)argv, &err);
	if (st != 0) {
		if (st > 0) {
			diag_error(NULL, "the C compiler failed (clang exit status %d) compiling the generated %s.c", st, nm);
			if (err && *err)
				fputs(err, stderr);
			diag_note(NULL, "rerun with -v to see the command and --keep-temps to keep the generated source");
		}
		free(err);
		return st > 0 ? 3 : 1;
	}
	if (err && *err)
		fputs(err, stderr); /* warnings */
	free(err);
	/* Install: header, source, weights, library; undo on failure. */
	const char *from[4] = {chdr, a->outsrc ? csrc : NULL, a->outweights ? wext : NULL, lib};
	const char *to[4] = {a->outhdr, a->outsrc, a->outweights, a->outlib};
	int modes[4] = {0644, 0644, 0644, 0755};
	for (int i = 0; i < 4; i++) {
		if (!from[i])
			continue;
		if (install(from[i], to[i], modes[i])) {
			for (int j = 0; j < i; j++)
				if (from[j])
					unlink(to[j]);
			return 1;
		}
	}
	return 0;
}
