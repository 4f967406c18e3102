/*
 * cmp.c - arrays against their references: what doccc run --expect and
 * doccc compare share (cmd.h declares it). The element kinds are numpy's
 * descrs; bfloat16 travels as its bits in "<u2".
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../lib/lib.h"
#include "cmd.h"

enum { FAM_FLOAT, FAM_INT, FAM_BOOL }; /* cmp_family's kinds */

void cmp_put_shape(Buf *b, int rank, const int64_t *shape)
{
	buf_putc(b, '[');
	for (int d = 0; d < rank; d++)
		buf_printf(b, "%s%lld", d ? ", " : "", (long long)shape[d]);
	buf_putc(b, ']');
}

/* What an output is compared as. bfloat16's "<u2" is a float: doccc has no
 * uint16 dtype, and a bfloat16 reference may come as its raw bits or as
 * any float array. */

int cmp_family(const char *descr)
{
	if (descr[1] == 'f' || !strcmp(descr, "<u2"))
		return FAM_FLOAT;
	return descr[1] == 'b' ? FAM_BOOL : FAM_INT;
}

/* IEEE half-precision bits as a double (exact). */
static double half_to_double(uint16_t h)
{
	unsigned e = h >> 10 & 31, m = h & 1023;
	double v;

	if (e == 31)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = m * 0x1p-24;               /* subnormal: m * 2^-24 */
	else {
		uint32_t bits = (uint32_t)(e + 112) << 23 | (uint32_t)m << 13;  /* rebias 15 -> 127 */
		float f;
		memcpy(&f, &bits, sizeof f);
		v = f;
	}
	return h & 0x8000 ? -v : v;
}

/* Element i of a float-family array (descr: <f4, <f8, <f2 or bfloat16's <u2). */
static double get_float(const char *descr, const void *data, int64_t i)
{
	union { float f; double d; uint16_t h; uint32_t u; } v;
	size_t size = (size_t)(descr[2] - '0');

	memcpy(&v, (const char *)data + (size_t)i * size, size);
	if (size == 4)
		return v.f;
	if (size == 8)
		return v.d;
	if (descr[1] == 'f')
		return half_to_double(v.h);
	v.u = (uint32_t)v.h << 16;   /* bfloat16: the top half of a float */
	return v.f;
}

/* Element i of an integer or bool array (bool: 0 or 1). */
static int64_t get_int(const char *descr, const void *data, int64_t i)
{
	union { int8_t b; uint8_t ub; int16_t h; int32_t w; int64_t l; } v;
	size_t size = (size_t)(descr[2] - '0');

	memcpy(&v, (const char *)data + (size_t)i * size, size);
	if (descr[1] == 'b')
		return v.ub != 0;
	if (descr[1] == 'u')
		return v.ub;
	return size == 1 ? v.b : size == 2 ? v.h : size == 4 ? v.w : v.l;
}

/* Reads the reference of output k and checks it against the descriptor:
 * the output's dtype family and its exact shape. Reports every mismatch
 * (after sp, "step 2: " or "") and returns -1, leaving r empty; 0 with r
 * read. */
/* Compares n elements of got (descr gd) with ref (descr rd, the same
 * family) into c. The worst element is the one furthest outside its
 * tolerance, |got - ref| / (atol + rtol*|ref|) (for integers and bool the
 * difference itself); a NaN against a number and a wrong infinity count as
 * infinitely far; ties go to the first in C order. */
void cmp_arrays(const char *gd, const void *got, const char *rd, const void *ref, int64_t n,
                double rtol, double atol, Cmp *c)
{
	int fam = cmp_family(gd);
	double worst_score = -1;

	memset(c, 0, sizeof *c);
	c->worst = -1;
	for (int64_t i = 0; i < n; i++) {
		double g, r, d, score;
		int ok = 0;

		if (fam == FAM_FLOAT) {
			g = get_float(gd, got, i);
			r = get_float(rd, ref, i);
		} else {
			int64_t gi = get_int(gd, got, i), ri = get_int(rd, ref, i);
			g = (double)gi;
			r = (double)ri;
			ok = gi == ri;  /* exact even where a double would round */
		}
		if (isnan(g) || isnan(r)) {
			ok = isnan(g) && isnan(r);
			score = ok ? 0 : INFINITY;
		} else {
			d = g == r ? 0 : fabs(g - r);  /* inf == inf: 0, not NaN */
			if (fam != FAM_FLOAT && !ok && d < 1)
				d = 1;  /* int64s a double cannot tell apart */
			if (d > c->max_abs)
				c->max_abs = d;
			if (r != 0 && d > 0) {
				double rel = isinf(d) ? INFINITY : d / fabs(r);
				if (rel > c->max_rel)
					c->max_rel = rel;
			}
			if (fam != FAM_FLOAT) {
				score = d;
			} else if (isinf(g) || isinf(r)) {
				ok = g == r;
				score = ok ? 0 : INFINITY;
			} else {
				double tol = atol + rtol * fabs(r);
				ok = d <= tol;
				score = d == 0 ? 0 : tol > 0 ? d / tol : INFINITY;
			}
		}
		if (!ok)
			c->nbad++;
		if (score > worst_score) {
			worst_score = score;
			c->worst = i;
		}
	}
}

/* A number of the report: %.*g, or nan/inf/-inf (quoted in JSON, which
 * has no such numbers). */
void cmp_put_num(Buf *b, double v, int digits, int json)
{
	const char *q = json ? "\"" : "";

	if (isnan(v))
		buf_printf(b, "%snan%s", q, q);
	else if (isinf(v))
		buf_printf(b, "%s%sinf%s", q, v < 0 ? "-" : "", q);
	else
		buf_printf(b, "%.*g", digits, v);
}

/* Element i of an array as the report shows it: a float with the digits
 * that round-trip its type, an integer, true/false. */
static void put_value(Buf *b, const char *descr, const void *data, int64_t i, int json)
{
	switch (cmp_family(descr)) {
	case FAM_FLOAT:
		cmp_put_num(b, get_float(descr, data, i), !strcmp(descr, "<f8") ? 17 : 9, json);
		break;
	case FAM_INT:
		buf_printf(b, "%lld", (long long)get_int(descr, data, i));
		break;
	case FAM_BOOL:
		buf_puts(b, get_int(descr, data, i) ? "true" : "false");
		break;
	}
}

/* The multi-index of flat index i in C order: "[0, 3]" (t's rank at most
 * an Npy's, as every caller checks). */
static void put_index(Buf *b, const doccc_tensor_desc *t, int64_t i)
{
	int64_t idx[COUNTOF(((Npy *)0)->shape)];

	for (int d = t->rank - 1; d >= 0; d--) {
		idx[d] = t->shape[d] ? i % t->shape[d] : 0;
		i = t->shape[d] ? i / t->shape[d] : 0;
	}
	cmp_put_shape(b, t->rank, idx);
}

/* The words around the numbers of an output's comparison, in the text
 * report ([0]) and in JSON ([1]). */
typedef struct {
	const char *abs, *rel, *bad, *of, *worst, *got, *expected, *end, *none;
} CmpWords;
static const CmpWords cmp_words[2] = {
	{": max abs err ", ", max rel err ", ", ", " of ", " outside tolerance, worst ", " got ", " expected ", "",
	 " outside tolerance"},
	{",\n     \"max_abs_err\": ", ", \"max_rel_err\": ", ", \"mismatches\": ", ", \"elements\": ",
	 ",\n     \"worst\": {\"index\": ", ", \"got\": ", ", \"expected\": ", "}", ",\n     \"worst\": null"},
};

/* The comparison of output k (largest errors, mismatches, worst element)
 * as text or JSON. */
void cmp_put(Buf *b, const doccc_tensor_desc *t, const Cmp *c, const char *gd, const void *got, const Npy *ref, int json)
{
	const CmpWords *w = &cmp_words[json];

	buf_puts(b, w->abs);
	cmp_put_num(b, c->max_abs, json ? 9 : 4, json);
	buf_puts(b, w->rel);
	cmp_put_num(b, c->max_rel, json ? 9 : 4, json);
	buf_printf(b, "%s%lld%s%lld", w->bad, (long long)c->nbad, w->of, (long long)t->numel);
	if (c->worst < 0) {
		buf_puts(b, w->none);
		return;
	}
	buf_puts(b, w->worst);
	put_index(b, t, c->worst);
	buf_puts(b, w->got);
	put_value(b, gd, got, c->worst, json);
	buf_puts(b, w->expected);
	put_value(b, ref->descr, ref->data, c->worst, json);
	buf_puts(b, w->end);
}

void cmp_value_file(Buf *b, const char *name)
{
	size_t n = 0;
	for (const char *p = name; *p && n < 200; p++, n++) {
		int c = (unsigned char)*p;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		         (c == '.' && n);
		buf_putc(b, ok ? (char)c : '_');
	}
	if (!n)
		buf_puts(b, "value");
	buf_puts(b, ".npy");
}
