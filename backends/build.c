/*
 * build.c - weights layout, files, and the compilers.
 *
 * Every live constant is placed at a 64-byte aligned offset of one blob.
 * The blob reaches the library without passing through a compiler: doccc
 * writes it as an ELF object, weights.o, that the link takes (see "the
 * weights' files" below), so compile time does not grow with the model.
 * With --external-weights it is written instead to NAME.weights (a
 * 128-byte header: magic "DOCCCW01", size, the blob's sha256 in hex, then
 * the blob), which create() maps and checks.
 *
 * The printer, the source's suffix and the toolchain come from the
 * target's row of the backend table (target.c): the variable that names
 * its compiler (DOCC_CC, DOCC_NVCC, DOCC_HIPCC, DOCC_CXX for --simulate: a
 * command, a launcher included, split into words without a shell) and the
 * compile's and link's flags. A GPU row's runtime header is written beside
 * the source as doccc_gpu.h, with gpu_sim.h (both embedded in doccc at its
 * build). A build is two commands: the row's compiler
 * compiles the source to NAME.o, then links it with weights.o into the
 * library (or ar makes a static archive). They run in the working
 * directory on relative paths, so no command line depends on where the
 * directory is and a compiler cache (ccache) can hit on the compile. Compilers run through lib/spawn
 * (argv vector, -v echoes it with the cd). Everything is produced in the
 * working directory first; only when all of it succeeded are the outputs
 * moved to their final paths (a rename, or a copy through a temporary name
 * and a rename across file systems), and a failure part-way removes what
 * was written. Each of these steps names itself on the progress line
 * (lib/progress.c; nothing when it is off), the weights with their bytes.
 */
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emit.h"


void blob_layout(Sdfg *g, Blob *b)
{
	int64_t off = 0;
	for (int i = 0; i < g->ncs; i++) {
		Container *c = &g->cs[i];
		if (c->kind != CK_CONST || c->dead)
			continue;
		off = (off + 63) & ~(int64_t)63;
		c->wofs = off;
		off += sdfg_numel(g, i) * dtype_info[c->dt].size;
	}
	b->size = (size_t)off;
}

/* blob_write's second thread: it hashes and appends one constant's bytes
 * while the main thread makes the next (reading, checking the CRC,
 * packing), which about halves the time per GB. Only the main thread
 * touches the graph (consts.c is not thread-safe); the writer gets a job
 * (padding, then n bytes at d) and hands it back done. It counts the
 * bytes done in pieces of WRITER_PIECE, which the main thread, waiting
 * for it, shows on the progress line (a single constant may be a GB). */
enum { WRITER_PIECE = 64 << 20 };
typedef struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	Sha256 h;
	Ofile *f;
	const void *d;
	size_t pad, n;
	int busy, quit;
	int64_t from, done;   /* the job's offset in the blob, its bytes done */
	int64_t total;        /* the blob's size */
} Writer;

static void writer_do(Writer *w, const void *d, size_t pad, size_t n)
{
	static const unsigned char zeros[64];
	sha256_update(&w->h, zeros, pad);
	if (w->f)
		ofile_write(w->f, zeros, pad);
	for (size_t off = 0; off < n; off += WRITER_PIECE) {
		size_t k = MIN((size_t)WRITER_PIECE, n - off);
		sha256_update(&w->h, (const char *)d + off, k);
		if (w->f)
			ofile_write(w->f, (const char *)d + off, k);
		pthread_mutex_lock(&w->mu);
		w->done = (int64_t)(pad + off + k);
		pthread_mutex_unlock(&w->mu);
	}
}

static void *writer_main(void *arg)
{
	Writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->busy && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->busy)
			break;
		pthread_mutex_unlock(&w->mu);
		writer_do(w, w->d, w->pad, w->n);
		pthread_mutex_lock(&w->mu);
		w->busy = 0;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Wait until the writer is idle; with a progress line, show its bytes
 * every 100 ms meanwhile. */
static void writer_wait(Writer *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->busy) {
		if (!progress_active()) {
			pthread_cond_wait(&w->cv, &w->mu);
			continue;
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000 * 1000 * 1000)
			ts.tv_sec++, ts.tv_nsec -= 1000 * 1000 * 1000;
		if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) == ETIMEDOUT && w->busy) {
			int64_t at = w->from + w->done;
			pthread_mutex_unlock(&w->mu);
			progress_bytes(at, w->total);
			pthread_mutex_lock(&w->mu);
		}
	}
	pthread_mutex_unlock(&w->mu);
}

/* Hand the writer a job: pad bytes of zeros, then n at d, starting at
 * offset from of the blob. */
static void writer_post(Writer *w, const void *d, size_t pad, size_t n, int64_t from)
{
	pthread_mutex_lock(&w->mu);
	w->d = d, w->pad = pad, w->n = n, w->busy = 1;
	w->from = from, w->done = 0;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

int blob_write(Sdfg *g, Blob *b, Ofile *f)
{
	Writer w = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .f = f, .total = (int64_t)b->size};
	sha256_init(&w.h);
	pthread_t th;
	int threaded = pthread_create(&th, NULL, writer_main, &w) == 0; /* else all on this thread */
	int64_t at = 0, held = -1, rc = 0;
	for (int i = 0; i < g->ncs && !rc; i++) {
		Container *c = &g->cs[i];
		if (c->kind != CK_CONST || c->dead)
			continue;
		int64_t n = sdfg_numel(g, i) * dtype_info[c->dt].size, pad = c->wofs - at;
		const void *d = sdfg_const_get(g, i); /* while the writer has the one before */
		if (threaded)
			writer_wait(&w);
		progress_bytes(at, (int64_t)b->size); /* what the writer has done */
		if (held >= 0)
			sdfg_const_put(g, (int)held);
		held = -1;
		if (!d) {
			rc = -1;
			break;
		}
		if (threaded)
			writer_post(&w, d, (size_t)pad, (size_t)n, at);
		else
			writer_do(&w, d, (size_t)pad, (size_t)n);
		held = i;
		at = c->wofs + n;
	}
	if (threaded) {
		writer_wait(&w);
		pthread_mutex_lock(&w.mu);
		w.quit = 1;
		pthread_cond_broadcast(&w.cv);
		pthread_mutex_unlock(&w.mu);
		pthread_join(th, NULL);
	}
	if (held >= 0)
		sdfg_const_put(g, (int)held);
	if (rc)
		return -1;
	DOCC_ASSERT((size_t)at == b->size);
	unsigned char d[32];
	sha256_final(&w.h, d);
	sha256_hex(d, b->sha);
	return 0;
}

/* ---- the weights' files ----------------------------------------------------------
 * Both are written in one pass over the constants (blob_write), each made
 * when its turn comes, so neither doccc nor a tool after it holds the
 * weights whole: NAME.weights gets its header (which holds the sha256)
 * once the data is written; weights.o is an ELF relocatable object that
 * doccc writes itself, the blob as the one section holding the symbol
 * NAME_weights_blob (hidden), so no assembler reads it (an assembler's
 * .incbin holds the file twice in memory). Its machine, section name and
 * flags are the target architecture's (target.c's arch_table).
 */
static int write_weights_file(Sdfg *g, Blob *w, const char *path)
{
	Ofile f;
	if (ofile_open(&f, path))
		return -1;
	unsigned char hdr[WEIGHTS_HEADER] = {0};
	ofile_write(&f, hdr, sizeof hdr);
	if (blob_write(g, w, &f)) {
		ofile_abort(&f);
		return -1;
	}
	uint64_t sz = w->size;
	memcpy(hdr, WEIGHTS_MAGIC, 8);
	memcpy(hdr + 8, &sz, 8);
	memcpy(hdr + 16, w->sha, 64);
	ofile_pwrite(&f, hdr, sizeof hdr, 0);
	return ofile_close(&f, -1);
}

/* weights.o: header, the blob at offset 64, then symbols, names and the
 * section headers: null, the blob, .note.GNU-stack (no executable stack),
 * .symtab, .strtab, .shstrtab. */
static int write_weights_object(Sdfg *g, const Target *t, Blob *w, const char *path)
{
	const Arch *ar = arch_of(t);
	enum { S_BLOB = 1, S_STACK, S_SYMTAB, S_STRTAB, S_SHSTRTAB, NSEC };
	Buf shstr = {0};
	buf_putn(&shstr, "", 1);
	buf_putn(&shstr, ar->wsec, strlen(ar->wsec) + 1);
	buf_putn(&shstr, ".note.GNU-stack\0.symtab\0.strtab\0.shstrtab", sizeof ".note.GNU-stack\0.symtab\0.strtab\0.shstrtab");
	Buf str = {0};
	buf_putn(&str, "", 1);
	buf_printf(&str, "%s_weights_blob", g->name);
	size_t strn = str.len + 1;
	Elf64_Sym sym[2] = {{0}, {.st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT), .st_other = STV_HIDDEN,
	                          .st_shndx = S_BLOB, .st_size = w->size}};
	uint64_t symofs = (64 + w->size + 7) / 8 * 8, strofs = symofs + sizeof sym;
	uint64_t shofs = (strofs + strn + shstr.len + 7) / 8 * 8;
	Elf64_Ehdr eh = {.e_type = ET_REL, .e_machine = (Elf64_Half)ar->elf_machine, .e_version = EV_CURRENT, .e_shoff = shofs,
	                 .e_ehsize = sizeof eh, .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = NSEC, .e_shstrndx = S_SHSTRTAB};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	uint32_t n1 = 1, n2 = n1 + (uint32_t)strlen(ar->wsec) + 1, n3 = n2 + sizeof ".note.GNU-stack", n4 = n3 + sizeof ".symtab",
	         n5 = n4 + sizeof ".strtab";
	Elf64_Shdr sh[NSEC] = {
		{0},
		{.sh_name = n1, .sh_type = SHT_PROGBITS, .sh_flags = ar->wflags, .sh_offset = 64, .sh_size = w->size,
		 .sh_addralign = 64},
		{.sh_name = n2, .sh_type = SHT_PROGBITS, .sh_offset = 64, .sh_addralign = 1},
		{.sh_name = n3, .sh_type = SHT_SYMTAB, .sh_offset = symofs, .sh_size = sizeof sym, .sh_link = S_STRTAB,
		 .sh_info = 1, .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym)},
		{.sh_name = n4, .sh_type = SHT_STRTAB, .sh_offset = strofs, .sh_size = strn, .sh_addralign = 1},
		{.sh_name = n5, .sh_type = SHT_STRTAB, .sh_offset = strofs + strn, .sh_size = shstr.len, .sh_addralign = 1},
	};
	Ofile f;
	int rc = ofile_open(&f, path);
	if (!rc) {
		ofile_write(&f, &eh, sizeof eh);
		if ((rc = blob_write(g, w, &f)) != 0)
			ofile_abort(&f);
	}
	if (!rc) {
		ofile_zeros(&f, (size_t)(symofs - 64 - w->size));
		ofile_write(&f, sym, sizeof sym);
		ofile_write(&f, str.s, strn);
		ofile_write(&f, shstr.s, shstr.len);
		ofile_zeros(&f, (size_t)(shofs - (strofs + strn + shstr.len)));
		ofile_write(&f, sh, sizeof sh);
		rc = ofile_close(&f, -1);
	}
	buf_free(&str);
	buf_free(&shstr);
	return rc;
}

/* ---- running the toolchain ---------------------------------------------------------- */
void argv_add(Argv *a, const char *s)
{
	DOCC_ASSERT(a->n < ARGV_MAX - 1);
	a->v[a->n++] = s;
}

static const Tool tool_cc = {"DOCC_CC", "clang"}, tool_ar = {"DOCC_AR", "ar"};

/* The archiver of t: ar, or the cross archiver of its triple. */
static const Tool *ar_of(const Target *t)
{
	return t->triple ? &arch_of(t)->ar : &tool_ar;
}

/* The words of tool's command into av (its variable's, else the default);
 * the number of words, or 0 when the variable is set and empty or blank
 * (reported). A relative path among them (a word with a '/' that is not an
 * option) is made absolute: the compilers run in the working directory. */
static int tool_words(Arena *ar, const Tool *tl, Argv *av)
{
	const char *v = getenv(tl->env);
	int n;
	char **w = spawn_words(ar, v ? v : tl->dflt, &n);
	if (!n) {
		diag_error(NULL, "%s is empty or blank: set it to the command that runs %s, a launcher included "
		           "(%s=\"ccache %s\"), or unset it", tl->env, tl->dflt, tl->env, tl->dflt);
		return 0;
	}
	if (n > TOOL_WORDS) {
		diag_error(NULL, "%s has %d words, more than %d", tl->env, n, TOOL_WORDS);
		return 0;
	}
	char cwd[4096];
	for (int i = 0; i < n; i++) {
		if (w[i][0] != '/' && w[i][0] != '-' && strchr(w[i], '/') && getcwd(cwd, sizeof cwd))
			w[i] = arena_printf(ar, "%s/%s", cwd, w[i]);
		argv_add(av, w[i]);
	}
	return n;
}

/* The tools a build for t runs, each once, NULL where none. */
static void tools_used(const Target *t, int static_lib, const Tool *used[3])
{
	used[0] = &backend_toolchain(t)->cc;
	used[1] = static_lib ? ar_of(t) : NULL;
	used[2] = NULL;
}

int backend_check_tools(Arena *ar, const Target *t, int static_lib, const char **key)
{
	const char *argv[ARGV_MAX];
	Argv av = {argv, 0, ar};
	const Tool *used[3];
	tools_used(t, static_lib, used);
	int bad = 0;
	*key = "";
	for (size_t i = 0; i < COUNTOF(used); i++) {
		av.n = 0;
		if (!used[i])
			continue;
		bad |= !tool_words(ar, used[i], &av);
		const char *v = getenv(used[i]->env);
		*key = arena_printf(ar, "%s %s=%s", *key, used[i]->env, v ? v : used[i]->dflt);
	}
	/* a cross build with the default clang: its sysroot, named if missing */
	if (!bad && t->triple && !getenv(used[0]->env) && arch_check_sysroot(t, t->threads))
		bad = 1;
	return bad ? -1 : 0;
}

/* The directory of the runtime library lib that compiler cc links on its
 * own (clang -fopenmp: libomp in DIR/../lib, DIR where the clang binary
 * really is), or NULL when it is not there. */
static const char *runtime_dir(Arena *ar, const Tool *cc, const char *lib)
{
	const char *argv[ARGV_MAX];
	Argv av = {argv, 0, ar};
	int n = tool_words(ar, cc, &av);
	for (int i = 0; i < n; i++) {
		char *real = argv[i][0] == '-' ? NULL : spawn_which(ar, argv[i]);
		char *slash = real ? strrchr(real, '/') : NULL;
		if (!slash || strncmp(slash + 1, "clang", 5))
			continue; /* a launcher (ccache), an option */
		*slash = 0;
		slash = strrchr(real, '/');
		if (!slash)
			return NULL;
		*slash = 0;
		const char *dir = arena_printf(ar, "%s/lib", real);
		return file_exists(arena_printf(ar, "%s/%s", dir, lib)) ? dir : NULL;
	}
	return NULL;
}

const char *backend_link_flags(const Target *t, int static_lib)
{
	if (!static_lib)
		return ""; /* the shared library names its own dependencies */
	if (!t->threads)
		return backend_toolchain(t)->uses;
	if (t->triple && arch_of(t)->omp) { /* the target's libomp, by its file name (clang_ldflags) */
		static char cross[256];
		snprintf(cross, sizeof cross, "-l:%s -lm", arch_of(t)->omp);
		return cross;
	}
	/* clang's OpenMP runtime (libomp), which gcc's -fopenmp would not
	 * link: by its directory when it is not on the linker's default path */
	static char flags[4200];
	if (!*flags) {
		Arena *ar = arena_new();
		const char *dir = runtime_dir(ar, &tool_cc, "libomp.so");
		if (dir && strlen(dir) < 2000)
			snprintf(flags, sizeof flags, "-L%s -Wl,-rpath,%s -lomp -lm", dir, dir);
		else
			snprintf(flags, sizeof flags, "-lomp -lm");
		arena_free(ar);
	}
	return flags;
}

/* Run argv in the working directory dir; words: how many of its first
 * words are the tool's command (named in messages), tl where it came from. */
static int run_tool(const char *dir, const char **argv, int words, const Tool *tl, const char *what, const char *nm)
{
	char *err = NULL;
	int st = spawn_run_in(dir, (char *const *)argv, &err);
	if (st != 0) {
		Buf cmd = {0};
		for (int i = 0; i < words; i++)
			buf_printf(&cmd, "%s%s", i ? " " : "", argv[i]);
		if (st > 0) {
			diag_error(NULL, "%s failed (exit status %d) %s", cmd.s, st, what);
			if (err && *err)
				progress_puts(err);
			diag_note(NULL, "rerun with -v to see the command and --keep-temps to keep the generated source of %s", nm);
		} else if (getenv(tl->env)) {
			diag_note(NULL, "the command comes from %s ('%s')", tl->env, cmd.s);
		}
		buf_free(&cmd);
		free(err);
		return st > 0 ? 3 : 1;
	}
	if (err && *err)
		progress_puts(err); /* warnings */
	free(err);
	return 0;
}

int backend_build_program(Arena *ar, const Target *t, const char *dir, const char *src, const char *exe)
{
	const char *argv[ARGV_MAX];
	Argv av = {argv, 0, ar};
	int words;
	if (!(words = tool_words(ar, &backend_toolchain(t)->cc, &av)))
		return 1;
	if (t->triple)
		argv_add(&av, arena_printf(ar, "--target=%s", t->triple));
	const char *rest[] = {"-std=c11", "-O2", "-I", ".", "-o", exe, src, "-ldl", NULL};
	for (int i = 0; rest[i]; i++)
		argv_add(&av, rest[i]);
	argv[av.n] = NULL;
	return run_tool(dir, argv, words, &backend_toolchain(t)->cc, arena_printf(ar, "compiling %s", src), src);
}

int backend_build(Sdfg *g, const Target *t, BuildArgs *a)
{
	double t0 = now_ms();
	Arena *ar = g->arena;
	const char *nm = g->name, *wd = a->workdir;
	const Backend *be = backend_of(t);
	const Toolchain *tc = backend_toolchain(t);
	if ((a->profile || a->hooks) && be->device)
		diag_warn(NULL, "DOCC_DEBUG=%s instruments CPU builds only; ignored for -t %s", a->values ? "values" : "profile",
		          t->name);
	if (be->device)
		a->hooks = a->values = 0;
	/* The weights first: the source names their sha256. */
	Blob w = {0};
	blob_layout(g, &w);
	int embed = w.size && !a->outweights;
#define WD(f) arena_printf(ar, "%s/%s", wd, f)
	const char *wext = WD(arena_printf(ar, "%s.weights", nm));
	if (w.size)
		progress_phase("writing %s", a->outweights ? path_base(wext) : "weights");
	if (embed ? write_weights_object(g, t, &w, WD("weights.o")) : a->outweights ? write_weights_file(g, &w, wext)
	                                                                          : blob_write(g, &w, NULL))
		return 1;
	a->step_ms[0] = now_ms() - t0;
	progress_phase("emitting %s%s", nm, be->ext);
	Buf src = {0}, hdr = {0};
	emit_source(g, t, be->printer, a, &w, &src);
	emit_h(g, t, a, &hdr);
	/* Names in the working directory, where the commands run: relative,
	 * so that no command line depends on where it is. */
	const char *csrc = arena_printf(ar, "%s%s", nm, be->ext), *cobj = arena_printf(ar, "%s.o", nm);
	const char *lib = arena_printf(ar, "lib%s.%s", nm, a->static_lib ? "a" : "so");
	const char *chdr = WD(arena_printf(ar, "%s.h", nm));
	int rc = file_write(WD(csrc), src.s, src.len) || file_write(chdr, hdr.s, hdr.len);
	if (be->rt_header) { /* the runtime header, and the simulation's beside it */
		const char *rt = rt_text(be->rt_header), *sim = rt_text("gpu_sim.h");
		rc = rc || file_write(WD("doccc_gpu.h"), rt, strlen(rt)) || file_write(WD("gpu_sim.h"), sim, strlen(sim));
	}
	buf_free(&src);
	buf_free(&hdr);
	if (rc)
		return 1;
	/* Two steps: the compile of the source (what a compiler cache keeps),
	 * then the link (or ar for a static archive) with weights.o. */
	const char *argv[ARGV_MAX];
	Argv av = {argv, 0, ar};
	int words;
	const char *what = arena_printf(ar, "compiling the generated %s", csrc);
	av.n = 0;
	if (!(words = tool_words(ar, &tc->cc, &av)))
		return 1;
	tc->flags(&av, t);
	const char *ca[] = {"-I", ".", "-c", "-o", cobj, csrc, NULL};
	for (int i = 0; ca[i]; i++)
		argv_add(&av, ca[i]);
	argv[av.n] = NULL;
	progress_phase("compiling %s (%s)", csrc, path_base(argv[words - 1]));
	if ((rc = run_tool(wd, argv, words, &tc->cc, what, nm)))
		return rc;
	double t1 = now_ms();
	a->step_ms[1] = t1 - t0 - a->step_ms[0];
	const Tool *lt = a->static_lib ? ar_of(t) : &tc->cc;
	av.n = 0;
	if (!(words = tool_words(ar, lt, &av)))
		return 1;
	if (a->static_lib) {
		argv_add(&av, "rcsD"); /* D: no dates or owners, the archive is reproducible */
		argv_add(&av, lib);
	} else {
		argv_add(&av, "-shared");
		if (tc->ldflags)
			tc->ldflags(&av, t);
		argv_add(&av, "-o");
		argv_add(&av, lib);
	}
	argv_add(&av, cobj);
	if (embed)
		argv_add(&av, "weights.o");
	for (int i = 0; !a->static_lib && i < (int)COUNTOF(tc->libs) && tc->libs[i]; i++)
		argv_add(&av, tc->libs[i]);
	argv[av.n] = NULL;
	progress_phase("%s %s", a->static_lib ? "archiving" : "linking", lib);
	if ((rc = run_tool(wd, argv, words, lt, a->static_lib ? "making the archive" : "linking", nm)))
		return rc;
	if (a->static_lib && spawn_verbose)
		diag_note(a->outlib, "a program that links this archive also needs: %s", backend_link_flags(t, 1));
	double t2 = now_ms();
	a->step_ms[2] = t2 - t1;
	/* Install: header, source, weights, library; undo on failure. */
	const char *from[4] = {chdr, a->outsrc ? WD(csrc) : NULL, a->outweights ? wext : NULL, WD(lib)};
#undef WD
	const char *to[4] = {a->outhdr, a->outsrc, a->outweights, a->outlib};
	int modes[4] = {0644, 0644, 0644, a->static_lib ? 0644 : 0755};
	progress_phase("installing %s", path_base(a->outlib));
	for (int i = 0; i < 4; i++) {
		if (!from[i])
			continue;
		/* a kept working directory keeps everything, to rerun the commands */
		if (tmp_keep ? file_copy(from[i], to[i], modes[i]) : file_move(from[i], to[i], modes[i])) {
			for (int j = 0; j < i; j++)
				if (from[j])
					unlink(to[j]);
			return 1;
		}
	}
	a->step_ms[3] = now_ms() - t2;
	return 0;
}
