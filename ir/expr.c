/*
 * expr.c - symbolic integer expressions in canonical form.
 *
 * Every constructor returns its result in canonical form, so two equal
 * expressions built from the same pieces are structurally equal (ex_eq) and
 * print the same. The canonical form is a polynomial over atoms:
 *
 *   atom     E_SYM, or E_DIV / E_MOD / E_MIN / E_MAX of canonical arguments
 *   term     c * a1 * ... * an: an E_MUL whose first argument is the integer
 *            coefficient c (omitted when c == 1; a lone atom when n == 1 and
 *            c == 1), then the atoms sorted by ex_cmp (repeats = powers)
 *   sum      an E_ADD of terms with pairwise distinct monomials, sorted by
 *            monomial (the constant term, if any, first), no zero terms
 *
 * Products are distributed over sums, so (i + 1) * 64 is 64*i + 64. E_DIV
 * is floor division and E_MOD Python's modulo (result has the sign of the
 * divisor); both are folded for constants with those semantics and
 * simplified for a positive constant divisor c: multiples of c move out of
 * a quotient and vanish from a remainder, and x/c -> 0, x%c -> x when
 * 0 <= x < c follows from the symbols' known ranges (interval arithmetic in
 * ex_range, which is conservative: infinities are INT64_MIN / INT64_MAX).
 * MIN / MAX have their two arguments sorted and fold when the ranges decide
 * them. Integer arithmetic wraps (it never overflows in practice; wrapping
 * keeps it free of undefined behaviour).
 *
 * ex_print writes C: '/' and '%' where the dividend is provably >= 0 and the
 * divisor > 0 (index expressions), a floor-correct form otherwise.
 *
 * Expressions are immutable and shared freely; they live in the Sdfg's
 * arena. Scratch polynomials use malloc and are freed before returning, so
 * the arena only grows by the results.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

#define NEG_INF INT64_MIN
#define POS_INF INT64_MAX

/* ---- integer helpers (wrapping, floor semantics) ------------------------------ */
static int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* Floor division; b != 0, and not INT64_MIN / -1. */
static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
	return q;
}

/* Python modulo: the result has the sign of b; b != 0. */
static int64_t pymod(int64_t a, int64_t b)
{
	if (b == -1) return 0;
	int64_t r = a % b;
	if (r != 0 && ((r < 0) != (b < 0))) r += b;
	return r;
}

static int64_t gcd64(int64_t a, int64_t b)
{
	uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a;
	uint64_t y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
	while (y) {
		uint64_t t = x % y;
		x = y;
		y = t;
	}
	return x > (uint64_t)INT64_MAX ? 1 : (int64_t)x;
}

/* ---- raw nodes ------------------------------------------------------------------ */
static Expr *mk(Sdfg *g, ExprKind k, int n, int64_t v)
{
	Expr *e = arena_alloc(g->arena, sizeof *e);
	e->k = k;
	e->n = n;
	e->v = v;
	if (n) e->a = arena_alloc(g->arena, (size_t)n * sizeof *e->a);
	return e;
}

static Expr *mk2(Sdfg *g, ExprKind k, Expr *a, Expr *b)
{
	Expr *e = mk(g, k, 2, 0);
	e->a[0] = a;
	e->a[1] = b;
	return e;
}

Expr *ex_int(Sdfg *g, int64_t v) { return mk(g, E_INT, 0, v); }

Expr *ex_sym(Sdfg *g, int sym)
{
	DOCC_ASSERT(sym >= 0 && sym < g->nsyms);
	return mk(g, E_SYM, 0, sym);
}

/* The deterministic total order: kind, then value / symbol id, then
 * argument count, then arguments lexicographically. */
static int ex_cmp(const Expr *a, const Expr *b)
{
	if (a == b) return 0;
	if (a->k != b->k) return a->k < b->k ? -1 : 1;
	if (a->k == E_INT || a->k == E_SYM) return a->v < b->v ? -1 : a->v > b->v;
	if (a->n != b->n) return a->n < b->n ? -1 : 1;
	for (int i = 0; i < a->n; i++) {
		int c = ex_cmp(a->a[i], b->a[i]);
		if (c) return c;
	}
	return 0;
}

int ex_eq(const Expr *a, const Expr *b)
{
	if (!a || !b) return a == b;
	return ex_cmp(a, b) == 0;
}

int ex_isint(const Expr *e, int64_t *v)
{
	if (!e || e->k != E_INT) return 0;
	if (v) *v = e->v;
	return 1;
}

int ex_uses(const Expr *e, int sym)
{
	if (!e) return 0;
	if (e->k == E_SYM) return e->v == sym;
	for (int i = 0; i < e->n; i++)
		if (ex_uses(e->a[i], sym)) return 1;
	return 0;
}

int ex_uses_kind(const Sdfg *g, const Expr *e, SymKind k)
{
	if (!e) return 0;
	if (e->k == E_SYM) return e->v >= 0 && e->v < g->nsyms && g->syms[e->v].kind == k;
	for (int i = 0; i < e->n; i++)
		if (ex_uses_kind(g, e->a[i], k)) return 1;
	return 0;
}

/* ---- ranges (interval arithmetic with saturation) ------------------------------ */
static int isinf64(int64_t x) { return x == NEG_INF || x == POS_INF; }

static int64_t sat_add(int64_t a, int64_t b, int64_t inf_if_mixed)
{
	if (isinf64(a) || isinf64(b)) {
		if (isinf64(a) && isinf64(b) && a != b) return inf_if_mixed;
		return isinf64(a) ? a : b;
	}
	int64_t r;
	if (__builtin_add_overflow(a, b, &r)) return a < 0 ? NEG_INF : POS_INF;
	return r;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
	if (a == 0 || b == 0) return 0;
	int neg = (a < 0) != (b < 0);
	int64_t r;
	if (isinf64(a) || isinf64(b) || __builtin_mul_overflow(a, b, &r))
		return neg ? NEG_INF : POS_INF;
	return r;
}

static int64_t sat_floordiv(int64_t a, int64_t c)   /* c > 0 */
{
	if (isinf64(a)) return a;
	return floordiv(a, c);
}

int ex_range(const Sdfg *g, const Expr *e, int64_t *lo, int64_t *hi)
{
	int64_t l = NEG_INF, h = POS_INF, l2, h2;
	switch (e->k) {
	case E_INT:
		l = h = e->v;
		break;
	case E_SYM:
		if (e->v >= 0 && e->v < g->nsyms) {
			l = g->syms[e->v].lo;
			h = g->syms[e->v].hi;
		}
		break;
	case E_ADD:
		l = h = 0;
		for (int i = 0; i < e->n; i++) {
			ex_range(g, e->a[i], &l2, &h2);
			l = sat_add(l, l2, NEG_INF);
			h = sat_add(h, h2, POS_INF);
		}
		break;
	case E_MUL:
		l = h = 1;
		for (int i = 0; i < e->n; i++) {
			ex_range(g, e->a[i], &l2, &h2);
			int64_t c[4] = {sat_mul(l, l2), sat_mul(l, h2), sat_mul(h, l2), sat_mul(h, h2)};
			l = h = c[0];
			for (int j = 1; j < 4; j++) {
				l = MIN(l, c[j]);
				h = MAX(h, c[j]);
			}
		}
		break;
	case E_DIV: {
		/* For a divisor in [bl, bh] with 0 < bl, bh finite, floor(a/b) is
		 * monotone in a and in b, so the corners bound it. */
		int64_t bl, bh;
		ex_range(g, e->a[1], &bl, &bh);
		if (bl > 0 && !isinf64(bh)) {
			ex_range(g, e->a[0], &l2, &h2);
			int64_t c[4] = {sat_floordiv(l2, bl), sat_floordiv(l2, bh), sat_floordiv(h2, bl), sat_floordiv(h2, bh)};
			l = h = c[0];
			for (int j = 1; j < 4; j++) {
				l = MIN(l, c[j]);
				h = MAX(h, c[j]);
			}
		}
		break;
	}
	case E_MOD: {
		/* Python modulo: in [0, b-1] for b > 0 (and a itself when
		 * 0 <= a < b), in [b+1, 0] for b < 0. */
		int64_t bl, bh;
		ex_range(g, e->a[1], &bl, &bh);
		ex_range(g, e->a[0], &l2, &h2);
		if (bl > 0) {
			l = 0;
			h = isinf64(bh) ? POS_INF : bh - 1;
			if (l2 >= 0) h = MIN(h, h2);
			if (l2 >= 0 && h2 < bl) l = l2;
		} else if (bh < 0) {
			l = isinf64(bl) ? NEG_INF : bl + 1;
			h = 0;
		}
		break;
	}
	case E_MIN:
	case E_MAX:
		ex_range(g, e->a[0], &l, &h);
		ex_range(g, e->a[1], &l2, &h2);
		if (e->k == E_MIN) l = MIN(l, l2), h = MIN(h, h2);
		else l = MAX(l, l2), h = MAX(h, h2);
		break;
	}
	*lo = l;
	*hi = h;
	return !isinf64(l) && !isinf64(h);
}

/* ---- polynomials (scratch, malloc'd) -------------------------------------------- */
typedef struct {
	int64_t c;
	int na;
	Expr **at;     /* atoms, sorted by ex_cmp */
} Term;
typedef struct {
	Term *t;
	int n, cap;
} Poly;

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) diag_internal(__FILE__, __LINE__, "out of memory");
	return q;
}

static void poly_free(Poly *p)
{
	for (int i = 0; i < p->n; i++) free(p->t[i].at);
	free(p->t);
	p->t = NULL;
	p->n = p->cap = 0;
}

/* Append c * (atoms of x) * (atoms of y); x and y are sorted, the result is
 * their sorted merge. */
static void poly_term(Poly *p, int64_t c, Expr *const *x, int nx, Expr *const *y, int ny)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 8;
		p->t = xrealloc(p->t, (size_t)p->cap * sizeof *p->t);
	}
	Term *t = &p->t[p->n++];
	t->c = c;
	t->na = nx + ny;
	t->at = xrealloc(NULL, (size_t)t->na * sizeof *t->at);
	int i = 0, j = 0, k = 0;
	while (i < nx || j < ny) {
		if (j >= ny || (i < nx && ex_cmp(x[i], y[j]) <= 0)) t->at[k++] = x[i++];
		else t->at[k++] = y[j++];
	}
}

/* Add scale * e to p (e canonical). */
static void poly_of(Poly *p, Expr *e, int64_t scale)
{
	switch (e->k) {
	case E_INT:
		poly_term(p, wmul(e->v, scale), NULL, 0, NULL, 0);
		break;
	case E_ADD:
		for (int i = 0; i < e->n; i++) poly_of(p, e->a[i], scale);
		break;
	case E_MUL:
		if (e->a[0]->k == E_INT) poly_term(p, wmul(e->a[0]->v, scale), e->a + 1, e->n - 1, NULL, 0);
		else poly_term(p, scale, e->a, e->n, NULL, 0);
		break;
	default:
		poly_term(p, scale, &e, 1, NULL, 0);
		break;
	}
}

/* Monomial order: degree, then atoms lexicographically. */
static int mono_cmp(const Term *a, const Term *b)
{
	if (a->na != b->na) return a->na < b->na ? -1 : 1;
	for (int i = 0; i < a->na; i++) {
		int c = ex_cmp(a->at[i], b->at[i]);
		if (c) return c;
	}
	return 0;
}

static int term_qcmp(const void *x, const void *y) { return mono_cmp(x, y); }

static Expr *term_expr(Sdfg *g, const Term *t)
{
	if (t->na == 0) return ex_int(g, t->c);
	if (t->c == 1 && t->na == 1) return t->at[0];
	int lead = t->c != 1;
	Expr *e = mk(g, E_MUL, t->na + lead, 0);
	if (lead) e->a[0] = ex_int(g, t->c);
	memcpy(e->a + lead, t->at, (size_t)t->na * sizeof *t->at);
	return e;
}

/* Sort, combine like terms, drop zeros: p becomes canonical. */
static void poly_norm(Poly *p)
{
	if (p->n > 1) qsort(p->t, (size_t)p->n, sizeof *p->t, term_qcmp);
	int m = 0;
	for (int i = 0; i < p->n; i++) {
		if (m > 0 && mono_cmp(&p->t[m - 1], &p->t[i]) == 0) {
			p->t[m - 1].c = wadd(p->t[m - 1].c, p->t[i].c);
			free(p->t[i].at);
			continue;
		}
		p->t[m++] = p->t[i];
	}
	p->n = m;
	m = 0;
	for (int i = 0; i < p->n; i++) {
		if (p->t[i].c == 0) {
			free(p->t[i].at);
			continue;
		}
		p->t[m++] = p->t[i];
	}
	p->n = m;
}

/* Does term d equal term m with m's atom x, a % b, replaced by a' // b,
 * where a' = a + k*b for a constant k (ex_mod reduces the constant term:
 * (i + 32) % 7 is (i + 4) % 7)? Returns the index of a' // b in d, or -1. */
static int div_of_mod(Sdfg *g, const Term *d, const Term *m, int x)
{
	const Expr *mod = m->at[x];
	if (d->na != m->na)
		return -1;
	int y = -1;
	int64_t b = mod->a[1]->v, k;
	for (int j = 0; j < d->na && y < 0; j++)
		if (d->at[j]->k == E_DIV && ex_eq(d->at[j]->a[1], mod->a[1]) &&
		    ex_isint(ex_sub(g, d->at[j]->a[0], mod->a[0]), &k) && k % b == 0)
			y = j;
	if (y < 0)
		return -1;
	/* the other atoms, in order in both */
	for (int i = 0, j = 0;; i++, j++) {
		i += i == x;
		j += j == y;
		if (i >= m->na || j >= d->na)
			return y;
		if (!ex_eq(m->at[i], d->at[j]))
			return -1;
	}
}

/* c*b*(a // b) + c*(a % b) = c*a for a constant b > 0 (floor division and
 * Python modulo: a = b*(a // b) + a % b), the other atoms of both terms
 * equal: an index split into a row and a column and addressed again
 * (row*W + column), as conv_pointwise's flat pixels are, is the index.
 * Rewrites one pair of p (normalized); 1 if it did. */
static int poly_join_divmod(Sdfg *g, Poly *p)
{
	for (int i = 0; i < p->n; i++) {
		Term *m = &p->t[i];
		for (int x = 0; x < m->na; x++) {
			int64_t b, cb;
			if (m->at[x]->k != E_MOD || !ex_isint(m->at[x]->a[1], &b) || b <= 0 ||
			    __builtin_mul_overflow(m->c, b, &cb))
				continue;
			for (int j = 0; j < p->n; j++) {
				int y;
				if (j == i || p->t[j].c != cb || (y = div_of_mod(g, &p->t[j], m, x)) < 0)
					continue;
				Poly a = {0};
				poly_of(&a, p->t[j].at[y]->a[0], 1);
				int no = m->na - 1;
				Expr **other = xrealloc(NULL, (size_t)no * sizeof *other);
				for (int k = 0, o = 0; k < m->na; k++)
					if (k != x)
						other[o++] = m->at[k];
				int64_t c = m->c;
				free(p->t[i].at);
				free(p->t[j].at);
				int hi = MAX(i, j), lo = MIN(i, j);
				p->t[hi] = p->t[--p->n];
				p->t[lo] = p->t[--p->n];
				poly_norm(&a);
				for (int k = 0; k < a.n; k++) /* a's atoms times the others, merged in order */
					poly_term(p, wmul(c, a.t[k].c), a.t[k].at, a.t[k].na, other, no);
				free(other);
				poly_free(&a);
				return 1;
			}
		}
	}
	return 0;
}

/* Build the canonical expression of p and free p. */
static Expr *poly_build(Sdfg *g, Poly *p)
{
	poly_norm(p);
	while (poly_join_divmod(g, p))
		poly_norm(p);
	Expr *e;
	if (p->n == 0) e = ex_int(g, 0);
	else if (p->n == 1) e = term_expr(g, &p->t[0]);
	else {
		e = mk(g, E_ADD, p->n, 0);
		for (int i = 0; i < p->n; i++) e->a[i] = term_expr(g, &p->t[i]);
	}
	poly_free(p);
	return e;
}

/* ---- arithmetic -------------------------------------------------------------------- */
Expr *ex_add(Sdfg *g, Expr *a, Expr *b)
{
	int64_t x, y;
	if (ex_isint(a, &x) && ex_isint(b, &y)) return ex_int(g, wadd(x, y));
	if (ex_isint(a, &x) && x == 0) return b;
	if (ex_isint(b, &y) && y == 0) return a;
	Poly p = {0};
	poly_of(&p, a, 1);
	poly_of(&p, b, 1);
	return poly_build(g, &p);
}

Expr *ex_sub(Sdfg *g, Expr *a, Expr *b)
{
	int64_t y;
	if (ex_isint(b, &y) && y == 0) return a;
	Poly p = {0};
	poly_of(&p, a, 1);
	poly_of(&p, b, -1);
	return poly_build(g, &p);
}

Expr *ex_addi(Sdfg *g, Expr *a, int64_t c) { return ex_add(g, a, ex_int(g, c)); }

Expr *ex_mul(Sdfg *g, Expr *a, Expr *b)
{
	int64_t x, y;
	if (ex_isint(a, &x) && ex_isint(b, &y)) return ex_int(g, wmul(x, y));
	if ((ex_isint(a, &x) && x == 0) || (ex_isint(b, &y) && y == 0)) return ex_int(g, 0);
	if (ex_isint(a, &x) && x == 1) return b;
	if (ex_isint(b, &y) && y == 1) return a;
	Poly pa = {0}, pb = {0}, p = {0};
	poly_of(&pa, a, 1);
	poly_of(&pb, b, 1);
	for (int i = 0; i < pa.n; i++)
		for (int j = 0; j < pb.n; j++)
			poly_term(&p, wmul(pa.t[i].c, pb.t[j].c), pa.t[i].at, pa.t[i].na, pb.t[j].at, pb.t[j].na);
	poly_free(&pa);
	poly_free(&pb);
	return poly_build(g, &p);
}

Expr *ex_muli(Sdfg *g, Expr *a, int64_t c) { return ex_mul(g, a, ex_int(g, c)); }

/* Is 0 <= e < c provable (c > 0)? */
static int below(const Sdfg *g, const Expr *e, int64_t c)
{
	int64_t lo, hi;
	ex_range(g, e, &lo, &hi);
	return lo >= 0 && hi < c && !isinf64(hi);
}

/* For a positive atom divisor b (a symbol, or a div/mod/min/max): split a
 * into q*b + r, where q collects the terms that have b as a factor (one
 * occurrence removed). Returns 0 if b is not such a divisor. */
static int split_atom(Sdfg *g, Expr *a, Expr *b, Expr **q, Expr **r)
{
	int64_t lo, hi;
	if (b->k == E_INT || b->k == E_ADD || b->k == E_MUL) return 0;
	ex_range(g, b, &lo, &hi);
	if (lo <= 0) return 0;
	Poly pa = {0}, pq = {0}, pr = {0};
	poly_of(&pa, a, 1);
	poly_norm(&pa);
	for (int i = 0; i < pa.n; i++) {
		Term *t = &pa.t[i];
		int at = -1;
		for (int j = 0; j < t->na && at < 0; j++)
			if (ex_eq(t->at[j], b)) at = j;
		if (at < 0) {
			poly_term(&pr, t->c, t->at, t->na, NULL, 0);
			continue;
		}
		poly_term(&pq, t->c, t->at, at, t->at + at + 1, t->na - at - 1);
	}
	poly_free(&pa);
	*q = poly_build(g, &pq);
	*r = poly_build(g, &pr);
	return 1;
}

Expr *ex_div(Sdfg *g, Expr *a, Expr *b)
{
	int64_t x, y;
	if (ex_isint(b, &y)) {
		if (y == 1) return a;
		if (y == -1) return ex_muli(g, a, -1);
		if (y != 0 && ex_isint(a, &x)) return ex_int(g, floordiv(x, y));
		if (y > 0) {
			/* a = q*y + r, where q collects the terms whose coefficient y
			 * divides: floor(a / y) = q + floor(r / y). */
			Poly pa = {0}, q = {0}, r = {0};
			poly_of(&pa, a, 1);
			poly_norm(&pa);
			for (int i = 0; i < pa.n; i++) {
				Term *t = &pa.t[i];
				if (t->c % y == 0) poly_term(&q, t->c / y, t->at, t->na, NULL, 0);
				else poly_term(&r, t->c, t->at, t->na, NULL, 0);
			}
			poly_free(&pa);
			Expr *qe = poly_build(g, &q);
			if (r.n == 0) {
				poly_free(&r);
				return qe;
			}
			/* floor(g*r' / g*y') = floor(r' / y') for a common factor g. */
			int64_t d = y;
			for (int i = 0; i < r.n; i++) d = gcd64(d, r.t[i].c);
			if (d > 1) {
				for (int i = 0; i < r.n; i++) r.t[i].c /= d;
				y /= d;
			}
			Expr *re = poly_build(g, &r), *rd;
			int64_t inner;
			if (y == 1) rd = re;
			else if (below(g, re, y)) rd = ex_int(g, 0);
			else if (re->k == E_DIV && ex_isint(re->a[1], &inner) && inner > 0 &&
			         !__builtin_mul_overflow(inner, y, &inner))
				rd = ex_div(g, re->a[0], ex_int(g, inner));   /* (x/a)/b = x/(a*b) */
			else {
				/* one quotient over re's range: (i + 768) // 28 is 27 for i in [0, 16) */
				int64_t lo, hi;
				rd = mk2(g, E_DIV, re, ex_int(g, y));
				if (ex_range(g, rd, &lo, &hi) && lo == hi) rd = ex_int(g, lo);
			}
			return ex_add(g, qe, rd);
		}
	}
	if (ex_isint(a, &x) && x == 0) return a;
	Expr *q, *r;
	if (split_atom(g, a, b, &q, &r)) {
		/* floor((q*b + r) / b) = q + floor(r / b); 0 if 0 <= r < b */
		int64_t rlo, rhi, blo, bhi;
		ex_range(g, r, &rlo, &rhi);
		ex_range(g, b, &blo, &bhi);
		if (rlo >= 0 && rhi < blo) return q;
		if (!ex_isint(q, &x) || x != 0) return ex_add(g, q, mk2(g, E_DIV, r, b));
	}
	return mk2(g, E_DIV, a, b);
}

Expr *ex_mod(Sdfg *g, Expr *a, Expr *b)
{
	int64_t x, y;
	if (ex_isint(b, &y)) {
		if (y == 1 || y == -1) return ex_int(g, 0);
		if (y != 0 && ex_isint(a, &x)) return ex_int(g, pymod(x, y));
		if (y > 0) {
			/* Multiples of y vanish: (q*y + r) % y = r % y. */
			Poly pa = {0}, r = {0};
			poly_of(&pa, a, 1);
			poly_norm(&pa);
			for (int i = 0; i < pa.n; i++)
				if (pa.t[i].c % y != 0) poly_term(&r, pa.t[i].c, pa.t[i].at, pa.t[i].na, NULL, 0);
			poly_free(&pa);
			Expr *re = poly_build(g, &r);
			if (below(g, re, y)) return re;
			/* Reduce every coefficient modulo y (c*t = (c%y)*t + y*k*t). */
			Poly p2 = {0};
			poly_of(&p2, re, 1);
			for (int i = 0; i < p2.n; i++) p2.t[i].c = pymod(p2.t[i].c, y);
			Expr *re2 = poly_build(g, &p2);
			if (ex_isint(re2, &x)) return re2;
			if (below(g, re2, y)) return re2;
			return mk2(g, E_MOD, re2, b);
		}
	}
	if (ex_isint(a, &x) && x == 0) return a;
	Expr *q, *r;
	if (split_atom(g, a, b, &q, &r)) {
		/* (q*b + r) % b = r % b; r if 0 <= r < b */
		int64_t rlo, rhi, blo, bhi;
		ex_range(g, r, &rlo, &rhi);
		ex_range(g, b, &blo, &bhi);
		if (rlo >= 0 && rhi < blo) return r;
		if (ex_isint(r, &x) && x == 0) return r;
		a = r;
	}
	return mk2(g, E_MOD, a, b);
}

static Expr *minmax(Sdfg *g, ExprKind k, Expr *a, Expr *b)
{
	int64_t x, y, lo, hi, alo, ahi, blo, bhi;
	if (ex_isint(a, &x) && ex_isint(b, &y))
		return ex_int(g, k == E_MIN ? MIN(x, y) : MAX(x, y));
	if (ex_eq(a, b)) return a;
	/* Decide from the range of b - a, then from the separate ranges. */
	Expr *d = ex_sub(g, b, a);
	ex_range(g, d, &lo, &hi);
	if (lo >= 0) return k == E_MIN ? a : b;     /* a <= b */
	if (hi <= 0) return k == E_MIN ? b : a;     /* b <= a */
	ex_range(g, a, &alo, &ahi);
	ex_range(g, b, &blo, &bhi);
	if (ahi <= blo) return k == E_MIN ? a : b;
	if (bhi <= alo) return k == E_MIN ? b : a;
	if (ex_cmp(a, b) > 0) {
		Expr *t = a;
		a = b;
		b = t;
	}
	return mk2(g, k, a, b);
}

Expr *ex_min(Sdfg *g, Expr *a, Expr *b) { return minmax(g, E_MIN, a, b); }
Expr *ex_max(Sdfg *g, Expr *a, Expr *b) { return minmax(g, E_MAX, a, b); }

Expr *ex_subst(Sdfg *g, Expr *e, int sym, Expr *val)
{
	if (!ex_uses(e, sym)) return e;
	switch (e->k) {
	case E_INT:
		return e;
	case E_SYM:
		return val;
	case E_ADD:
	case E_MUL: {
		Expr *r = ex_subst(g, e->a[0], sym, val);
		for (int i = 1; i < e->n; i++) {
			Expr *x = ex_subst(g, e->a[i], sym, val);
			r = e->k == E_ADD ? ex_add(g, r, x) : ex_mul(g, r, x);
		}
		return r;
	}
	case E_DIV:
		return ex_div(g, ex_subst(g, e->a[0], sym, val), ex_subst(g, e->a[1], sym, val));
	case E_MOD:
		return ex_mod(g, ex_subst(g, e->a[0], sym, val), ex_subst(g, e->a[1], sym, val));
	case E_MIN:
		return ex_min(g, ex_subst(g, e->a[0], sym, val), ex_subst(g, e->a[1], sym, val));
	case E_MAX:
		return ex_max(g, ex_subst(g, e->a[0], sym, val), ex_subst(g, e->a[1], sym, val));
	}
	DOCC_UNREACHABLE();
}

int ex_coeff(Sdfg *g, const Expr *e, int sym, int64_t *c)
{
	(void)g;
	Poly p = {0};
	poly_of(&p, (Expr *)e, 1);
	poly_norm(&p);
	int64_t k = 0;
	int ok = 1;
	for (int i = 0; i < p.n && ok; i++) {
		Term *t = &p.t[i];
		int uses = 0;
		for (int j = 0; j < t->na; j++)
			if (ex_uses(t->at[j], sym)) uses++;
		if (!uses) continue;
		if (t->na == 1 && t->at[0]->k == E_SYM) k = wadd(k, t->c);
		else ok = 0;   /* inside div/mod/min/max, a power, or times another atom */
	}
	poly_free(&p);
	if (ok && c) *c = k;
	return ok;
}

int ex_eval(const Sdfg *g, const Expr *e, const int64_t *vals, const int *bound, int64_t *out)
{
	(void)g;
	int64_t x, y;
	switch (e->k) {
	case E_INT:
		*out = e->v;
		return 0;
	case E_SYM:
		if (!vals || (bound && !bound[e->v])) return -1;
		*out = vals[e->v];
		return 0;
	case E_ADD:
	case E_MUL:
		if (ex_eval(g, e->a[0], vals, bound, &x)) return -1;
		for (int i = 1; i < e->n; i++) {
			if (ex_eval(g, e->a[i], vals, bound, &y)) return -1;
			if (e->k == E_ADD ? ck_add(x, y, &x) : ck_mul(x, y, &x)) return -1;
		}
		*out = x;
		return 0;
	default:
		if (ex_eval(g, e->a[0], vals, bound, &x) || ex_eval(g, e->a[1], vals, bound, &y)) return -1;
		switch (e->k) {
		case E_DIV:
			if (y == 0) return -1;
			if (y == -1) return ck_mul(x, -1, out);
			*out = floordiv(x, y);
			return 0;
		case E_MOD:
			if (y == 0) return -1;
			*out = pymod(x, y);
			return 0;
		case E_MIN:
			*out = MIN(x, y);
			return 0;
		default:
			*out = MAX(x, y);
			return 0;
		}
	}
}

/* ---- printing (C syntax) --------------------------------------------------------- */
static void pr(Buf *b, const Sdfg *g, const char *const *nm, const Expr *e);

static void pr_int(Buf *b, int64_t v)
{
	if (v == INT64_MIN) buf_puts(b, "(-9223372036854775807 - 1)");
	else buf_printf(b, "%lld", (long long)v);
}

/* An operand of '/' or '%': parenthesised unless a symbol or a
 * non-negative constant. */
static void pr_operand(Buf *b, const Sdfg *g, const char *const *nm, const Expr *e)
{
	if (e->k == E_SYM || (e->k == E_INT && e->v >= 0) || e->k == E_DIV || e->k == E_MOD ||
	    e->k == E_MIN || e->k == E_MAX) {
		pr(b, g, nm, e);
		return;
	}
	buf_putc(b, '(');
	pr(b, g, nm, e);
	buf_putc(b, ')');
}

/* A term without its sign: atoms joined by '*', then |c| if not 1. */
static void pr_term_abs(Buf *b, const Sdfg *g, const char *const *nm, const Expr *t, int64_t *c)
{
	int first = 1;
	*c = 1;
	if (t->k == E_MUL) {
		for (int i = 0; i < t->n; i++) {
			if (t->a[i]->k == E_INT) {
				*c = t->a[i]->v;
				continue;
			}
			if (!first) buf_putc(b, '*');
			pr(b, g, nm, t->a[i]);
			first = 0;
		}
	} else {
		pr(b, g, nm, t);
	}
	if (*c == INT64_MIN) buf_puts(b, "*(-9223372036854775807 - 1)");
	else if (*c != 1 && *c != -1) buf_printf(b, "*%lld", (long long)(*c < 0 ? -*c : *c));
}

static int term_neg(const Expr *t)
{
	return t->k == E_MUL && t->a[0]->k == E_INT && t->a[0]->v < 0 && t->a[0]->v != INT64_MIN;
}

static void pr(Buf *b, const Sdfg *g, const char *const *nm, const Expr *e)
{
	int64_t c;
	switch (e->k) {
	case E_INT:
		pr_int(b, e->v);
		return;
	case E_SYM:
		if (e->v >= 0 && e->v < g->nsyms) buf_puts(b, nm && nm[e->v] ? nm[e->v] : g->syms[e->v].name);
		else buf_printf(b, "_sym%lld", (long long)e->v);
		return;
	case E_MUL:
		if (term_neg(e)) buf_putc(b, '-');
		pr_term_abs(b, g, nm, e, &c);
		return;
	case E_ADD: {
		/* Non-constant terms in order, then the constant. */
		int first = 1;
		const Expr *k = NULL;
		for (int i = 0; i < e->n; i++) {
			const Expr *t = e->a[i];
			if (t->k == E_INT) {
				k = t;
				continue;
			}
			int neg = term_neg(t);
			if (first) buf_puts(b, neg ? "-" : "");
			else buf_puts(b, neg ? " - " : " + ");
			pr_term_abs(b, g, nm, t, &c);
			first = 0;
		}
		if (k) {
			if (k->v < 0 && k->v != INT64_MIN) buf_printf(b, " - %lld", -(long long)k->v);
			else {
				buf_puts(b, " + ");
				pr_int(b, k->v);
			}
		}
		return;
	}
	case E_DIV:
	case E_MOD: {
		/* C's '/' and '%' truncate; they agree with floor division when
		 * the dividend is >= 0 and the divisor > 0, the common case of
		 * index expressions. Otherwise a floor-correct form is printed. */
		int64_t alo, ahi, blo, bhi, k;
		ex_range(g, e->a[0], &alo, &ahi);
		ex_range(g, e->a[1], &blo, &bhi);
		const char *op = e->k == E_DIV ? "/" : "%";
		if (alo >= 0 && blo > 0) {
			buf_putc(b, '(');
			pr_operand(b, g, nm, e->a[0]);
			buf_puts(b, op);
			pr_operand(b, g, nm, e->a[1]);
			buf_putc(b, ')');
		} else if (ex_isint(e->a[1], &k) && k > 0) {
			/* a/k - (a%k < 0)   and   (a%k + k)%k */
			buf_puts(b, e->k == E_DIV ? "(" : "((");
			pr_operand(b, g, nm, e->a[0]);
			buf_printf(b, e->k == E_DIV ? "/%lld - (" : "%%%lld + %lld)%%%lld)", (long long)k, (long long)k,
			           (long long)k);
			if (e->k == E_DIV) {
				pr_operand(b, g, nm, e->a[0]);
				buf_printf(b, "%%%lld < 0))", (long long)k);
			}
		} else {
			/* r = a%b; floor correction when r != 0 and sign(r) != sign(b) */
			Buf A = {0}, B = {0};
			pr_operand(&A, g, nm, e->a[0]);
			pr_operand(&B, g, nm, e->a[1]);
			const char *x = A.s, *y = B.s;
			if (e->k == E_DIV)
				buf_printf(b, "(%s/%s - ((%s%%%s != 0) & ((%s%%%s < 0) != (%s < 0))))", x, y, x, y, x, y, y);
			else
				buf_printf(b, "(%s%%%s + (((%s%%%s != 0) & ((%s%%%s < 0) != (%s < 0))) ? %s : 0))", x, y, x, y,
				           x, y, y, y);
			buf_free(&A);
			buf_free(&B);
		}
		return;
	}
	case E_MIN:
	case E_MAX:
		buf_puts(b, "((");
		pr(b, g, nm, e->a[0]);
		buf_puts(b, e->k == E_MIN ? ")<(" : ")>(");
		pr(b, g, nm, e->a[1]);
		buf_puts(b, ")?(");
		pr(b, g, nm, e->a[0]);
		buf_puts(b, "):(");
		pr(b, g, nm, e->a[1]);
		buf_puts(b, "))");
		return;
	}
}

void ex_print(Buf *b, const Sdfg *g, const Expr *e)
{
	ex_print_names(b, g, e, NULL);
}

void ex_print_names(Buf *b, const Sdfg *g, const Expr *e, const char *const *names)
{
	if (!e) {
		buf_puts(b, "?");
		return;
	}
	pr(b, g, names, e);
}

/* ---- printing (the dump's infix form) ------------------------------------------------
 * What ex_read reads back: Python's integer operators, so that floor
 * division and modulo are the operators themselves, not C's truncating ones
 * with corrections. Sums list their non-constant terms in canonical order
 * and the constant last, each term its coefficient first ("2*i0 + 64",
 * "-i0 + s0 - 1"); "//" and "%" take their operands bare when those are
 * symbols, non-negative integers or calls, else in parentheses
 * ("(i0 + 3)//4", "(i0//4)*s0"); Min and Max are calls. */
static void in_pr(Buf *b, const Sdfg *g, const Expr *e);

static void in_operand(Buf *b, const Sdfg *g, const Expr *e)
{
	if (e->k == E_SYM || (e->k == E_INT && e->v >= 0) || e->k == E_MIN || e->k == E_MAX) {
		in_pr(b, g, e);
		return;
	}
	buf_putc(b, '(');
	in_pr(b, g, e);
	buf_putc(b, ')');
}

/* A term, its coefficient negated when neg (a term of a sum after " - "). */
static void in_term(Buf *b, const Sdfg *g, const Expr *t, int neg)
{
	if (t->k != E_MUL) {
		if (neg) buf_putc(b, '-');
		in_pr(b, g, t);
		return;
	}
	int i = 0;
	if (t->a[0]->k == E_INT) {
		int64_t c = t->a[0]->v;
		if (neg && c != INT64_MIN) c = -c;
		if (c == -1) buf_putc(b, '-');
		else if (c != 1) buf_printf(b, "%lld*", (long long)c);
		i = 1;
	} else if (neg)
		buf_putc(b, '-');
	for (int first = 1; i < t->n; i++, first = 0) {
		if (!first) buf_putc(b, '*');
		in_operand(b, g, t->a[i]);
	}
}

static void in_pr(Buf *b, const Sdfg *g, const Expr *e)
{
	switch (e->k) {
	case E_INT:
		buf_printf(b, "%lld", (long long)e->v);
		return;
	case E_SYM:
		if (e->v >= 0 && e->v < g->nsyms) buf_puts(b, g->syms[e->v].name);
		else buf_printf(b, "_sym%lld", (long long)e->v);
		return;
	case E_MUL:
		in_term(b, g, e, 0);
		return;
	case E_ADD: {
		int first = 1;
		const Expr *k = NULL;
		for (int i = 0; i < e->n; i++) {
			const Expr *t = e->a[i];
			if (t->k == E_INT) {
				k = t;
				continue;
			}
			int neg = !first && term_neg(t);
			if (!first) buf_puts(b, neg ? " - " : " + ");
			in_term(b, g, t, neg);
			first = 0;
		}
		if (k) {
			if (first) buf_printf(b, "%lld", (long long)k->v);
			else if (k->v < 0 && k->v != INT64_MIN) buf_printf(b, " - %lld", -(long long)k->v);
			else buf_printf(b, " + %lld", (long long)k->v);
		}
		return;
	}
	case E_DIV:
	case E_MOD:
		in_operand(b, g, e->a[0]);
		buf_puts(b, e->k == E_DIV ? "//" : " % ");
		in_operand(b, g, e->a[1]);
		return;
	case E_MIN:
	case E_MAX:
		buf_puts(b, e->k == E_MIN ? "Min(" : "Max(");
		in_pr(b, g, e->a[0]);
		buf_puts(b, ", ");
		in_pr(b, g, e->a[1]);
		buf_putc(b, ')');
		return;
	}
}

void ex_print_infix(Buf *b, const Sdfg *g, const Expr *e)
{
	if (!e) {
		buf_puts(b, "?");
		return;
	}
	in_pr(b, g, e);
}

/* ---- parsing -----------------------------------------------------------------------
 * One recursive-descent parser reads both forms torch.export writes: sympy
 * srepr (function calls: Add(...), Mul(...), Symbol('s0', integer=True),
 * Integer(4), FloorDiv, Mod, PythonMod, CleanDiv, Min, Max, Pow) and the
 * older infix strings ("2*s0 + 4", "(s0//2)", "s0 % 3", "Max(2, s0)"):
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '//' | '%') unary)*
 *   unary   := '-' unary | power
 *   power   := primary ('**' unary)?
 *   primary := INT | NAME | NAME '(' args ')' | '(' expr ')'
 *
 * True division '/', Rational and Float are rejected: doccc's sizes are
 * integers.
 *
 * The text comes from the input file, so the parser bounds everything the
 * canonical form could otherwise blow up or wrap (each limit is a message,
 * never a crash or a wrong value):
 *  - nesting depth at most EX_MAX_DEPTH (the parser and every Expr walk
 *    recurse);
 *  - every intermediate result at most EX_MAX_NODES nodes as printed
 *    (ex_nodes: Min, Max and divisions print their arguments more than
 *    once, so nesting them grows the C text exponentially), and a product
 *    is refused before it is computed when its operands' sizes multiply
 *    past EX_MAX_WORK (distributing sums and powers grows exponentially);
 *  - no coefficient can wrap: the constructors add and multiply
 *    coefficients, and every coefficient of a result is bounded by the sum
 *    (for a product: the product) of the operands' coefficient norms
 *    (ex_norm), so an operation runs only when that bound fits in int64;
 *  - a divisor must be provably non-zero from the symbols' ranges;
 *  - a symbol name must be a C identifier that names the symbol itself
 *    (not a keyword or a name already taken by a container, which the IR
 *    would rename, so that the next mention would make a second symbol).
 *
 * ex_read (an SDFG dump's expressions) is the same parser in a stricter
 * mode: names are looked up, never created; the only calls are Min and
 * Max; no powers; and a '-' right before digits makes a negative literal,
 * so that INT64_MIN, which ex_print_infix writes as such, reads back. */
enum { EX_MAX_DEPTH = 64, EX_MAX_NODES = 4096, EX_MAX_WORK = 1 << 20 };

typedef struct {
	Sdfg *g;
	const char *s, *p;
	const char *err;
	int depth;
	int read;             /* ex_read's mode */
	SymFind find;         /* ex_read: names to symbol ids */
	void *ctx;
} Parser;

static void skipws(Parser *P)
{
	while (*P->p && isspace((unsigned char)*P->p)) P->p++;
}

static int accept(Parser *P, const char *tok)
{
	skipws(P);
	size_t n = strlen(tok);
	if (strncmp(P->p, tok, n)) return 0;
	/* '*' must not match the first half of '**', nor '/' of '//'. */
	if (n == 1 && (tok[0] == '*' || tok[0] == '/') && P->p[1] == tok[0]) return 0;
	P->p += n;
	return 1;
}

static Expr *perr(Parser *P, const char *msg)
{
	if (!P->err)
		P->err = arena_printf(P->g->arena, "%s at offset %d in '%s'", msg, (int)(P->p - P->s), P->s);
	return NULL;
}

static int isname0(int c) { return isalpha(c) || c == '_'; }
static int isname1(int c) { return isalnum(c) || c == '_'; }

/* A NAME token into buf (truncated names are rejected). */
static int read_name(Parser *P, char *buf, size_t cap)
{
	skipws(P);
	size_t n = 0;
	if (!isname0((unsigned char)*P->p)) return 0;
	while (isname1((unsigned char)P->p[n])) n++;
	if (n >= cap) return 0;
	memcpy(buf, P->p, n);
	buf[n] = 0;
	P->p += n;
	return 1;
}

/* The shape symbol called name, created if new. positive / nonneg from the
 * sympy assumptions give its lower bound (1 by default: sizes). */
static Expr *shape_sym(Parser *P, const char *name, int64_t lo)
{
	Sdfg *g = P->g;
	for (int i = 0; i < g->nsyms; i++)
		if (g->syms[i].kind == SYM_SHAPE && !strcmp(g->syms[i].name, name)) return ex_sym(g, i);
	if (!isname0((unsigned char)name[0])) return perr(P, "symbol name is not an identifier");
	for (const char *c = name; *c; c++)
		if (!isname1((unsigned char)*c)) return perr(P, "symbol name is not an identifier");
	int id = sdfg_add_sym(g, name, SYM_SHAPE, lo, INT64_MAX / 2);
	if (strcmp(g->syms[id].name, name)) {
		g->nsyms--;   /* renamed: take the new symbol back (see the top of the parser) */
		return perr(P, "symbol name is a C keyword or already names something else");
	}
	return ex_sym(g, id);
}

/* The size of e as ex_print writes it, in nodes, counted up to a little
 * past limit: shared subtrees count at each use, and the arguments of Min
 * and Max twice, a division's or modulo's four times, as they are printed
 * (so that nesting them cannot make the printed form exponential). */
static int64_t ex_nodes(const Expr *e, int64_t limit)
{
	int64_t n = 1;
	int times = e->k == E_MIN || e->k == E_MAX ? 2 : e->k == E_DIV || e->k == E_MOD ? 4 : 1;
	for (int i = 0; i < e->n && n <= limit; i++) n += times * ex_nodes(e->a[i], (limit - n) / times);
	return n;
}

/* The sum of |c| over the coefficients c of e's terms (an atom's is 1),
 * or -1 when it does not fit in int64. */
static int64_t ex_norm(const Expr *e)
{
	if (e->k == E_INT) return e->v == INT64_MIN ? -1 : e->v < 0 ? -e->v : e->v;
	if (e->k == E_MUL) return e->a[0]->k == E_INT ? ex_norm(e->a[0]) : 1;
	if (e->k != E_ADD) return 1;
	int64_t sum = 0;
	for (int i = 0; i < e->n; i++) {
		int64_t t = ex_norm(e->a[i]);
		if (t < 0 || ck_add(sum, t, &sum)) return -1;
	}
	return sum;
}

/* a op b, op one of + - * / % < > (the last two Min and Max), within the
 * limits described at the top of the parser; NULL (reported) otherwise. */
static Expr *p_bin(Parser *P, int op, Expr *a, Expr *b)
{
	Sdfg *g = P->g;
	int64_t na, nb, bound, lo, hi;
	if (!a || !b) return NULL;
	na = ex_norm(a);
	nb = ex_norm(b);
	if (na < 0 || nb < 0 || (op == '*' ? ck_mul(na, nb, &bound) : ck_add(na, nb, &bound)))
		return perr(P, "integer constants too large (the result would overflow 64 bits)");
	if (op == '*' && ex_nodes(a, EX_MAX_NODES) * ex_nodes(b, EX_MAX_NODES) > EX_MAX_WORK)
		return perr(P, "expression too large");
	Expr *r;
	switch (op) {
	case '+': r = ex_add(g, a, b); break;
	case '-': r = ex_sub(g, a, b); break;
	case '*': r = ex_mul(g, a, b); break;
	case '<': r = ex_min(g, a, b); break;
	case '>': r = ex_max(g, a, b); break;
	default:
		ex_range(g, b, &lo, &hi);
		if (lo <= 0 && hi >= 0) return perr(P, "divisor may be zero");
		r = op == '/' ? ex_div(g, a, b) : ex_mod(g, a, b);
		break;
	}
	if (ex_nodes(r, EX_MAX_NODES) > EX_MAX_NODES) return perr(P, "expression too large");
	return r;
}

static Expr *p_expr(Parser *P);

/* Symbol('name', integer=True, positive=True) after "Symbol(". */
static Expr *p_symbol(Parser *P)
{
	char name[256];
	skipws(P);
	char q = *P->p;
	if (q != '\'' && q != '"') return perr(P, "expected a quoted symbol name");
	const char *s = ++P->p;
	while (*P->p && *P->p != q) P->p++;
	if (*P->p != q || P->p - s == 0 || P->p - s >= (long)sizeof name) return perr(P, "bad symbol name");
	memcpy(name, s, (size_t)(P->p - s));
	name[P->p - s] = 0;
	P->p++;
	int positive = 0, nonneg = 0;
	while (accept(P, ",")) {
		char key[64], val[64];
		if (!read_name(P, key, sizeof key) || !accept(P, "=") || !read_name(P, val, sizeof val))
			return perr(P, "bad symbol assumption");
		if (!strcmp(val, "True")) {
			if (!strcmp(key, "positive")) positive = 1;
			if (!strcmp(key, "nonnegative")) nonneg = 1;
		}
	}
	if (!accept(P, ")")) return perr(P, "expected ')'");
	return shape_sym(P, name, positive || !nonneg ? 1 : 0);
}

/* Comma-separated arguments up to ')' (the '(' was consumed). */
static int p_args(Parser *P, Expr **args, int max)
{
	int n = 0;
	if (accept(P, ")")) return 0;
	do {
		if (n == max) {
			perr(P, "too many arguments");
			return -1;
		}
		if (!(args[n++] = p_expr(P))) return -1;
	} while (accept(P, ","));
	if (!accept(P, ")")) {
		perr(P, "expected ')'");
		return -1;
	}
	return n;
}

static Expr *p_pow(Parser *P, Expr *x, Expr *k)
{
	int64_t n;
	if (!ex_isint(k, &n) || n < 0 || n > 16) return perr(P, "only small non-negative integer powers are supported");
	Expr *r = ex_int(P->g, 1);
	while (r && n-- > 0) r = p_bin(P, '*', r, x);
	return r;
}

static Expr *p_call(Parser *P, const char *fn)
{
	Sdfg *g = P->g;
	if (P->read && strcmp(fn, "Min") && strcmp(fn, "Max")) {
		P->err = arena_printf(g->arena, "unknown function '%s' in '%s' (only Min and Max)", fn, P->s);
		return NULL;
	}
	if (!strcmp(fn, "Symbol")) return p_symbol(P);
	if (!strcmp(fn, "Rational") || !strcmp(fn, "Float") || !strcmp(fn, "IntTrueDiv") || !strcmp(fn, "FloatTrueDiv"))
		return perr(P, "non-integer expression is not supported");
	Expr *a[64];
	int n = p_args(P, a, 64);
	if (n < 0) return NULL;
	struct { const char *name; int nargs; } tab[] = {
		{"Integer", 1}, {"Add", -1}, {"Mul", -1}, {"FloorDiv", 2}, {"CleanDiv", 2},
		{"Mod", 2}, {"PythonMod", 2}, {"Max", -1}, {"Min", -1}, {"Pow", 2},
	};
	int found = -1;
	for (int i = 0; i < (int)COUNTOF(tab); i++)
		if (!strcmp(fn, tab[i].name)) found = i;
	if (found < 0) {
		P->err = arena_printf(g->arena, "unsupported function '%s' in '%s'", fn, P->s);
		return NULL;
	}
	if (tab[found].nargs > 0 ? n != tab[found].nargs : n < 1)
		return perr(P, "wrong number of arguments");
	if (!strcmp(fn, "Integer")) {
		if (a[0]->k != E_INT) return perr(P, "Integer() of a non-integer");
		return a[0];
	}
	if (!strcmp(fn, "FloorDiv") || !strcmp(fn, "CleanDiv")) return p_bin(P, '/', a[0], a[1]);
	if (!strcmp(fn, "Mod") || !strcmp(fn, "PythonMod")) return p_bin(P, '%', a[0], a[1]);
	if (!strcmp(fn, "Pow")) return p_pow(P, a[0], a[1]);
	int op = !strcmp(fn, "Add") ? '+' : !strcmp(fn, "Mul") ? '*' : !strcmp(fn, "Max") ? '>' : '<';
	Expr *r = a[0];
	for (int i = 1; i < n && r; i++) r = p_bin(P, op, r, a[i]);
	return r;
}

/* An integer literal at P->p, negated when neg (which admits -2^63). */
static Expr *p_int(Parser *P, int neg)
{
	uint64_t v = 0, max = (uint64_t)INT64_MAX + (neg != 0);
	while (isdigit((unsigned char)*P->p)) {
		unsigned d = (unsigned)(*P->p - '0');
		if (v > (max - d) / 10) return perr(P, "integer too large");
		v = v * 10 + d;
		P->p++;
	}
	if (*P->p == '.' || *P->p == 'e' || *P->p == 'E') return perr(P, "non-integer constant");
	return ex_int(P->g, neg ? (int64_t)(0 - v) : (int64_t)v);
}

static Expr *p_primary(Parser *P)
{
	skipws(P);
	if (accept(P, "(")) {
		Expr *e = p_expr(P);
		if (!e) return NULL;
		if (!accept(P, ")")) return perr(P, "expected ')'");
		return e;
	}
	if (isdigit((unsigned char)*P->p)) return p_int(P, 0);
	char name[256];
	if (!read_name(P, name, sizeof name)) return perr(P, "expected an expression");
	if (accept(P, "(")) return p_call(P, name);
	if (P->read) {
		int id = P->find ? P->find(P->ctx, name) : -1;
		for (int i = 0; !P->find && i < P->g->nsyms && id < 0; i++)
			if (!strcmp(P->g->syms[i].name, name)) id = i;
		if (id < 0 || id >= P->g->nsyms) {
			P->err = arena_printf(P->g->arena, "unknown symbol '%s' in '%s'", name, P->s);
			return NULL;
		}
		return ex_sym(P->g, id);
	}
	if (!strcmp(name, "oo") || !strcmp(name, "zoo") || !strcmp(name, "nan") || !strcmp(name, "int_oo") ||
	    !strcmp(name, "True") || !strcmp(name, "False"))
		return perr(P, "not an integer expression");
	return shape_sym(P, name, 1);
}

/* Every recursion of the parser passes through here. */
static Expr *p_unary(Parser *P)
{
	Expr *x;
	if (P->depth >= EX_MAX_DEPTH) return perr(P, "expression nested too deeply");
	P->depth++;
	if (accept(P, "-")) {
		skipws(P);
		if (P->read && isdigit((unsigned char)*P->p)) {
			x = p_int(P, 1);
		} else {
			x = p_unary(P);
			x = x ? p_bin(P, '*', x, ex_int(P->g, -1)) : NULL;
		}
	} else if (accept(P, "+")) {
		x = p_unary(P);
	} else {
		x = p_primary(P);
		if (x && !P->read && accept(P, "**")) {
			Expr *k = p_unary(P);
			x = k ? p_pow(P, x, k) : NULL;
		}
	}
	P->depth--;
	return x;
}

static Expr *p_term(Parser *P)
{
	Expr *x = p_unary(P);
	while (x) {
		if (accept(P, "*")) {
			x = p_bin(P, '*', x, p_unary(P));
		} else if (accept(P, "//")) {
			x = p_bin(P, '/', x, p_unary(P));
		} else if (accept(P, "%")) {
			x = p_bin(P, '%', x, p_unary(P));
		} else if (accept(P, "/")) {
			return perr(P, "true division is not an integer expression");
		} else break;
	}
	return x;
}

static Expr *p_expr(Parser *P)
{
	Expr *x = p_term(P);
	while (x) {
		if (accept(P, "+")) x = p_bin(P, '+', x, p_term(P));
		else if (accept(P, "-")) x = p_bin(P, '-', x, p_term(P));
		else break;
	}
	return x;
}

static Expr *parse_all(Parser *P, const char **err)
{
	Expr *e = p_expr(P);
	if (e) {
		skipws(P);
		if (*P->p) e = perr(P, "unexpected text");
	}
	if (!e && err) *err = P->err ? P->err : "bad expression";
	return e;
}

Expr *ex_parse(Sdfg *g, const char *s, const char **err)
{
	Parser P = {g, s ? s : "", s ? s : "", NULL, 0, 0, NULL, NULL};
	return parse_all(&P, err);
}

Expr *ex_read(Sdfg *g, const char *s, SymFind find, void *ctx, const char **err)
{
	Parser P = {g, s ? s : "", s ? s : "", NULL, 0, 1, find, ctx};
	return parse_all(&P, err);
}
