/*
 * cmd.h - the driver's pieces: argv parsing and orchestration live in
 * doccc.c; `doccc run` lives in run.c, `doccc check` in check.c. Exit codes
 * are the CLI's contract.
 */
#ifndef DOCCC_CMD_H
#define DOCCC_CMD_H

#include "../ir/ir.h"

enum {
	EXIT_OK = 0,
	EXIT_INPUT = 1,     /* bad input, unsupported model, run-time failure */
	EXIT_USAGE = 2,     /* bad command line */
	EXIT_CC = 3         /* the external compiler failed */
};

/* doccc run LIB -i IN.npy... -o OUT.npy... [--repeat N] [--threads N]
 *               [--weights FILE] [--warmup N] [-q]
 * argv[0] is "run". Returns an exit code. */
int cmd_run(int argc, char **argv);

/* doccc check MODEL [--json] (check.c): the op census, dtypes, dynamic
 * dims and GPU verdict of a program, without compiling. Exit 0 when the
 * model is supported, 1 when not. */
int cmd_check(Arena *a, const char *name, const ImportArgs *ia, Options *o, const Target *tg, int json);

#endif
