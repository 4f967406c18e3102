/*
 * ops_rnn.h - the op-table rows of the recurrent family (LSTM, GRU and
 * Elman RNN layers over a whole sequence).
 *
 * LIB_OPS_RNN rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/rnn.c).
 * ATEN_OPS_RNN rows: X(ENUM, "overload", lowering, param, "schema"): an ATen
 * overload, its lowering function lower_<lowering> (ir/lower/rnn.c), the
 * cell kind (RNN_*) and PyTorch's schema string.
 * Included by ops.h only.
 *
 * The .data overloads (packed sequences: data plus batch_sizes) are not
 * rows: torch.export cannot trace them (the per-step batch sizes are
 * values, so their shapes are data-dependent).
 */

/* Cell kinds: the param column and the rnn node's "mode" attribute. */
enum { RNN_LSTM, RNN_GRU, RNN_TANH, RNN_RELU };

#define LIB_OPS_RNN(X) \
	X(RNN, "rnn", rnn, "one layer and direction of an LSTM / GRU / tanh or ReLU RNN: input projection as one GEMM, then a sequential time loop of a step GEMM and fused gates")

#define ATEN_OPS_RNN(X) \
	X(LSTM, "lstm.input", rnn, RNN_LSTM, "aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)") \
	X(GRU, "gru.input", rnn, RNN_GRU, "aten::gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)") \
	X(RNN_TANH, "rnn_tanh.input", rnn, RNN_TANH, "aten::rnn_tanh.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)") \
	X(RNN_RELU, "rnn_relu.input", rnn, RNN_RELU, "aten::rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)")
