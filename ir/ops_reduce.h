/*
 * ops_reduce.h - the op-table rows of the reduce family: reductions over
 * dims (sum, mean, prod, amax/amin, max/min, any/all, var/std with or
 * without the mean, logsumexp), arg-reductions (argmax, argmin, max.dim,
 * min.dim), scans along a dim (cumsum, cumprod, logcumsumexp, cummax,
 * cummin), sorts and picks of sorted rows (sort, topk, argsort, msort,
 * median, nanmedian, kthvalue, mode), binary searches (searchsorted,
 * bucketize), and histograms of equal-width bins (histc).
 *
 * LIB_OPS_REDUCE rows: X(ENUM, "name", expansion, "doc"): a library-node
 * kind and its expansion function expand_<expansion> (ir/expand/reduce.c).
 * ATEN_OPS_REDUCE rows: X(ENUM, "overload", lowering, param, "schema"): an
 * ATen overload, its lowering function lower_<lowering> (ir/lower/reduce.c),
 * a parameter for that lowering (a mode below), and PyTorch's schema string.
 * Included by ops.h only.
 */

/* Reduction modes (the reduce lowering's param, LIB_REDUCE "mode"): the
 * first four, then the others (the second enum continues the first). */
enum { RD_SUM, RD_MEAN, RD_MAX, RD_MIN };
enum { RD_PROD_ = 4, RD_VAR_, RD_STD_, RD_ANY_, RD_ALL_, RD_LSE_, RD_VAR_MEAN_, RD_STD_MEAN_, RD_NORM_ };
_Static_assert(RD_PROD_ == RD_MIN + 1, "the second enum of reduction modes continues the first");
/* arg-reductions (lower_argred); scan modes (LIB_SCAN "mode"); picks of a
 * sorted row (LIB_SORT "pick", lower_sortsel's param) */
enum { AR_ARGMAX, AR_ARGMIN, AR_MAX, AR_MIN };
enum { CS_SUM, CS_PROD, CS_LSE, CS_MAX, CS_MIN };
enum { PK_NONE, PK_KTH, PK_MEDIAN, PK_NANMEDIAN, PK_MODE, PK_ALL_MEDIAN, PK_ALL_NANMEDIAN, PK_ARGSORT, PK_MSORT };

#define LIB_OPS_REDUCE(X) \
	X(REDUCE, "reduce", reduce, "sum / mean / max / min over dims") \
	X(ARGRED, "argred", argred, "argmax / argmin / max.dim / min.dim along one dim") \
	X(SCAN, "scan", scan, "inclusive scan along one dim, per row: sum, product, log-sum-exp, running max / min with indices") \
	X(SORT, "sort", sort, "stable merge sort along one dim, per row (sort, topk), or one pick per sorted row (kth value, median, mode)") \
	X(SEARCH, "search", search, "binary search of each value in a sorted row (searchsorted, bucketize, repeat_interleave indices)") \
	X(HISTC, "histc", histc, "counts of the elements in equal-width bins over [min, max] (the data's range when min == max)")

#define ATEN_OPS_REDUCE(X) \
	X(MEAN_DIM, "mean.dim", reduce, RD_MEAN, "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") \
	X(MEAN, "mean.default", reduce, RD_MEAN, "aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor") \
	X(SUM_DIM, "sum.dim_IntList", reduce, RD_SUM, "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") \
	X(SUM, "sum.default", reduce, RD_SUM, "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor") \
	X(AMAX, "amax.default", reduce, RD_MAX, "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor") \
	X(AMIN, "amin.default", reduce, RD_MIN, "aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor") \
	X(PROD_DIM, "prod.dim_int", reduce, RD_PROD_, "aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") \
	X(PROD, "prod.default", reduce, RD_PROD_, "aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor") \
	X(VAR_CORR, "var.correction", reduce, RD_VAR_, "aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor") \
	X(VAR_DIM, "var.dim", reduce, RD_VAR_, "aten::var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor") \
	X(STD_CORR, "std.correction", reduce, RD_STD_, "aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor") \
	X(STD_DIM, "std.dim", reduce, RD_STD_, "aten::std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor") \
	X(VAR_MEAN_CORR, "var_mean.correction", reduce, RD_VAR_MEAN_, "aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)") \
	X(VAR_MEAN_DIM, "var_mean.dim", reduce, RD_VAR_MEAN_, "aten::var_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)") \
	X(STD_MEAN_CORR, "std_mean.correction", reduce, RD_STD_MEAN_, "aten::std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)") \
	X(ANY_DIM, "any.dim", reduce, RD_ANY_, "aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor") \
	X(ANY_DIMS, "any.dims", reduce, RD_ANY_, "aten::any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor") \
	X(ANY, "any.default", reduce, RD_ANY_, "aten::any(Tensor self) -> Tensor") \
	X(ALL_DIM, "all.dim", reduce, RD_ALL_, "aten::all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor") \
	X(ALL_DIMS, "all.dims", reduce, RD_ALL_, "aten::all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor") \
	X(ALL, "all.default", reduce, RD_ALL_, "aten::all(Tensor self) -> Tensor") \
	X(MAX_ALL, "max.default", reduce, RD_MAX, "aten::max(Tensor self) -> Tensor") \
	X(MIN_ALL, "min.default", reduce, RD_MIN, "aten::min(Tensor self) -> Tensor") \
	X(MSE_LOSS, "mse_loss.default", mse_loss, 0, "aten::mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor") \
	X(LOGSUMEXP, "logsumexp.default", reduce, RD_LSE_, "aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor") \
	X(ARGMAX, "argmax.default", argred, AR_ARGMAX, "aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor") \
	X(ARGMIN, "argmin.default", argred, AR_ARGMIN, "aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor") \
	X(MAX_DIM, "max.dim", argred, AR_MAX, "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(MIN_DIM, "min.dim", argred, AR_MIN, "aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(CUMSUM, "cumsum.default", scan, CS_SUM, "aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor") \
	X(CUMPROD, "cumprod.default", scan, CS_PROD, "aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor") \
	X(LOGCUMSUMEXP, "logcumsumexp.default", scan, CS_LSE, "aten::logcumsumexp(Tensor self, int dim) -> Tensor") \
	X(CUMMAX, "cummax.default", scan, CS_MAX, "aten::cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)") \
	X(CUMMIN, "cummin.default", scan, CS_MIN, "aten::cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)") \
	X(SORT, "sort.default", sort, 0, "aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)") \
	X(SORT_STABLE, "sort.stable", sort, 0, "aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)") \
	X(TOPK, "topk.default", sort, 1, "aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)") \
	X(ARGSORT, "argsort.default", sortsel, PK_ARGSORT, "aten::argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor") \
	X(ARGSORT_STABLE, "argsort.stable", sortsel, PK_ARGSORT, "aten::argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor") \
	X(MSORT, "msort.default", sortsel, PK_MSORT, "aten::msort(Tensor self) -> Tensor") \
	X(MEDIAN, "median.default", sortsel, PK_ALL_MEDIAN, "aten::median(Tensor self) -> Tensor") \
	X(MEDIAN_DIM, "median.dim", sortsel, PK_MEDIAN, "aten::median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(NANMEDIAN, "nanmedian.default", sortsel, PK_ALL_NANMEDIAN, "aten::nanmedian(Tensor self) -> Tensor") \
	X(NANMEDIAN_DIM, "nanmedian.dim", sortsel, PK_NANMEDIAN, "aten::nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(KTHVALUE, "kthvalue.default", sortsel, PK_KTH, "aten::kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(MODE, "mode.default", sortsel, PK_MODE, "aten::mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(BUCKETIZE, "bucketize.Tensor", search, 0, "aten::bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor") \
	X(BUCKETIZE_SCALAR, "bucketize.Scalar", search, 0, "aten::bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor") \
	X(SEARCHSORTED, "searchsorted.Tensor", search, 1, "aten::searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor") \
	X(SEARCHSORTED_SCALAR, "searchsorted.Scalar", search, 1, "aten::searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor") \
	X(HISTC, "histc.default", histc, 0, "aten::histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor")
