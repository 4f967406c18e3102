// main.cpp - the generated header used from C++ (test/test_capi.py builds it
// like main.c, with clang++ -std=c++17 and -DMODEL_HEADER='"mlp.h"').
//
//     ./capi_cpp IN.bin OUT.bin [WEIGHTS]
//
// Checks that the header compiles as C++ (extern "C", no C-only constructs),
// that its macros work in constant expressions, and that instances owned by
// std::unique_ptr run concurrently from std::threads with identical results.
// Writes the output of the first run to OUT.bin and prints "ok".
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include MODEL_HEADER

namespace {

constexpr std::array<int64_t, MLP_INPUT0_RANK> kInShape = MLP_INPUT0_SHAPE;
constexpr std::array<int64_t, MLP_OUTPUT0_RANK> kOutShape = MLP_OUTPUT0_SHAPE;
static_assert(MLP_NUM_INPUTS == 1 && MLP_NUM_OUTPUTS == 1, "one input, one output");
static_assert(MLP_INPUT0_DTYPE == DOCCC_F32 && MLP_OUTPUT0_DTYPE == DOCCC_F32, "float32");

constexpr int64_t product(const int64_t *s, int n) { return n == 0 ? 1 : s[0] * product(s + 1, n - 1); }
static_assert(product(kInShape.data(), MLP_INPUT0_RANK) == MLP_INPUT0_NUMEL, "input numel");
static_assert(product(kOutShape.data(), MLP_OUTPUT0_RANK) == MLP_OUTPUT0_NUMEL, "output numel");

struct Destroy {
	void operator()(mlp_t *m) const { mlp_destroy(m); }
};
using Model = std::unique_ptr<mlp_t, Destroy>;

[[noreturn]] void fail(const std::string &msg)
{
	std::cerr << "capi_cpp: " << msg << "\n";
	std::exit(1);
}

Model make(const char *weights)
{
	mlp_t *raw = nullptr;
	int st = weights ? mlp_create_from(&raw, weights) : mlp_create(&raw);
	if (st != DOCCC_OK)
		fail(std::string("create: ") + mlp_strerror(st));
	return Model(raw);
}

std::vector<float> run(mlp_t *m, const std::vector<float> &in)
{
	std::vector<float> out(MLP_OUTPUT0_NUMEL);
	int st = mlp_run(m, in.data(), out.data());
	if (st != DOCCC_OK)
		fail(std::string("run: ") + mlp_strerror(st));
	return out;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		std::cerr << "usage: " << argv[0] << " IN.bin OUT.bin [WEIGHTS]\n";
		return 2;
	}
	const char *weights = argc == 4 ? argv[3] : nullptr;

	std::vector<float> in(MLP_INPUT0_NUMEL);
	{
		std::ifstream f(argv[1], std::ios::binary);
		f.read(reinterpret_cast<char *>(in.data()), std::streamsize(in.size() * sizeof(float)));
		if (!f || f.peek() != std::ifstream::traits_type::eof())
			fail(std::string(argv[1]) + ": wrong size");
	}

	Model m = make(weights);
	const std::vector<float> expected = run(m.get(), in);
	if (run(m.get(), in) != expected)
		fail("second run differs");

	std::vector<std::thread> threads;
	int ok[2] = {0, 0};
	for (int t = 0; t < 2; t++)
		threads.emplace_back([&, t] {
			Model mine = make(weights);
			for (int i = 0; i < 20; i++)
				if (run(mine.get(), in) != expected)
					return;
			ok[t] = 1;
		});
	for (auto &t : threads)
		t.join();
	if (!ok[0] || !ok[1])
		fail("concurrent instances gave different results");

	std::ofstream out(argv[2], std::ios::binary);
	out.write(reinterpret_cast<const char *>(expected.data()),
	          std::streamsize(expected.size() * sizeof(float)));
	if (!out.good())
		fail(std::string(argv[2]) + ": cannot write");
	out.close();
	std::printf("%s: %s -> %s ok\n", MLP_INPUT0_NAME, argv[1], argv[2]);
	return 0;
}
