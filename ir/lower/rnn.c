/*
 * rnn.c - lowering of the recurrent layers: aten.lstm.input, gru.input,
 * rnn_tanh.input and rnn_relu.input.
 *
 * One op runs num_layers layers of one or two directions over the whole
 * sequence. It becomes one rnn library node per layer and direction (its
 * expansion, ir/expand/rnn.c, is the time loop), reading that layer's
 * input, the initial states h0 (and c0) at row layer * D + direction, and
 * the weights of that layer and direction from the flat params list, in
 * PyTorch's order: w_ih, w_hh, then b_ih, b_hh if has_biases, then w_hr if
 * the LSTM has projections (proj_size > 0, seen as one more tensor per
 * layer and direction). Each node writes its own output sequence and final
 * states, so every container keeps one writer; a bidirectional layer's two
 * sequences are concatenated along the feature dim (the next layer's
 * input, or the op's output), and the final states of all layers and
 * directions along dim 0 into h_n (and c_n). With one layer and one
 * direction the node writes the op's outputs directly.
 *
 * batch_first only changes the layout ([B, T, F] instead of [T, B, F]):
 * every node of the op keeps it, so intermediate layers need no transpose.
 * Dropout between layers exists only in training mode; an op that would
 * apply it (train with dropout > 0 and more than one layer) is rejected.
 */
#include <string.h>

#include "lower.h"

static const char *const cell_name[] = {"lstm", "gru", "rnn_tanh", "rnn_relu"};
static const int cell_gates[] = {4, 3, 1, 1};

static int new_transient(Imp *m, const char *name, Dtype dt, int64_t d0, int64_t d1, int64_t d2)
{
	int64_t sh[3] = {d0, d1, d2};
	int id = sdfg_add_container(m->g, name, dt, CK_TRANSIENT, 3, sh);
	lw_c(m, id)->origin = "";
	return id;
}

/* Output k of the node, or a scratch transient of the given shape when the
 * graph does not name it (an unused result the nodes still write). */
static int op_out(Imp *m, const cJSON *node, int k, Dtype dt, int64_t d0, int64_t d1, int64_t d2)
{
	int id = lw_out_name(node, k) ? lw_new_out(m, node, k) : -1;
	if (id >= 0 || lw_out_name(node, k))
		return id;
	return new_transient(m, arena_printf(m->a, "%s_out%d", m->nodename, k), dt, d0, d1, d2);
}

/* Checks one weight: dtype dt, rank r, shape [d0, d1] (d1 unused for rank 1). */
static int check_weight(Imp *m, int w, Dtype dt, int r, int64_t d0, int64_t d1, const char *what, int layer, int dir)
{
	const char *where = arena_printf(m->a, "%s of layer %d%s", what, layer, dir ? " (reverse)" : "");
	if (w < 0) {
		lw_error(m, "%s: missing tensor in params", where);
		return -1;
	}
	Container *c = lw_c(m, w);
	if (c->dt != dt) {
		lw_error(m, "%s is %s, the input %s: doccc needs one dtype for the input, states and weights", where,
		         dtype_info[c->dt].name, dtype_info[dt].name);
		return -1;
	}
	if (c->rank != r || lw_dim(m, w, 0) != d0 || (r == 2 && lw_dim(m, w, 1) != d1)) {
		lw_error(m, "%s has a shape of rank %d, [%lld%s%lld], expected [%lld%s%lld]", where, c->rank,
		         (long long)(c->rank > 0 ? lw_dim(m, w, 0) : 0), c->rank > 1 ? ", " : "",
		         (long long)(c->rank > 1 ? lw_dim(m, w, 1) : 0), (long long)d0, r == 2 ? ", " : "",
		         r == 2 ? (long long)d1 : 0LL);
		lw_error(m, "(weights in PyTorch's order: w_ih, w_hh[, b_ih, b_hh][, w_hr] per layer and direction)");
		return -1;
	}
	return 0;
}

static int check_state(Imp *m, int s, Dtype dt, int64_t n, int64_t b, int64_t f, const char *what)
{
	if (s < 0) {
		lw_error(m, "%s: initial state missing", what);
		return -1;
	}
	Container *c = lw_c(m, s);
	if (c->dt != dt || c->rank != 3 || lw_dim(m, s, 0) != n || lw_dim(m, s, 1) != b || lw_dim(m, s, 2) != f) {
		lw_error(m, "initial state %s must be %s [%lld, %lld, %lld] (num_layers * directions, batch, features)", what,
		         dtype_info[dt].name, (long long)n, (long long)b, (long long)f);
		return -1;
	}
	return 0;
}

int lower_rnn(Imp *m, const cJSON *node)
{
	int mode = m->info->param, G = cell_gates[mode];
	const char *cn = cell_name[mode];
	int x = lw_tensor(m, "input");
	Val *pv = lw_arg(m, "params");
	if (x < 0 || pv->k != V_TENSORS)
		return -1;
	int bias = (int)lw_int(m, "has_biases", 1), L = (int)lw_int(m, "num_layers", 1);
	int D = lw_int(m, "bidirectional", 0) ? 2 : 1, bf = (int)lw_int(m, "batch_first", 0);
	double dropout = lw_num(m, "dropout", 0);
	if (lw_int(m, "train", 0) && dropout > 0 && L > 1) {
		lw_error(m, "%s in training mode with dropout %g between layers: dropout is random; export the model in eval "
		         "mode (model.eval())", cn, dropout);
		return -1;
	}
	Container *xc = lw_c(m, x);
	Dtype dt = xc->dt;
	if (dt != DT_F32 && dt != DT_F64) {
		lw_error(m, "%s on %s input: doccc supports float32 and float64 recurrent layers", cn, dtype_info[dt].name);
		return -1;
	}
	if (xc->rank != 3) {
		lw_error(m, "%s input of rank %d: expected [seq, batch, features] (or [batch, seq, features] with "
		         "batch_first)", cn, xc->rank);
		return -1;
	}
	if (L < 1 || L * D > 64) {
		lw_error(m, "%s with %d layers%s: doccc supports 1 to %d", cn, L, D == 2 ? " in both directions" : "", 64 / D);
		return -1;
	}
	int per = 2 + 2 * bias;
	int proj = mode == RNN_LSTM && pv->n == L * D * (per + 1);
	if (proj)
		per++;
	if (pv->n != L * D * per) {
		lw_error(m, "%s: %d tensors in params, expected %d (%d layers, %d directions, %d per layer and direction)", cn,
		         pv->n, L * D * per, L, D, per);
		return -1;
	}
	int64_t T = lw_dim(m, x, bf ? 1 : 0), B = lw_dim(m, x, bf ? 0 : 1);
	int64_t GH = lw_dim(m, pv->ts[0] >= 0 ? pv->ts[0] : x, 0), H = GH / G;
	int64_t Ho = proj ? (pv->ts[per - 1] >= 0 ? lw_dim(m, pv->ts[per - 1], 0) : 0) : H;
	int h0, c0 = -1;
	if (mode == RNN_LSTM) {
		Val *hv = lw_arg(m, "hx");
		if (hv->k != V_TENSORS || hv->n != 2) {
			lw_error(m, "lstm: hx must hold two tensors (h0, c0)");
			return -1;
		}
		h0 = hv->ts[0], c0 = hv->ts[1];
		if (check_state(m, c0, dt, L * D, B, H, "c0"))
			return -1;
	} else
		h0 = lw_tensor(m, "hx");
	if (GH % G || H <= 0 || check_state(m, h0, dt, L * D, B, Ho, "h0"))
		return -1;
	int64_t d0 = bf ? B : T, d1 = bf ? T : B;
	int y = op_out(m, node, 0, dt, d0, d1, D * Ho);
	int hn = op_out(m, node, 1, dt, L * D, B, Ho);
	int cnn = mode == RNN_LSTM ? op_out(m, node, 2, dt, L * D, B, H) : -1;
	if (y < 0 || hn < 0 || (mode == RNN_LSTM && cnn < 0))
		return -1;
	int hparts[64], cparts[64];
	int in = x;
	int64_t I = lw_dim(m, x, 2);
	for (int l = 0; l < L; l++) {
		int ys[2];
		for (int d = 0; d < D; d++) {
			const int *w = pv->ts + (l * D + d) * per;
			if (check_weight(m, w[0], dt, 2, GH, I, "w_ih", l, d) || check_weight(m, w[1], dt, 2, GH, Ho, "w_hh", l, d))
				return -1;
			if (bias && (check_weight(m, w[2], dt, 1, GH, 0, "b_ih", l, d) ||
			             check_weight(m, w[3], dt, 1, GH, 0, "b_hh", l, d)))
				return -1;
			if (proj && check_weight(m, w[per - 1], dt, 2, Ho, H, "w_hr", l, d))
				return -1;
			const char *nm = arena_printf(m->a, "%s_l%d%s", m->nodename, l, d ? "_reverse" : "");
			ys[d] = D == 1 && l == L - 1 ? y : new_transient(m, arena_printf(m->a, "%s_y", nm), dt, d0, d1, Ho);
			int k = l * D + d;
			hparts[k] = L * D == 1 ? hn : new_transient(m, arena_printf(m->a, "%s_hn", nm), dt, 1, B, Ho);
			cparts[k] = mode != RNN_LSTM ? -1 : L * D == 1 ? cnn : new_transient(m, arena_printf(m->a, "%s_cn", nm), dt, 1, B, H);
			LibNode *r = lw_lib(m, LIB_RNN);
			r->in[0] = in, r->in[1] = h0, r->in[2] = c0;
			r->in[3] = w[0], r->in[4] = w[1];
			r->in[5] = bias ? w[2] : -1, r->in[6] = bias ? w[3] : -1;
			r->in[7] = proj ? w[per - 1] : -1;
			r->nin = 8;
			r->out[0] = ys[d], r->out[1] = hparts[k], r->out[2] = cparts[k];
			r->nout = 3;
			lib_set_int(m->g, r, "mode", mode);
			lib_set_int(m->g, r, "reverse", d);
			lib_set_int(m->g, r, "batch_first", bf);
			lib_set_int(m->g, r, "row", k);
		}
		if (D == 2) {
			int cat = l == L - 1 ? y : new_transient(m, arena_printf(m->a, "%s_l%d_y", m->nodename, l), dt, d0, d1, 2 * Ho);
			lw_cat(m, ys, 2, 2, cat);
			in = cat;
		} else
			in = ys[0];
		I = D * Ho;
	}
	if (L * D > 1) {
		lw_cat(m, hparts, L * D, 0, hn);
		if (mode == RNN_LSTM)
			lw_cat(m, cparts, L * D, 0, cnn);
	}
	return 0;
}
