/*
 * qemu_insn.c - a qemu-user TCG plugin that counts the guest instructions
 * a process executes, for test/bench_arm.py (instructions per
 * multiply-add of an aarch64 library under emulation).
 *
 *   cc -shared -fPIC -o qemu_insn.so qemu_insn.c
 *   qemu-aarch64 -plugin ./qemu_insn.so,out=FILE PROGRAM...
 *
 * Each translated block adds its instruction count to one counter when it
 * starts (an inline add: cheap, and exact for blocks that run to their
 * end; an exception or a signal in a block's middle counts it whole). The
 * count goes to FILE at exit (or to qemu's log). The declarations are the
 * few functions of qemu's plugin API (version 1, qemu 7.2) this uses,
 * written from its documentation; qemu resolves them when it loads the
 * plugin. Counts from several vCPUs (threads) race, so count one thread.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void *userdata);
void qemu_plugin_outs(const char *string);
int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info, int argc, char **argv);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t insns;
static char out[4096];

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns, qemu_plugin_tb_n_insns(tb));
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	(void)id, (void)p;
	char line[64];
	snprintf(line, sizeof line, "insns %llu\n", (unsigned long long)insns);
	FILE *f = *out ? fopen(out, "w") : NULL;
	if (f) {
		fputs(line, f);
		fclose(f);
	} else
		qemu_plugin_outs(line);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
                                                                int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			snprintf(out, sizeof out, "%s", argv[i] + 4);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
