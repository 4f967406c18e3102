/*
 * spawn.c - running other programs (the C compiler, hipcc, nvcc) and
 * tracking temporary files.
 *
 * spawn_run starts argv[0] with posix_spawnp (PATH lookup, no shell). The
 * child's stdout is joined to our stderr, so nothing it prints can corrupt
 * an output that goes to our stdout; its stderr goes into a pipe that we
 * read to EOF before waitpid, so a child that writes a lot never blocks on
 * a full pipe. The captured text is handed to the caller (a failing
 * compiler's messages are passed on with context) or dropped when the
 * caller passed NULL. With spawn_verbose the command is first echoed to
 * stderr, quoted so that it can be pasted into a POSIX shell. spawn_run_in
 * runs the child in another directory (the compilers run in the working
 * directory, on relative paths, so that their command lines do not depend
 * on where it is and a compiler cache can hit); the echo then starts with
 * "cd DIR && ", and goes through progress_puts (a progress line shown is
 * erased around it). spawn_run_io also gives the child a file as its stdin
 * and another for its stdout (doccc tune's timing harness, and its runner
 * reading a script). spawn_words splits a command variable (DOCC_CC="ccache
 * clang") into argv words on blanks, without a shell.
 *
 * The child runs in a process group of its own, so that a signal meant
 * for doccc reaches it only through us: SIGINT or SIGTERM (a ^C goes to
 * the terminal's foreground group, which is doccc alone) is passed on to
 * the child's whole group (clang's cc1, nvcc's stages), which is reaped
 * before doccc removes its temporaries and dies of the same signal. The
 * two signals are blocked from before posix_spawnp until the child's id
 * is recorded (the child itself starts with our original mask), so no
 * child can escape the handler.
 *
 * The temporary registry is a list of malloc'd paths. The first
 * tmp_register installs an atexit handler and SIGINT/SIGTERM handlers; each
 * removes the registered paths (rm_rf), unless tmp_keep is set; paths
 * registered with tmp_register_output (file_write's temporary names) go
 * even then. The registry is changed with the two signals blocked, so the
 * handler never sees it half-updated. The signal handler then restores the
 * default action and re-raises, so the exit status still says "killed by
 * SIGINT". (rm_rf is not async-signal-safe; the compiler is
 * single-threaded and is being interrupted, most often while it waits for
 * the child in read(), which makes this the usual compromise for a
 * command-line tool.)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib.h"

extern char **environ;

int spawn_verbose;
int tmp_keep;

static char **tmp_paths;
static unsigned char *tmp_always; /* 1: removed even with tmp_keep */
static int tmp_npaths, tmp_cap;
static int tmp_installed;
static volatile pid_t spawn_child; /* the running child (its group's id), or 0 */

/* Block (or restore) the signals whose handler reads the registry and
 * spawn_child. */
static void spawn_block(sigset_t *old)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGTERM);
	sigprocmask(SIG_BLOCK, &s, old);
}

static void spawn_unblock(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* Append arg to b, quoted for a POSIX shell when it needs it. */
static void spawn_quote(Buf *b, const char *arg)
{
	static const char safe[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,+-";
	if (*arg && strspn(arg, safe) == strlen(arg)) {
		buf_puts(b, arg);
		return;
	}
	buf_putc(b, '\'');
	for (const char *p = arg; *p; p++) {
		if (*p == '\'')
			buf_puts(b, "'\\''");
		else
			buf_putc(b, *p);
	}
	buf_putc(b, '\'');
}

/* 0 if prog names an executable file, directly (with a '/') or in $PATH;
 * else an errno value. posix_spawnp reports a missing program itself on
 * current glibc, but not everywhere (older C libraries, valgrind): there
 * the child exits with 127 and the cause is lost, so look first. */
static int spawn_find(const char *prog, Buf *found)
{
	if (strchr(prog, '/')) {
		if (found)
			buf_puts(found, prog);
		return access(prog, X_OK) == 0 ? 0 : errno;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin"; /* what execvp assumes */
	int err = ENOENT;
	Buf f = {0};
	for (const char *p = path;; p++) {
		size_t n = strcspn(p, ":");
		f.len = 0;
		buf_putn(&f, n ? p : ".", n ? n : 1); /* an empty entry means "." */
		buf_putc(&f, '/');
		buf_puts(&f, prog);
		struct stat st;
		if (stat(f.s, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(f.s, X_OK) == 0) {
				err = 0;
				if (found)
					buf_puts(found, f.s);
				break;
			}
			err = EACCES;
		}
		p += n;
		if (!*p)
			break;
	}
	buf_free(&f);
	return err;
}

char **spawn_words(Arena *a, const char *s, int *n)
{
	static const char blanks[] = " \t\n";
	int k = 0;
	for (const char *p = s + strspn(s, blanks); *p; p += strspn(p, blanks)) {
		k++;
		p += strcspn(p, blanks);
	}
	char **v = arena_alloc(a, (size_t)(k + 1) * sizeof *v);
	k = 0;
	for (const char *p = s + strspn(s, blanks); *p; p += strspn(p, blanks)) {
		size_t len = strcspn(p, blanks);
		v[k++] = arena_strndup(a, p, len);
		p += len;
	}
	v[k] = NULL;
	*n = k;
	return v;
}

char *spawn_which(Arena *a, const char *prog)
{
	Buf f = {0};
	char *real = NULL, *r = NULL;
	if (spawn_find(prog, &f) == 0 && (real = realpath(f.s, NULL)))
		r = arena_strdup(a, real);
	free(real);
	buf_free(&f);
	return r;
}

int spawn_run(char *const argv[], char **err)
{
	return spawn_run_in(NULL, argv, err);
}

int spawn_run_in(const char *dir, char *const argv[], char **err)
{
	return spawn_run_io(dir, argv, NULL, NULL, err);
}

int spawn_run_io(const char *dir, char *const argv[], const char *in, const char *outpath, char **err)
{
	if (err)
		*err = NULL;
	DOCC_ASSERT(argv && argv[0]);
	if (spawn_verbose) {
		Buf cmd = {0};
		if (dir) {
			buf_puts(&cmd, "cd ");
			spawn_quote(&cmd, dir);
			buf_puts(&cmd, " && ");
		}
		for (int i = 0; argv[i]; i++) {
			if (i)
				buf_putc(&cmd, ' ');
			spawn_quote(&cmd, argv[i]);
		}
		buf_putc(&cmd, '\n');
		progress_puts(cmd.s);
		buf_free(&cmd);
	}

	Buf prog = {0};
	if (dir && argv[0][0] != '/' && strchr(argv[0], '/'))
		buf_printf(&prog, "%s/", dir);
	buf_puts(&prog, argv[0]);
	int rc = spawn_find(prog.s, NULL);
	buf_free(&prog);
	if (rc) {
		diag_error(NULL, "cannot run '%s': %s", argv[0], strerror(rc));
		return -1;
	}
	/* Both ends close-on-exec: the child sees only the dup2'd copy. */
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		diag_error(NULL, "cannot run '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t mask;
	rc = posix_spawn_file_actions_init(&fa);
	/* Order matters: stdout becomes our stderr before stderr is replaced. */
	if (!rc && outpath)
		rc = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, outpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	else if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
	if (!rc && in)
		rc = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, in, O_RDONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
	if (!rc && dir)
		rc = posix_spawn_file_actions_addchdir_np(&fa, dir); /* glibc 2.29+ */
	int attr = !rc && !(rc = posix_spawnattr_init(&at));
	/* Its own process group; our signal mask from before the block. */
	spawn_block(&mask);
	if (!rc)
		rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
	if (!rc)
		rc = posix_spawnattr_setpgroup(&at, 0);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&at, &mask);
	pid_t pid = -1;
	if (!rc)
		rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
	if (!rc)
		spawn_child = pid;
	spawn_unblock(&mask);
	if (attr)
		posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc) {
		close(fds[0]);
		diag_error(NULL, "cannot run '%s': %s", argv[0], strerror(rc));
		return -1;
	}

	/* Read the child's stderr to EOF, then reap it; while a progress line
	 * is shown, wake every 250 ms to tick its time. */
	Buf out = {0};
	char chunk[4096];
	for (;;) {
		struct pollfd pf = {fds[0], POLLIN, 0};
		if (progress_active() && poll(&pf, 1, 250) == 0) {
			progress_tick();
			continue;
		}
		ssize_t n = read(fds[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EOF, or a read error: the status still tells */
		buf_putn(&out, chunk, (size_t)n);
	}
	close(fds[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			diag_error(NULL, "cannot wait for '%s': %s", argv[0], strerror(errno));
			spawn_child = 0;
			buf_free(&out);
			return -1;
		}
	}
	spawn_child = 0;
	if (err) {
		buf_putn(&out, "", 0); /* NUL-terminated even when empty */
		*err = out.s;
	} else {
		buf_free(&out);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* ---- temporary files ---- */

/* Remove the registered paths, newest first (files registered inside a
 * registered directory go before it); free the registry unless called
 * from the signal handler. */
static void tmp_remove(int from_signal)
{
	for (int i = tmp_npaths - 1; i >= 0; i--) {
		if (!tmp_keep || tmp_always[i])
			(void)rm_rf(tmp_paths[i]); /* nothing left to report to */
		if (!from_signal)
			free(tmp_paths[i]);
	}
	if (from_signal)
		return;
	free(tmp_paths);
	free(tmp_always);
	tmp_paths = NULL;
	tmp_always = NULL;
	tmp_npaths = tmp_cap = 0;
}

/* Pass the signal on to the child's group and reap the child: it gets two
 * seconds to go, then SIGKILL (a child that ignores SIGTERM must not keep
 * doccc, or itself, running). */
static void spawn_stop_child(int sig)
{
	pid_t pid = spawn_child;
	if (pid <= 0)
		return;
	kill(-pid, sig);
	for (int i = 0; i < 200; i++) {
		if (waitpid(pid, NULL, WNOHANG) != 0)
			return; /* reaped, or not ours any more */
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static void tmp_on_signal(int sig)
{
	progress_signal();
	spawn_stop_child(sig);
	tmp_remove(1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void tmp_install(void)
{
	tmp_installed = 1;
	if (atexit(tmp_cleanup) != 0)
		diag_warn(NULL, "cannot install the exit handler; temporary files may be left behind");
	static const int sigs[] = {SIGINT, SIGTERM};
	for (size_t i = 0; i < COUNTOF(sigs); i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = tmp_on_signal;
		sigemptyset(&sa.sa_mask);
		for (size_t k = 0; k < COUNTOF(sigs); k++)
			sigaddset(&sa.sa_mask, sigs[k]); /* one cleanup at a time */
		/* Leave a signal ignored if our parent ignored it (nohup, &). */
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(sigs[i], &sa, NULL) != 0)
			diag_warn(NULL, "cannot install a signal handler: %s", strerror(errno));
	}
}

static void tmp_add(const char *path, int always)
{
	if (!tmp_installed)
		tmp_install();
	char *copy = strdup(path);
	if (!copy) {
		fprintf(stderr, "doccc: fatal error: out of memory\n");
		abort();
	}
	sigset_t old;
	spawn_block(&old);
	if (tmp_npaths == tmp_cap) {
		int cap = tmp_cap ? 2 * tmp_cap : 8;
		char **p = realloc(tmp_paths, (size_t)cap * sizeof(*p));
		unsigned char *f = p ? realloc(tmp_always, (size_t)cap) : NULL;
		if (!f) {
			fprintf(stderr, "doccc: fatal error: out of memory\n");
			abort();
		}
		tmp_paths = p;
		tmp_always = f;
		tmp_cap = cap;
	}
	tmp_always[tmp_npaths] = (unsigned char)always;
	tmp_paths[tmp_npaths++] = copy;
	spawn_unblock(&old);
}

void tmp_register(const char *path)
{
	tmp_add(path, 0);
}

void tmp_register_output(const char *path)
{
	tmp_add(path, 1);
}

void tmp_unregister(const char *path)
{
	sigset_t old;
	spawn_block(&old);
	for (int i = tmp_npaths - 1; i >= 0; i--) {
		if (strcmp(tmp_paths[i], path))
			continue;
		free(tmp_paths[i]);
		memmove(tmp_paths + i, tmp_paths + i + 1, (size_t)(tmp_npaths - i - 1) * sizeof(*tmp_paths));
		memmove(tmp_always + i, tmp_always + i + 1, (size_t)(tmp_npaths - i - 1));
		tmp_npaths--;
		break;
	}
	spawn_unblock(&old);
}

void tmp_cleanup(void)
{
	sigset_t old;
	spawn_block(&old);
	tmp_remove(0);
	spawn_unblock(&old);
}

char *tmp_dir(Arena *a)
{
	const char *base = getenv("DOCC_TMP");
	if (base && *base) {
		if (!dir_exists(base) && mkdir_p(base) != 0)
			return NULL;
	} else {
		base = getenv("TMPDIR");
		if (!base || !*base)
			base = "/tmp";
	}
	Buf t = {0};
	buf_printf(&t, "%s/doccc-XXXXXX", base);
	if (!mkdtemp(t.s)) {
		diag_error(base, "cannot create a temporary directory: %s", strerror(errno));
		buf_free(&t);
		return NULL;
	}
	tmp_register(t.s);
	char *dir = arena_strdup(a, t.s);
	buf_free(&t);
	return dir;
}

double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}
