// dyn.cpp - the run-time dims API of a generated header used from C++
// (test/test_capi.py builds it like dyn.c, with clang++ -std=c++17 and
// -DMODEL_HEADER='"dyn.h"').
//
//     ./dyn_cpp IN_A.bin NA IN_B.bin NB OUT_A.bin OUT_B.bin
//
// Checks that the dim macros work in constant expressions, that
// dyn_infer_dims / dyn_output_shape size std::vectors, and that two
// instances owned by std::unique_ptr run at different batches (NA and NB)
// at the same time from two std::threads, each switching sizes several
// times, with the same bits every time; a dim past the range is
// DOCCC_ERR_SHAPE with a message from dyn_last_error. Writes the outputs
// at NA and NB and prints "ok".
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include MODEL_HEADER

namespace {

static_assert(DYN_NUM_DIMS == 1, "one run-time dim");
static_assert(DYN_DIM0_MIN <= DYN_DIM0_MAX, "a range");
constexpr std::array<int64_t, DYN_INPUT0_RANK> kIn = DYN_INPUT0_SHAPE;
constexpr std::array<int64_t, DYN_OUTPUT0_RANK> kOut = DYN_OUTPUT0_SHAPE;
static_assert(kIn[0] == -1 && kOut[0] == -1, "the batch is a run-time dim");
constexpr const char *kDimName = DYN_DIM0_NAME;

struct Destroy {
	void operator()(dyn_t *m) const { dyn_destroy(m); }
};
using Model = std::unique_ptr<dyn_t, Destroy>;

[[noreturn]] void fail(const std::string &msg)
{
	std::cerr << "dyn_cpp: " << msg << "\n";
	std::exit(1);
}

Model make()
{
	dyn_t *raw = nullptr;
	if (int st = dyn_create(&raw))
		fail(std::string("create: ") + dyn_strerror(st));
	return Model(raw);
}

std::vector<float> read_floats(const char *path, size_t n)
{
	std::ifstream f(path, std::ios::binary);
	std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	if (bytes.size() != n * sizeof(float))
		fail(std::string(path) + ": wrong size");
	std::vector<float> v(n);
	std::memcpy(v.data(), bytes.data(), bytes.size());
	return v;
}

void write_floats(const char *path, const std::vector<float> &v)
{
	std::ofstream f(path, std::ios::binary);
	f.write(reinterpret_cast<const char *>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
	if (!f)
		fail(std::string(path) + ": cannot write");
}

// One run at the dims that the input's shape gives.
std::vector<float> run(dyn_t *m, const std::vector<float> &in)
{
	std::array<int64_t, DYN_INPUT0_RANK> shape{static_cast<int64_t>(in.size()) / kIn[1], kIn[1]};
	const int64_t *shapes[] = {shape.data()};
	std::array<int64_t, DYN_NUM_DIMS> dims{};
	char msg[256] = "";
	if (dyn_infer_dims(shapes, dims.data(), msg, sizeof msg) != DOCCC_OK)
		fail(std::string("infer_dims: ") + msg);
	std::array<int64_t, DYN_OUTPUT0_RANK> os{};
	if (dyn_output_shape(dims.data(), 0, os.data()) != DOCCC_OK)
		fail("output_shape");
	std::vector<float> out(static_cast<size_t>(os[0] * os[1]));
	if (int st = dyn_run_dims(m, dims.data(), in.data(), out.data()))
		fail(std::string("run_dims: ") + dyn_strerror(st) + ": " + dyn_last_error(m));
	return out;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 7)
		fail("usage: dyn_cpp IN_A.bin NA IN_B.bin NB OUT_A.bin OUT_B.bin");
	const int64_t na = std::atoll(argv[2]), nb = std::atoll(argv[4]);
	const auto in_a = read_floats(argv[1], static_cast<size_t>(na * kIn[1]));
	const auto in_b = read_floats(argv[3], static_cast<size_t>(nb * kIn[1]));

	Model first = make();
	const auto want_a = run(first.get(), in_a);
	const auto want_b = run(first.get(), in_b);

	// Two instances at once, each alternating between the two sizes.
	bool ok[2] = {false, false};
	auto job = [&](int which) {
		Model m = make();
		bool same = true;
		for (int i = 0; i < 10; i++) {
			bool a = (i + which) % 2 == 0;
			same = same && run(m.get(), a ? in_a : in_b) == (a ? want_a : want_b);
		}
		ok[which] = same;
	};
	std::thread t0(job, 0), t1(job, 1);
	t0.join();
	t1.join();
	if (!ok[0] || !ok[1])
		fail("concurrent runs at two sizes gave other bits");

	std::array<int64_t, DYN_NUM_DIMS> big{DYN_DIM0_MAX + 1};
	if (dyn_set_dims(first.get(), big.data()) != DOCCC_ERR_SHAPE)
		fail("a dim past the range was accepted");
	const std::string msg = dyn_last_error(first.get());
	if (msg.find(kDimName) == std::string::npos || msg.find("outside the range") == std::string::npos)
		fail("the message does not name the dim and the range: " + msg);
	if (run(first.get(), in_a) != want_a)
		fail("a run after a refused set_dims gave other bits");

	write_floats(argv[5], want_a);
	write_floats(argv[6], want_b);
	std::cout << "ok\n";
	return 0;
}
