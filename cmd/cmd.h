/*
 * cmd.h - the driver's pieces: argv parsing and orchestration live in
 * doccc.c; `doccc run` lives in run.c. Exit codes are the CLI's contract.
 */
#ifndef DOCCC_CMD_H
#define DOCCC_CMD_H

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

#endif
