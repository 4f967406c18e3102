#!/bin/sh
# test/llamacpp.sh: build llama.cpp's llama-bench and llama-quantize for test/bench_llm.py,
# and test/llamacpp_greedy.c against its libraries.
#
#   sh test/llamacpp.sh            build (or say where the build is) and print its directory last
#
# llama.cpp comes from PyPI, the one registry reachable here: the sdist of
# llama-cpp-python (pinned, LLAMACPP_PY_VERSION) vendors llama.cpp's source
# in vendor/llama.cpp, gguf-py (the GGUF writer bench_llm.py uses) included.
# Everything goes into LLAMACPP_DIR (default build/llamacpp, ignored by git):
#
#   dl/llama_cpp_python-VER.tar.gz   the sdist (pip download, once)
#   src/                             its vendor/llama.cpp
#   cmake/                           the cmake build tree
#   bin/llama-bench, bin/llama-quantize   the tools, statically linked to ggml
#   bin/llamacpp_greedy              test/llamacpp_greedy.c (bench_llm.py's check of the GGUFs)
#   built-VER                        the stamp: present, the script does nothing
#
# The build is Release, -march=native (GGML_NATIVE) with OpenMP threads, CPU
# backend only, no tests, examples or server; JOBS (default 2) compile jobs.
# Idempotent: a finished build is left alone (remove the stamp to rebuild).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${LLAMACPP_DIR:-$ROOT/build/llamacpp}
VER=${LLAMACPP_PY_VERSION:-0.3.36}
JOBS=${JOBS:-2}
PYTHON=${PYTHON:-python3}
STAMP=$DIR/built-$VER

say() { echo "llamacpp.sh: $*" >&2; }
exec 3>&2
run() { echo "+ $*" >&3; "$@"; }

# llamacpp_greedy (test/llamacpp_greedy.c) against the static libraries, when
# missing or older than its source.
greedy() {
	src=$ROOT/test/llamacpp_greedy.c
	exe=$DIR/bin/llamacpp_greedy
	[ -x "$exe" ] && [ "$exe" -nt "$src" ] && return 0
	say "building llamacpp_greedy (test/llamacpp_greedy.c) against llama.cpp's libraries"
	run cc -O2 -c "$src" -I"$DIR/src/include" -I"$DIR/src/ggml/include" -o "$DIR/cmake/llamacpp_greedy.o" &&
	run c++ -o "$exe" "$DIR/cmake/llamacpp_greedy.o" "$DIR/cmake/src/libllama.a" "$DIR/cmake/ggml/src/libggml.a" \
		"$DIR/cmake/ggml/src/libggml-cpu.a" "$DIR/cmake/ggml/src/libggml-base.a" -fopenmp -lpthread -lm ||
		{ say "llamacpp_greedy failed to build"; exit 1; }
}

if [ -f "$STAMP" ] && [ -x "$DIR/bin/llama-bench" ] && [ -x "$DIR/bin/llama-quantize" ]; then
	greedy
	say "llama.cpp of llama-cpp-python $VER already built in $DIR (remove $STAMP to rebuild)"
	echo "$DIR"
	exit 0
fi

command -v cmake >/dev/null 2>&1 || { say "cmake is not installed (make setup installs it; or apt-get install cmake)"; exit 1; }
command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 ||
	{ say "no C++ compiler (c++, g++ or clang++): apt-get install g++"; exit 1; }

mkdir -p "$DIR/dl"
TARBALL=$(ls "$DIR"/dl/llama_cpp_python-"$VER".tar.gz 2>/dev/null || true)
if [ -z "$TARBALL" ]; then
	say "downloading the llama-cpp-python $VER sdist (pip prepares its metadata: about a minute)"
	run "$PYTHON" -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$VER" -d "$DIR/dl"
	TARBALL=$DIR/dl/llama_cpp_python-$VER.tar.gz
	[ -f "$TARBALL" ] || { say "pip download left no $TARBALL"; exit 1; }
fi

if [ ! -f "$DIR/src/CMakeLists.txt" ]; then
	say "extracting vendor/llama.cpp into $DIR/src"
	rm -rf "$DIR/src" "$DIR/src.tmp"
	mkdir -p "$DIR/src.tmp"
	run tar xzf "$TARBALL" -C "$DIR/src.tmp" --strip-components=3 "llama_cpp_python-$VER/vendor/llama.cpp"
	mv "$DIR/src.tmp" "$DIR/src"
fi

say "configuring (cmake, Release, GGML_NATIVE, OpenMP, static)"
run cmake -S "$DIR/src" -B "$DIR/cmake" -DCMAKE_BUILD_TYPE=Release \
	-DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON -DGGML_OPENMP=ON \
	-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
	-DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF >"$DIR/cmake.log" 2>&1 ||
	{ tail -30 "$DIR/cmake.log" >&2; say "cmake failed: $DIR/cmake.log"; exit 1; }
say "building llama-bench and llama-quantize with $JOBS jobs (several minutes on 2 cores)"
run cmake --build "$DIR/cmake" -j "$JOBS" --target llama-bench llama-quantize >"$DIR/build.log" 2>&1 ||
	{ tail -30 "$DIR/build.log" >&2; say "build failed: $DIR/build.log"; exit 1; }
mkdir -p "$DIR/bin"
for t in llama-bench llama-quantize; do
	run cp "$DIR/cmake/bin/$t" "$DIR/bin/$t"
done
greedy
touch "$STAMP"
say "built: $DIR/bin/llama-bench, $DIR/bin/llama-quantize, $DIR/bin/llamacpp_greedy"
echo "$DIR"
