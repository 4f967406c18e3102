/*
 * weights.c - the program's weights: parameters, buffers and lifted
 * constants, bound through graph_module.signature.input_specs (never by
 * guessing from names) and read only when the compile needs their bytes
 * (ir/consts.c).
 *
 * A weight's bytes are in one of three places: an entry of the .pt2
 * archive (data/weights or data/constants, found through the archive's
 * configs), a data file of an extracted archive, or a --weights
 * safetensors file (mapped). weight_load checks the stored dtype, sizes
 * and strides against the graph's metadata and that the view fits its
 * storage, and counts the weight against DOCC_MAX_WEIGHT_BYTES; it reads
 * nothing. weight_make, the constant's source, reads the bytes later and
 * gathers a strided view into contiguous order, so that doccc holds one
 * weight at a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../lower/lower.h"
#include "import.h"

/* Where a weight's bytes are, read when the compile needs them (consts.c):
 * a storage (an archive entry, an extracted archive's data file, or bytes
 * of the mapped safetensors file) of len bytes, and the strided view of it
 * the weight is (element strides and offset; contig when it is the first
 * numel elements in order). len 0 with numel > 0 is a fake tensor: zeros.
 * A view of part of a storage reads only [lo, hi) of it, so that weights
 * sharing one storage do not each read all of it. */
struct WeightSrc {
	Pt2 *zip;
	const char *rel;     /* archive entry, or the data file's path when zip is NULL */
	const void *mapped;  /* safetensors: the bytes themselves */
	const char *where;   /* for messages: the file */
	size_t len;
	size_t lo, hi;       /* the bytes of the storage the view reads */
	int rank, esz, contig;
	int64_t shape[MAXDIM], stride[MAXDIM], offset;
};

/* Gather a tensor (sizes/strides/offset in elements) into contiguous bytes. */
static void gather(char *dst, const char *src, int rank, const int64_t *shape, const int64_t *stride, int64_t off, int esz)
{
	int64_t idx[MAXDIM] = {0};
	int64_t n = 1;
	for (int i = 0; i < rank; i++)
		n *= shape[i];
	for (int64_t k = 0; k < n; k++) {
		int64_t e = off;
		for (int i = 0; i < rank; i++)
			e += idx[i] * stride[i];
		memcpy(dst + k * esz, src + e * esz, (size_t)esz);
		for (int i = rank - 1; i >= 0; i--) {
			if (++idx[i] < shape[i])
				break;
			idx[i] = 0;
		}
	}
}

/* Bytes [lo, hi) of the storage into dst. */
static int read_storage(const WeightSrc *w, size_t lo, size_t hi, void *dst)
{
	if (w->zip)
		return lo == 0 && hi == w->len ? pt2_read_into(w->zip, w->rel, dst, w->len)
		                               : pt2_read_range(w->zip, w->rel, lo, dst, hi - lo);
	return file_read_at(w->rel, (int64_t)lo, dst, hi - lo);
}

/* ConstSrc.make of an input's weight. */
int weight_make(Sdfg *g, const ConstSrc *s, void *dst)
{
	(void)g;
	const WeightSrc *w = s->ctx;
	int64_t n = 1;
	for (int i = 0; i < w->rank; i++)
		n *= w->shape[i];
	size_t bytes = (size_t)(n * w->esz);
	if (!w->len || !n) {
		memset(dst, 0, bytes);
		return 0;
	}
	if (w->mapped) {
		if (w->contig)
			memcpy(dst, w->mapped, bytes);
		else
			gather(dst, w->mapped, w->rank, w->shape, w->stride, w->offset, w->esz);
		file_map_drop(w->mapped, w->len);
		return 0;
	}
	if (w->contig && w->lo == 0 && w->hi == bytes)
		return read_storage(w, 0, bytes, dst);
	char *tmp = malloc(w->hi - w->lo);
	if (!tmp) {
		diag_error(w->where, "out of memory reading '%s' (%zu bytes)", w->rel, w->hi - w->lo);
		return -1;
	}
	int rc = read_storage(w, w->lo, w->hi, tmp);
	if (!rc) /* the view's first element is the span's */
		gather(dst, tmp, w->rank, w->shape, w->stride, 0, w->esz);
	free(tmp);
	return rc;
}

/* The size of storage rel of the archive or the extracted archive; -1 reported. */
static int storage_size(Imp *m, WeightSrc *w, const char *rel)
{
	ImpFiles *f = m->files;
	if (f->zip) {
		w->zip = f->zip;
		w->rel = rel;
		w->where = m->path;
		return pt2_size(f->zip, rel, &w->len);
	}
	w->rel = arena_printf(m->a, "%s%s", f->dir, rel);
	w->where = w->rel;
	struct stat sb;
	int err = stat(w->rel, &sb) != 0 ? errno : 0;
	if (err || !S_ISREG(sb.st_mode)) {
		diag_error(w->rel, "cannot read: %s", err ? strerror(err) : "not a regular file");
		return -1;
	}
	w->len = (size_t)sb.st_size;
	return 0;
}

/* The source of weight fqn (kind: "parameter", "buffer", "constant"),
 * checked against the graph's metadata for the placeholder: sizes, dtype,
 * and that the view fits its storage (the bytes are read later). */
const WeightSrc *weight_load(Imp *m, const char *fqn, int isconst, const Meta *want, const char *placeholder)
{
	ImpFiles *f = m->files;
	int esz = dtype_info[want->dt].size;
	int64_t bytes = lw_tensor_bytes(want->rank, want->shape, esz), numel = bytes / esz;  /* lw_read_meta checked it */
	if (ck_add(f->wbytes, bytes, &f->wbytes) || f->wbytes > DOCC_MAX_WEIGHT_BYTES) {
		diag_error(m->path, "graph input '%s': the weights are too large (more than %lld bytes in all)", placeholder,
		           (long long)DOCC_MAX_WEIGHT_BYTES);
		return NULL;
	}
	WeightSrc *w = arena_alloc(m->a, sizeof *w);
	w->rank = want->rank;
	w->esz = esz;
	w->contig = 1;
	memcpy(w->shape, want->shape, sizeof w->shape);
	if (f->st) {
		const StTensor *t = st_find(f->st, fqn);
		if (!t) {
			diag_error(f->stpath, "no tensor '%s' (needed for graph input '%s')", fqn, placeholder);
			return NULL;
		}
		int dt = dtype_from_st(t->dtype);
		int same = dt == want->dt && t->rank == want->rank;
		for (int i = 0; same && i < t->rank; i++)
			same = t->shape[i] == want->shape[i];
		if (!same) {
			diag_error(f->stpath, "tensor '%s' has dtype %s and rank %d; the graph expects %s with the shape of '%s'",
			           fqn, t->dtype, t->rank, dtype_info[want->dt].name, placeholder);
			return NULL;
		}
		if ((int64_t)t->nbytes != bytes) {
			diag_error(f->stpath, "tensor '%s' holds %zu bytes; its shape needs %lld", fqn, t->nbytes, (long long)bytes);
			return NULL;
		}
		w->mapped = t->data;
		w->len = t->nbytes;
		w->where = f->stpath;
		w->rel = fqn;
		return w;
	}
	if (!f->zip && !f->dir) {
		diag_error(m->path, "the program needs weights (first: '%s' for graph input '%s'); pass --weights FILE.safetensors "
		                    "or compile the .pt2 archive", fqn, placeholder);
		return NULL;
	}
	cJSON *cfgs[2] = {isconst ? f->ccfg : f->wcfg, isconst ? f->wcfg : f->ccfg};
	cJSON *ent = NULL;
	int which = 0;
	for (int k = 0; k < 2 && !ent; k++) {
		ent = json_get(json_get(cfgs[k], "config"), fqn);
		which = k;
	}
	int inconst = (which == 0) == !!isconst;
	if (!ent) {
		diag_error(m->path, "no weights for '%s' (graph input '%s') in data/weights or data/constants", fqn, placeholder);
		return NULL;
	}
	int usepickle = 0;
	json_bool(json_get(ent, "use_pickle"), &usepickle);
	const char *pn = json_str(json_get(ent, "path_name"));
	if (usepickle || !pn) {
		diag_error(m->path, "weight '%s' is stored as a pickle (a tensor subclass, such as torchao's quantized "
		           "weights); doccc reads raw weights only: save the Core ATen form, torch.export.save("
		           "ep.run_decompositions(), ...), which stores the subclass's inner tensors as plain weights", fqn);
		return NULL;
	}
	Meta meta;
	if (lw_read_meta(m, json_get(ent, "tensor_meta"), &meta, fqn))
		return NULL;
	if (meta.dt != want->dt || meta.rank != want->rank) {
		diag_error(m->path, "weight '%s': stored dtype/rank differ from the graph's", fqn);
		return NULL;
	}
	for (int i = 0; i < meta.rank; i++)
		if (meta.shape[i] != want->shape[i]) {
			diag_error(m->path, "weight '%s': stored shape differs from the graph's", fqn);
			return NULL;
		}
	char *rel = arena_printf(m->a, "data/%s/%s", inconst ? "constants" : "weights", pn);
	if (storage_size(m, w, rel))
		return NULL;
	if (w->len == 0 && numel > 0) /* fake or empty tensor: zeros */
		return w;
	/* Bounds of the strided view inside the storage: the last byte it
	 * reads, (offset + sum (size - 1) * stride + 1) * esz, overflow-checked
	 * (lw_read_meta made offset and strides non-negative). */
	int64_t hi = meta.offset, t;
	int over = 0;
	for (int i = 0; i < meta.rank; i++)
		if (meta.shape[i] > 0)
			over |= ck_mul(meta.shape[i] - 1, meta.stride[i], &t) || ck_add(hi, t, &hi);
	over |= ck_add(hi, 1, &hi) || ck_mul(hi, esz, &hi);
	if (numel > 0 && (over || (uint64_t)hi > w->len)) {
		diag_error(m->path, "weight '%s': storage '%s' is too small (%zu bytes) for its shape and strides", fqn, pn, w->len);
		return NULL;
	}
	int64_t s = 1;
	w->contig = meta.offset == 0;
	for (int i = meta.rank - 1; i >= 0; i--) {
		if (meta.shape[i] != 1 && meta.stride[i] != s)
			w->contig = 0;
		s *= meta.shape[i];
	}
	memcpy(w->stride, meta.stride, sizeof w->stride);
	w->offset = meta.offset;
	w->lo = (size_t)(meta.offset * esz); /* within hi, checked above */
	w->hi = (size_t)hi;
	return w;
}
