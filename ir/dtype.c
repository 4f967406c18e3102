/*
 * dtype.c - the element types doccc supports and the name tables of ir.h.
 *
 * dtype_info is indexed by Dtype and gives every spelling a type has in the
 * formats doccc reads and writes: torch's name and ScalarType number (the
 * export schema), the C storage type, the numpy descr (.npy files) and the
 * safetensors dtype string. bfloat16 is stored as its raw 16 bits
 * (uint16_t, "<u2" in .npy by convention); float16 uses C23/clang's
 * _Float16. The other tables here (tcode_name, sched_name, and the names
 * the SDFG dump gives the IR's other enums, which its reader looks up) are
 * kept in step with their enums by static asserts on the count, so adding
 * an enum value without its name fails to compile.
 */
#include <stdio.h>
#include <string.h>

#include "ir.h"

const DtypeInfo dtype_info[NDTYPES] = {
	[DT_F32] = {"float32", "float", "<f4", 4, 1, 7, "F32"},
	[DT_F64] = {"float64", "double", "<f8", 8, 1, 8, "F64"},
	[DT_F16] = {"float16", "_Float16", "<f2", 2, 1, 6, "F16"},
	[DT_BF16] = {"bfloat16", "uint16_t", "<u2", 2, 1, 13, "BF16"},
	[DT_I64] = {"int64", "int64_t", "<i8", 8, 0, 5, "I64"},
	[DT_I32] = {"int32", "int32_t", "<i4", 4, 0, 4, "I32"},
	[DT_I16] = {"int16", "int16_t", "<i2", 2, 0, 3, "I16"},
	[DT_I8] = {"int8", "int8_t", "|i1", 1, 0, 2, "I8"},
	[DT_U8] = {"uint8", "uint8_t", "|u1", 1, 0, 1, "U8"},
	[DT_BOOL] = {"bool", "_Bool", "|b1", 1, 0, 12, "BOOL"},
};

/* Every ScalarType of the export schema, supported or not, so messages can
 * name what the model uses ("complex64 is not supported"). */
static const char *const torch_st_names[] = {
	[0] = "unknown",
	[1] = "uint8",
	[2] = "int8",
	[3] = "int16",
	[4] = "int32",
	[5] = "int64",
	[6] = "float16",
	[7] = "float32",
	[8] = "float64",
	[9] = "complex32",
	[10] = "complex64",
	[11] = "complex128",
	[12] = "bool",
	[13] = "bfloat16",
	[28] = "uint16",
	[29] = "float8_e4m3fn",
	[30] = "float8_e5m2",
	[31] = "float8_e4m3fnuz",
	[32] = "float8_e5m2fnuz",
	[33] = "float8_e8m0fnu",
	[34] = "uint32",
	[35] = "uint64",
};

int dtype_from_torch(int st)
{
	for (int i = 0; i < NDTYPES; i++)
		if (dtype_info[i].torch_st == st) return i;
	return -1;
}

const char *dtype_torch_name(int st)
{
	/* Names for numbers outside the table are built once per number in a
	 * small ring of static buffers; they only ever appear in messages. */
	static char ring[4][32];
	static int next;
	if (st >= 0 && st < (int)COUNTOF(torch_st_names) && torch_st_names[st])
		return torch_st_names[st];
	char *s = ring[next++ & 3];
	snprintf(s, sizeof ring[0], "unknown(%d)", st);
	return s;
}

int dtype_from_npy(const char *descr)
{
	if (!descr) return -1;
	for (int i = 0; i < NDTYPES; i++) {
		const char *n = dtype_info[i].npy;
		if (!strcmp(n, descr)) return i;
		/* Byte order is irrelevant for one-byte types and '=' means native
		 * (little-endian on every target doccc supports). */
		if ((descr[0] == '=' || (dtype_info[i].size == 1 && (descr[0] == '<' || descr[0] == '|'))) &&
		    !strcmp(n + 1, descr + 1))
			return i;
	}
	return -1;
}

int dtype_from_st(const char *st)
{
	if (!st) return -1;
	for (int i = 0; i < NDTYPES; i++)
		if (!strcmp(dtype_info[i].st, st)) return i;
	return -1;
}

/* ---- tasklet codes ---------------------------------------------------------- */
const TCodeInfo tcode_info[] = {
#define X(c, n, a, v) [c] = {n, a, v},
	TCODES(X)
#undef X
};
_Static_assert(COUNTOF(tcode_info) == NTCODES, "tcode_info out of step with TCode");

const char *const tcode_name[] = {
#define X(c, n, a, v) [c] = n,
	TCODES(X)
#undef X
};

int tcode_arity(TCode c)
{
	return (unsigned)c < NTCODES ? tcode_info[c].arity : -1;
}

/* ---- schedules --------------------------------------------------------------- */
const char *const sched_name[] = {
	[SCHED_SEQ] = "sequential",
	[SCHED_PARALLEL] = "parallel",
	[SCHED_VECTOR] = "vector",
	[SCHED_UNROLL] = "unroll",
	[SCHED_GPU_BLOCK] = "gpu_block",
	[SCHED_GPU_THREAD] = "gpu_thread",
	[SCHED_ROLLED] = "rolled",
};
_Static_assert(COUNTOF(sched_name) == NSCHEDS, "sched_name out of step with Sched");

/* ---- the SDFG dump's names (dump.c writes them, read.c reads them) ------------- */
const char *const ckind_name[] = {
	[CK_INPUT] = "input", [CK_OUTPUT] = "output", [CK_CONST] = "const",
	[CK_TRANSIENT] = "transient", [CK_VIEW] = "view", [CK_LOCAL] = "local", [CK_STATE] = "state",
};
_Static_assert(COUNTOF(ckind_name) == CK_STATE + 1, "ckind_name out of step with CKind");

const char *const wcr_name[] = {[W_NONE] = "none", [W_SUM] = "sum", [W_MAX] = "max", [W_MIN] = "min", [W_PROD] = "prod"};
_Static_assert(COUNTOF(wcr_name) == W_PROD + 1, "wcr_name out of step with Wcr");

const char *const node_kind_name[] = {[N_SEQ] = "sequence", [N_BLOCK] = "block", [N_MAP] = "map", [N_FOR] = "for"};
_Static_assert(COUNTOF(node_kind_name) == N_FOR + 1, "node_kind_name out of step with NodeKind");

const char *const sym_kind_name[] = {[SYM_SHAPE] = "shape", [SYM_LOOP] = "loop", [SYM_VALUE] = "value"};
_Static_assert(COUNTOF(sym_kind_name) == SYM_VALUE + 1, "sym_kind_name out of step with SymKind");

const char *const guard_op_name[] = {[G_EQ] = "eq", [G_NE] = "ne", [G_LT] = "lt", [G_LE] = "le"};
_Static_assert(COUNTOF(guard_op_name) == G_LE + 1, "guard_op_name out of step with GuardOp");
