/*
 * import.h - the importer's private modules, shared by ir/import.c and
 * ir/import/ only: the lowerings (ir/lower/) never include it, and no
 * function of ir/lower/ calls one declared here (test/test_structure.py).
 * The importer works on the lowerings' Imp (ir/lower/lower.h) and uses
 * their API; what it adds is here, sectioned by file.
 */
#ifndef DOCCC_IMPORT_H
#define DOCCC_IMPORT_H

#include "../lower/lower.h"

/* What only the importer reads: where the weights are (an open .pt2 archive
 * and its configs, an extracted archive's root, or a --weights safetensors
 * file) and how many bytes of them are bound. Imp.files points here. */
typedef struct ImpFiles {
	Pt2 *zip;
	char *dir;                 /* extracted archive root ("…/"), or NULL */
	cJSON *wcfg, *ccfg;        /* weights / constants configs */
	Safetensors *st;           /* --weights, or NULL */
	const char *stpath;
	int64_t wbytes;            /* weight bytes bound so far (DOCC_MAX_WEIGHT_BYTES) */
	const char **written;      /* the buffer placeholders the program writes (state.c) */
	int nwritten, capwritten;
} ImpFiles;

/* shapes.c: --shape, --dim, --max-dim and the export's symbols bound before
 * the nodes are read (run-time dims made here); -1 after the messages. The
 * sizes array of user input spec (an input_specs entry) and its name. */
int shapes_bind(Imp *m, const ImportArgs *args);
cJSON *shapes_input_sizes(Imp *m, cJSON *spec, const char **name);

/* weights.c: the source of weight fqn for placeholder (isconst: look in
 * data/constants first), checked against the graph's metadata want; NULL
 * after a message. weight_make is its ConstSrc.make, reading the bytes. */
typedef struct WeightSrc WeightSrc;
const WeightSrc *weight_load(Imp *m, const char *fqn, int isconst, const Meta *want, const char *placeholder);
int weight_make(Sdfg *g, const ConstSrc *s, void *dst);

/* state.c: find the buffers the program writes (before the inputs are
 * imported); is placeholder one of them; make buffer placeholder nm, of
 * initial value init (a constant), a state bound to nm (its id); after the
 * nodes and outputs, write every state from the value the program left in
 * it (-1 after messages). */
int state_scan(Imp *m);
int state_written(Imp *m, const char *placeholder);
int state_new(Imp *m, const char *nm, int init);
int state_commit(Imp *m);

/* census.c: one node of target for doccc check (bad: it did not lower;
 * msgs: its captured messages); the export's symbols for the check, after
 * shapes_bind; one node of target for the compile report. */
void census_node(Census *c, const char *target, int bad, const char *msgs);
void census_syms(Imp *m);
void census_add(Sdfg *g, const char *target);

#endif
