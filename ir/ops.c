/*
 * ops.c - the op tables of ops.h expanded: names, docs, and the ATen
 * schemas parsed into argument descriptions.
 *
 * Schemas are PyTorch's own strings ("aten::conv2d(Tensor input, ...,
 * SymInt[2] stride=[1, 1], ...) -> Tensor"). They are parsed once, lazily,
 * into SchemaArg arrays: name, type, optional, kw-only, fixed list length
 * and default text. The importer matches serialized node inputs against
 * them by name and fills in the defaults the serializer omitted.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "lower/lower.h"

static const char *const lib_names[] = {
#define X(e, n, f, d) n,
	LIB_OPS(X)
#undef X
};
static const char *const lib_docs[] = {
#define X(e, n, f, d) d,
	LIB_OPS(X)
#undef X
};
_Static_assert(COUNTOF(lib_names) == NLIBOPS, "LIB_OPS names out of step");

static AtenInfo aten_table[] = {
#define X(e, t, l, p, s) {t, s, NULL, #l, lower_##l, p, {{0}}, -1, 0, 0, NULL},
	ATEN_OPS(X)
#undef X
};
/* derived rows: lowering and parameter are their base's, filled at first use */
static AtenInfo variant_table[] = {
#define X(t, b, s) {t, s, b, NULL, NULL, 0, {{0}}, -1, 0, 0, NULL},
	ATEN_VARIANTS(X)
#undef X
};
_Static_assert(COUNTOF(aten_table) == NATENOPS, "ATEN_OPS out of step");

const char *op_name(int op)
{
	return op >= 0 && op < NLIBOPS ? lib_names[op] : "?";
}

const char *op_doc(int op)
{
	return op >= 0 && op < NLIBOPS ? lib_docs[op] : "?";
}

/* Static storage for parsed names and defaults: schemas are few and short. */
static char strpool[32768];
static size_t strpool_used;

static const char *pool_strndup(const char *s, size_t n)
{
	DOCC_ASSERT(strpool_used + n + 1 <= sizeof strpool);
	char *p = strpool + strpool_used;
	memcpy(p, s, n);
	p[n] = 0;
	strpool_used += n + 1;
	return p;
}

static ArgType parse_type(const char *t, size_t n, int *listlen, int *mutated, char *alias)
{
	char buf[64];
	size_t k = 0;
	*listlen = 0;
	*mutated = 0;
	*alias = 0;
	/* Drop alias annotations "(a)", "(a!)", keeping the set's letter. */
	for (size_t i = 0; i < n && k < sizeof buf - 1; i++) {
		if (t[i] == '(') {
			*alias = i + 1 < n ? t[i + 1] : 0;
			while (i < n && t[i] != ')') {
				if (t[i] == '!')
					*mutated = 1;
				i++;
			}
			continue;
		}
		buf[k++] = t[i];
	}
	buf[k] = 0;
	char *br = strchr(buf, '[');
	int islist = 0;
	if (br) {
		islist = 1;
		*listlen = atoi(br + 1);
		*br = 0;
	}
	if (!strcmp(buf, "Tensor"))
		return islist ? AT_TENSOR_LIST : AT_TENSOR;
	if (!strcmp(buf, "int") || !strcmp(buf, "SymInt"))
		return islist ? AT_INTS : AT_INT;
	if (!strcmp(buf, "float"))
		return islist ? AT_FLOATS : AT_FLOAT;
	if (!strcmp(buf, "bool"))
		return AT_BOOL;
	if (!strcmp(buf, "Scalar"))
		return AT_SCALAR;
	if (!strcmp(buf, "str"))
		return AT_STR;
	if (!strcmp(buf, "ScalarType"))
		return AT_SCALAR_TYPE;
	if (!strcmp(buf, "Layout"))
		return AT_LAYOUT;
	if (!strcmp(buf, "Device"))
		return AT_DEVICE;
	if (!strcmp(buf, "MemoryFormat"))
		return AT_MEMORY_FORMAT;
	return AT_OTHER;
}

/* Parse "aten::name(args) -> rets" into info->args. */
static void parse_schema(AtenInfo *info)
{
	const char *s = strchr(info->schema, '(');
	DOCC_ASSERT(s);
	s++;
	int kwonly = 0;
	info->nargs = 0;
	while (*s && *s != ')') {
		while (*s == ' ' || *s == ',')
			s++;
		if (*s == '*') {
			kwonly = 1;
			s++;
			continue;
		}
		/* type: up to the space that precedes the name (types contain no
		 * spaces except inside "[1, 1]" defaults, which come later). */
		const char *t = s;
		int depth = 0;
		while (*s && !(*s == ' ' && depth == 0)) {
			if (*s == '(' || *s == '[')
				depth++;
			if (*s == ')' || *s == ']')
				depth--;
			s++;
		}
		size_t tn = (size_t)(s - t);
		int optional = tn > 0 && t[tn - 1] == '?';
		SchemaArg *a = &info->args[info->nargs++];
		DOCC_ASSERT(info->nargs <= (int)COUNTOF(info->args));
		a->type = parse_type(t, optional ? tn - 1 : tn, &a->listlen, &a->mutated, &a->alias);
		a->optional = optional;
		a->kwonly = kwonly;
		s++;
		const char *nm = s;
		while (*s && (isalnum((unsigned char)*s) || *s == '_'))
			s++;
		a->name = pool_strndup(nm, (size_t)(s - nm));
		if (*s == '=') {
			s++;
			const char *d = s;
			depth = 0;
			int inq = 0;
			while (*s && (depth > 0 || inq || (*s != ',' && *s != ')'))) {
				if (*s == '"')
					inq = !inq;
				else if (*s == '[')
					depth++;
				else if (*s == ']')
					depth--;
				s++;
			}
			a->has_default = 1;
			a->dflt = pool_strndup(d, (size_t)(s - d));
		}
	}
	/* Returns: "()" none, "Tensor" one, "(Tensor, Tensor)" several. */
	const char *r = strstr(s, "->");
	DOCC_ASSERT(r);
	r += 2;
	while (*r == ' ')
		r++;
	/* "Tensor(a)", "Tensor(a!)", "Tensor(a)[]": the return shares storage with set a */
	info->ret_alias = !strncmp(r, "Tensor(", 7) ? r[7] : 0;
	if (!strcmp(r, "()"))
		info->nrets = 0;
	else if (*r == '(') {
		info->nrets = 1;
		for (; *r; r++)
			info->nrets += *r == ',';
	} else
		info->nrets = 1;
}

const AtenInfo *aten_info(int aop)
{
	DOCC_ASSERT(aop >= 0 && aop < NATENOPS);
	AtenInfo *i = &aten_table[aop];
	if (i->nargs < 0) {
		parse_schema(i);
		i->names = i->args;
	}
	return i;
}

static const AtenInfo *find_hand(const char *target)
{
	for (int i = 0; i < NATENOPS; i++)
		if (!strcmp(aten_table[i].target, target))
			return aten_info(i);
	return NULL;
}

/* A derived row takes its base's lowering, and reads its arguments by the
 * base's names: the generator matched the two signatures position by
 * position, which is checked again here. */
const AtenInfo *aten_variant(int i)
{
	if (i < 0 || (size_t)i >= COUNTOF(variant_table))
		return NULL;
	AtenInfo *v = &variant_table[i];
	if (v->nargs >= 0)
		return v;
	const AtenInfo *b = find_hand(v->base);
	parse_schema(v);
	DOCC_ASSERT(b && b->nargs == v->nargs && b->nrets == v->nrets);
	for (int k = 0; k < v->nargs; k++)
		DOCC_ASSERT(b->args[k].type == v->args[k].type && b->args[k].optional == v->args[k].optional);
	v->lowering = b->lowering;
	v->lower = b->lower;
	v->param = b->param;
	v->names = b->args;
	return v;
}

const AtenInfo *aten_find(const char *target)
{
	const AtenInfo *a = find_hand(target);
	for (int i = 0; !a && (size_t)i < COUNTOF(variant_table); i++)
		if (!strcmp(variant_table[i].target, target))
			a = aten_variant(i);
	return a;
}

static const char *const unsupported[][2] = {
#define X(t, r) {t, r},
	UNSUPPORTED_OPS(X)
#undef X
};

const char *aten_unsupported(const char *target)
{
	for (size_t i = 0; i < COUNTOF(unsupported); i++)
		if (!strcmp(unsupported[i][0], target))
			return unsupported[i][1];
	return NULL;
}

const char *aten_unsupported_row(int i, const char **reason)
{
	if (i < 0 || (size_t)i >= COUNTOF(unsupported))
		return NULL;
	*reason = unsupported[i][1];
	return unsupported[i][0];
}
