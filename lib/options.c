/*
 * options.c - compilation options: defaults, the YAML options file (libyaml)
 * and single settings from the command line.
 *
 * The seven top-level options are described once, in opt_table; validation
 * is driven by that table (a "string" with a list of values is a choice, a
 * "string" without one must be non-empty, a "bool" takes YAML's spellings,
 * "mapping" is pass_options), so adding an option touches the table, the
 * Options struct and opt_store. The YAML file is loaded as a libyaml
 * document; every node carries its start mark, which gives the
 * "file:line:col" (1-based) of diagnostics: of the value for a bad value, of
 * the key for an unknown key. Later settings win: the file overrides the
 * defaults, CLI flags (opt_set, opt_add_passopt) override the file, and
 * opt_find_passopt returns the last entry for a key.
 *
 * pass_options entries are stored as text with their location, not checked
 * here: ir/passes knows the passes and their parameters. Only the first
 * YAML document of a file is read; YAML null (an empty value, "~", "null")
 * is an error for a top-level option, except that an empty pass_options is
 * allowed.
 *
 * Invariants: every string in Options lives in o->arena; a load that reports
 * any error returns -1, after reporting every problem in the file.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "lib.h"

const OptionInfo opt_table[] = {
	{"target", "string", "none", "",
	 "code generation target: plain C, vectorized C on one core or on all (OpenMP), or a GPU"},
	{"category", "string", "server", "edge, desktop, server",
	 "class of machine the code is tuned for; picks the default march and tuning"},
	{"march", "string", "", "",
	 "instruction set to compile for (e.g. native, x86-64-v3, armv8.2-a+dotprod, cortex-a76, sm_90, gfx942); "
	 "default from category"},
	{"triple", "string", "", "",
	 "the machine to compile for: x86_64-linux-gnu or aarch64-linux-gnu (a cross build); default DOCC_TRIPLE, "
	 "else this machine"},
	{"approximate_math", "bool", "target", "true, false",
	 "fast approximate math functions (exp, tanh, erf, division...); default true on cuda and rocm, "
	 "false on CPU targets"},
	{"contraction_precision", "string", "highest", "highest, high, medium",
	 "highest: fp32 accumulation everywhere; high/medium: allow tf32/bf16-class contractions on "
	 "targets that have them (GPU, AMX)"},
	{"remote_tuning", "bool", "false", "true, false",
	 "docc's spelling: take each step's schedule from a tuning database that doccc tune filled (tuning.db, else "
	 "DOCC_TUNING_DB), or from the nearest tuned step's; false: only tuning.db, when set"},
	{"pass_options", "mapping", "", "",
	 "per-pass settings, as 'pass: {option: value}' or 'pass.option: value'"},
};
const int opt_ntable = (int)COUNTOF(opt_table);

void opt_init(Options *o, Arena *a)
{
	memset(o, 0, sizeof(*o));
	o->arena = a;
	o->target = arena_strdup(a, "none");
	o->category = arena_strdup(a, "server");
	o->march = NULL;
	o->approximate_math = -1; /* unset: the target decides */
	o->contraction_precision = arena_strdup(a, "highest");
}

static const OptionInfo *opt_info(const char *name)
{
	for (int i = 0; i < opt_ntable; i++)
		if (!strcmp(opt_table[i].name, name))
			return &opt_table[i];
	return NULL;
}

/* YAML 1.1 booleans, any case; 0/1 into *out, or -1. */
static int opt_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = {"true", "yes", "on"};
	static const char *const no[] = {"false", "no", "off"};
	for (size_t i = 0; i < COUNTOF(yes); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

/* Is val one of the ", "-separated words of list? */
static int opt_in_list(const char *val, const char *list)
{
	size_t n = strlen(val);
	for (const char *p = list; *p;) {
		size_t w = strcspn(p, ",");
		if (w == n && !memcmp(p, val, n))
			return 1;
		p += w;
		while (*p == ',' || *p == ' ')
			p++;
	}
	return 0;
}

/* Store a validated value. */
static void opt_store(Options *o, const OptionInfo *info, const char *val, int b)
{
	const char *n = info->name;
	if (!strcmp(n, "target"))
		o->target = arena_strdup(o->arena, val);
	else if (!strcmp(n, "category"))
		o->category = arena_strdup(o->arena, val);
	else if (!strcmp(n, "march"))
		o->march = arena_strdup(o->arena, val);
	else if (!strcmp(n, "triple"))
		o->triple = arena_strdup(o->arena, val);
	else if (!strcmp(n, "approximate_math"))
		o->approximate_math = b;
	else if (!strcmp(n, "contraction_precision"))
		o->contraction_precision = arena_strdup(o->arena, val);
	else if (!strcmp(n, "remote_tuning"))
		o->remote_tuning = b;
	else
		DOCC_UNREACHABLE();
}

/* The values option info may take: the table's, or for the target the
 * caller's list of backends (lib knows none of them). */
static const char *opt_values(const Options *o, const OptionInfo *info)
{
	return !strcmp(info->name, "target") && o->targets ? o->targets : info->values;
}

/* Check and store a scalar option. val is the text, or NULL when the value
 * is not a scalar; then got describes it ("a mapping", "null"). 0 or -1. */
static int opt_apply(Options *o, const OptionInfo *info, const char *val, const char *got,
                     const char *loc)
{
	Buf g = {0};
	if (val)
		buf_printf(&g, "'%s'", val);
	else
		buf_puts(&g, got ? got : "nothing");
	int rc = 0, b = 0;
	if (!strcmp(info->type, "bool")) {
		if (!val || opt_parse_bool(val, &b) != 0) {
			diag_error(loc, "option '%s' must be a boolean (true/false, yes/no, on/off) (got %s)",
			           info->name, g.s);
			rc = -1;
		}
	} else if (!strcmp(info->type, "string") && *opt_values(o, info)) {
		if (!val || !opt_in_list(val, opt_values(o, info))) {
			diag_error(loc, "option '%s' must be one of %s (got %s)", info->name, opt_values(o, info), g.s);
			rc = -1;
		}
	} else if (!strcmp(info->type, "string")) {
		if (!val || !*val) {
			diag_error(loc, "option '%s' must be a non-empty string (got %s)", info->name, g.s);
			rc = -1;
		}
	} else {
		diag_error(loc, "option '%s' cannot be set from a single value", info->name);
		rc = -1;
	}
	if (rc == 0)
		opt_store(o, info, val, b);
	buf_free(&g);
	return rc;
}

int opt_set(Options *o, const char *key, const char *val, const char *loc)
{
	const OptionInfo *info = opt_info(key);
	if (!info) {
		diag_error(loc, "unknown option '%s'", key);
		return -1;
	}
	return opt_apply(o, info, val, NULL, loc);
}

void opt_add_passopt(Options *o, const char *key, const char *val, const char *loc)
{
	PassOpt p = {
		arena_strdup(o->arena, key),
		arena_strdup(o->arena, val),
		arena_strdup(o->arena, loc ? loc : ""),
	};
	VEC_PUSH(o->arena, o->passopts, o->npassopts, o->cappassopts, p);
}

const PassOpt *opt_find_passopt(const Options *o, const char *key)
{
	for (int i = o->npassopts - 1; i >= 0; i--)
		if (!strcmp(o->passopts[i].key, key))
			return &o->passopts[i];
	return NULL;
}

/* ---- the YAML file ---- */

typedef struct {
	Options *o;
	yaml_document_t *doc;
	const char *path;
} OptLoad;

/* "path:line:col" of a node, in the options arena. */
static char *opt_loc(OptLoad *l, const yaml_node_t *n)
{
	return arena_printf(l->o->arena, "%s:%zu:%zu", l->path, n->start_mark.line + 1,
	                    n->start_mark.column + 1);
}

/* A plain empty scalar, "~" or "null": YAML's null. */
static int opt_is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	const char *s = (const char *)n->data.scalar.value;
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* Text of a scalar node, or NULL for anything else. */
static const char *opt_scalar(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const char *opt_kind(const yaml_node_t *n)
{
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a sequence";
	return opt_is_null(n) ? "null" : "a scalar";
}

/* pass_options: its value node v. Reports every bad entry; 0 or -1. */
static int opt_load_passopts(OptLoad *l, yaml_node_t *v)
{
	if (opt_is_null(v))
		return 0; /* "pass_options:" with nothing under it */
	if (v->type != YAML_MAPPING_NODE) {
		diag_error(opt_loc(l, v), "option 'pass_options' must be a mapping (got %s)", opt_kind(v));
		return -1;
	}
	int rc = 0;
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
		yaml_node_t *pv = yaml_document_get_node(l->doc, p->value);
		const char *key = opt_scalar(k);
		if (!key || !*key) {
			diag_error(opt_loc(l, k), "pass_options: a key must be a pass name or 'pass.option'");
			rc = -1;
			continue;
		}
		const char *dot = strchr(key, '.');
		if (pv->type == YAML_MAPPING_NODE && !dot) {
			/* Nested form: pass: {option: value, ...}. */
			for (yaml_node_pair_t *q = pv->data.mapping.pairs.start; q < pv->data.mapping.pairs.top;
			     q++) {
				yaml_node_t *ik = yaml_document_get_node(l->doc, q->key);
				yaml_node_t *iv = yaml_document_get_node(l->doc, q->value);
				const char *opt = opt_scalar(ik);
				if (!opt || !*opt || strchr(opt, '.')) {
					diag_error(opt_loc(l, ik), "pass_options: '%s' needs option names as keys", key);
					rc = -1;
				} else if (iv->type != YAML_SCALAR_NODE) {
					diag_error(opt_loc(l, iv), "pass option '%s.%s' must be a scalar (got %s)", key,
					           opt, opt_kind(iv));
					rc = -1;
				} else {
					char *full = arena_printf(l->o->arena, "%s.%s", key, opt);
					opt_add_passopt(l->o, full, opt_scalar(iv), opt_loc(l, iv));
				}
			}
		} else if (pv->type == YAML_SCALAR_NODE && dot && dot != key && dot[1]) {
			/* Flat form: pass.option: value. */
			opt_add_passopt(l->o, key, opt_scalar(pv), opt_loc(l, pv));
		} else if (dot) {
			diag_error(opt_loc(l, dot != key && dot[1] ? pv : k),
			           "pass option '%s' must be written 'pass.option: value' (got %s)", key,
			           dot != key && dot[1] ? opt_kind(pv) : "a malformed key");
			rc = -1;
		} else {
			diag_error(opt_loc(l, pv),
			           "pass_options: '%s' must map to {option: value, ...} (got %s); or write "
			           "'%s.option: value'",
			           key, opt_kind(pv), key);
			rc = -1;
		}
	}
	return rc;
}

/* The top-level mapping. 0 or -1. */
static int opt_load_root(OptLoad *l, yaml_node_t *root)
{
	if (root->type != YAML_MAPPING_NODE) {
		diag_error(opt_loc(l, root), "an options file must be a mapping of option names to values "
		                             "(got %s)", opt_kind(root));
		return -1;
	}
	int rc = 0;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(l->doc, p->value);
		const char *key = opt_scalar(k);
		const OptionInfo *info = key ? opt_info(key) : NULL;
		if (!info) {
			if (key)
				diag_warn(opt_loc(l, k), "unknown option '%s' ignored", key);
			else
				diag_warn(opt_loc(l, k), "key that is %s ignored", opt_kind(k));
			continue;
		}
		if (!strcmp(info->type, "mapping")) {
			if (opt_load_passopts(l, v) != 0)
				rc = -1;
			continue;
		}
		const char *val = v->type == YAML_SCALAR_NODE && !opt_is_null(v) ? opt_scalar(v) : NULL;
		if (opt_apply(l->o, info, val, opt_kind(v), opt_loc(l, v)) != 0)
			rc = -1;
	}
	return rc;
}

int opt_load_yaml(Options *o, const char *path)
{
	size_t len;
	char *text = file_read(path, &len);
	if (!text)
		return -1;
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser)) {
		diag_error(path, "cannot initialise the YAML parser");
		free(text);
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	yaml_document_t doc;
	int rc = 0;
	if (!yaml_parser_load(&parser, &doc)) {
		/* yaml_parser_load has already freed the partial document. */
		Buf loc = {0};
		buf_printf(&loc, "%s:%zu:%zu", path, parser.problem_mark.line + 1,
		           parser.problem_mark.column + 1);
		if (parser.context)
			diag_error(loc.s, "%s %s", parser.problem ? parser.problem : "malformed YAML",
			           parser.context);
		else
			diag_error(loc.s, "%s", parser.problem ? parser.problem : "malformed YAML");
		buf_free(&loc);
		rc = -1;
	} else {
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		OptLoad l = {o, &doc, path};
		/* No root, or a lone "---": an empty file, no options. */
		if (root && !opt_is_null(root))
			rc = opt_load_root(&l, root);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	free(text);
	return rc;
}
