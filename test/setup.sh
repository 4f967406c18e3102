#!/bin/sh
# test/setup.sh - install what building and testing doccc needs, if missing.
#
#   sh test/setup.sh [--sanitizers] [--cross] [--no-python] [--check]
#
#   Debian packages: clang libomp-dev libyaml-dev libcjson-dev libsqlite3-dev libzip-dev pkg-config
#                    cmake (test/test_buildsys.py builds a consumer of NAMEConfig.cmake)
#                    hipcc libamdhip64-dev rocm-device-libs (-t rocm; about 70 MB)
#                    ccache (test_toolchain.py builds through DOCC_CC="ccache clang")
#                    gcc (test_toolchain.py links the static archives with gcc too)
#                    python3 python3-venv (when there is no python3, or it is
#                    externally managed and cannot make a venv)
#   --sanitizers:    libclang-rt-N-dev, N the major version of the installed clang
#                    (the ASan/UBSan/TSan/libFuzzer runtimes of make test, make asan
#                    and make fuzz)
#   --cross:         what --triple aarch64-linux-gnu builds and doccc run's emulation
#                    need (make test's ARM suite, test/test_arm.py): qemu-user
#                    libc6-dev-arm64-cross libgcc-12-dev-arm64-cross
#                    binutils-aarch64-linux-gnu, and OpenMP's runtime for arm64:
#                    libomp.so.5 from libomp5-N:arm64 (N: clang's major version),
#                    which cannot be installed beside the amd64 one, taken into
#                    /usr/aarch64-linux-gnu/lib (dpkg --add-architecture arm64 first,
#                    for apt-get download)
#   Python packages: torch==2.13.0 numpy pytest pytest-xdist expecttest==0.3.0 transformers==5.24.0
#                    torchao==0.18.0 (the quantization flows of test/test_quant.py: PT2E and
#                    torchao's own configurations)
#                    (test and example dependencies only; pytest-xdist runs
#                    the suite on every core (make test); transformers for the
#                    real-model suite test/test_hf.py, which builds its models
#                    from configs: nothing is downloaded); --no-python skips them
#   --check:         install nothing; name the Debian packages the build (plain
#                    make) lacks and exit 1, or exit 0 quietly
#
# Where the Python packages go: into $PYTHON (default python3) when it is not
# externally managed (PEP 668) or already has them; otherwise into a venv made
# from it, $VENV (default build/venv; the Makefile then runs Python from there).
# VENV= (empty) forbids the venv: an externally managed $PYTHON without the
# packages is then an error.
#
# Idempotent and quick when everything is present: tools and libraries are
# checked by what the build uses (commands, pkg-config modules, omp.h, a link
# with the sanitizers), and apt-get update runs once, only when something is
# missing. Uses sudo only when not root. Prints one line per action; exits
# non-zero if an install fails.

set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${VENV-$ROOT/build/venv}
if [ -z "${PYTHON:-}" ]; then
	PYTHON=python3
	[ -n "$VENV" ] && [ -x "$VENV/bin/python" ] && PYTHON=$VENV/bin/python
fi
TORCH_VERSION=2.13.0
TRANSFORMERS_VERSION=5.24.0
TORCHAO_VERSION=0.18.0
EXPECTTEST_VERSION=0.3.0   # torch.testing's OpInfo database, where test/gen_ops_table.py reads torch's aliases
say() { echo "setup: $*"; }
die() { echo "setup: error: $*" >&2; exit 1; }

sanitizers=0 cross=0 python=1 check=0
for a in "$@"; do
	case $a in
	--sanitizers) sanitizers=1 ;;
	--cross) cross=1 ;;
	--no-python) python=0 ;;
	--check) check=1 ;;
	*) die "unknown argument '$a' (usage: sh test/setup.sh [--sanitizers] [--cross] [--no-python] [--check])" ;;
	esac
done

have() { command -v "$1" >/dev/null 2>&1; }
missing=""
need() { missing="$missing $1"; }

# ---- what plain make needs ---------------------------------------------------------
cc=${CC:-cc}
cc=${cc%% *}
if ! have "$cc"; then
	[ "$cc" = cc ] || [ "$cc" = clang ] || die "the C compiler $cc (CC) is not found"
	need clang
fi
if have pkg-config; then
	pkg-config --exists yaml-0.1 || need libyaml-dev
	pkg-config --exists libcjson || need libcjson-dev
	pkg-config --exists sqlite3 || need libsqlite3-dev
	pkg-config --exists libzip || need libzip-dev
else
	need pkg-config; need libyaml-dev; need libcjson-dev; need libsqlite3-dev; need libzip-dev
fi
if [ "$check" = 1 ]; then
	[ -z "$missing" ] && exit 0
	echo "doccc: cannot build: missing Debian packages:$missing" >&2
	echo "doccc: \`make setup\` installs them (make demo and make test run it first)" >&2
	exit 1
fi

# ---- the rest of the Debian packages ----------------------------------------------
case " $missing " in *" clang "*) ;; *) have clang || need clang ;; esac
# HIP: hipcc and the device libraries it links for --offload-arch=gfx90a.
have hipcc || { need hipcc; need libamdhip64-dev; need rocm-device-libs; }
# CMake: the suite builds a program with the NAMEConfig.cmake of --emit-cmake.
have cmake || need cmake
# ccache: the compiler-launcher tests (DOCC_CC="ccache clang") need a real cache.
have ccache || need ccache
# gcc: the suite links programs against the static archives with gcc as well as clang.
have gcc || need gcc
# OpenMP: clang must find omp.h (the openmp target's generated code includes it).
if ! have clang || ! printf '#include <omp.h>\n' | clang -fopenmp -x c -E - >/dev/null 2>&1; then
	need libomp-dev
fi

# Python: an interpreter, and a way to install into it (pip, or a venv when
# pip may not install into it). Nothing here is decided for a non-default
# PYTHON that is absent: that is the caller's to provide.
managed() {
	"$PYTHON" -c 'import os, sys, sysconfig
sys.exit(sys.prefix != sys.base_prefix or
         not os.path.isfile(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'
}
has_packages() {
	"$PYTHON" -c "
import sys, torch, numpy, pytest, xdist, transformers, expecttest, importlib.metadata as md
sys.exit(0 if torch.__version__.startswith('$TORCH_VERSION') and transformers.__version__ == '$TRANSFORMERS_VERSION'
         and md.version('torchao') == '$TORCHAO_VERSION' else 1)
" >/dev/null 2>&1
}
py_ok=0
if [ "$python" = 1 ]; then
	if ! have "$PYTHON"; then
		[ "$PYTHON" = python3 ] || die "$PYTHON not found"
		need python3; need python3-venv
	elif has_packages; then
		py_ok=1
	elif [ -n "$VENV" ] && managed && ! "$PYTHON" -c 'import ensurepip' 2>/dev/null; then
		need python3-venv
	fi
fi

SUDO=""
updated=0
apt_update() {
	[ "$updated" = 0 ] || return 0
	have apt-get || die "missing: $*, and there is no apt-get here; install them by hand"
	if [ "$(id -u)" != 0 ]; then
		have sudo || die "missing: $*; need root or sudo to install them"
		SUDO="sudo"
	fi
	say "apt-get update"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null ||
		die "apt-get update failed"
	updated=1
}
apt_install() {
	apt_update "$@"
	say "apt-get install $*"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null ||
		die "apt-get install $* failed"
}

if [ -n "$missing" ]; then
	# shellcheck disable=SC2086
	apt_install $missing
else
	say "system packages present (clang, libomp-dev, libyaml-dev, libcjson-dev, libsqlite3-dev, libzip-dev, pkg-config, cmake, ccache, gcc, hipcc)"
fi

# nvcc is not a Debian package here (it comes with the machine, from NVIDIA's
# pip wheels); without it -t cuda cannot compile and its tests say so.
have nvcc || say "note: nvcc not found: -t cuda builds (not --simulate) will fail"

# ---- sanitizer runtimes --------------------------------------------------------------
# What make asan and make fuzz link: one fuzz target under all three sanitizers.
sanitizers_link() {
	t=$(mktemp -d)
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' >"$t/f.c"
	ok=0
	clang -fsanitize=fuzzer,address,undefined -o "$t/f" "$t/f.c" >"$t/log" 2>&1 && ok=1
	[ "$ok" = 1 ] || cat "$t/log" >&2
	rm -rf "$t"
	[ "$ok" = 1 ]
}
if [ "$sanitizers" = 1 ]; then
	major=$(clang --version | sed -n 's/.*clang version \([0-9][0-9]*\)\..*/\1/p' | head -n 1)
	[ -n "$major" ] || die "cannot tell clang's version from \`clang --version\`"
	rt=libclang-rt-$major-dev
	if sanitizers_link 2>/dev/null; then
		say "sanitizer runtimes present (clang $major: ASan, UBSan, libFuzzer)"
	else
		# Before clang 14 Debian shipped the runtimes in libclang-common-N-dev.
		apt_update "$rt"
		apt-cache show "$rt" >/dev/null 2>&1 || rt=libclang-common-$major-dev
		apt_install "$rt"
		sanitizers_link || die "clang -fsanitize=fuzzer,address,undefined still cannot link after installing $rt"
	fi
fi

# ---- the aarch64 cross toolchain and its emulation ----------------------------------
ARM=/usr/aarch64-linux-gnu
if [ "$cross" = 1 ]; then
	xmissing=""
	have qemu-aarch64 || xmissing="$xmissing qemu-user"
	[ -f $ARM/include/stdlib.h ] || xmissing="$xmissing libc6-dev-arm64-cross"
	[ -d /usr/lib/gcc-cross/aarch64-linux-gnu ] || xmissing="$xmissing libgcc-12-dev-arm64-cross"
	have aarch64-linux-gnu-ld || xmissing="$xmissing binutils-aarch64-linux-gnu"
	# shellcheck disable=SC2086
	[ -z "$xmissing" ] || apt_install $xmissing
	if [ ! -f $ARM/lib/libomp.so.5 ]; then
		major=$(clang --version | sed -n 's/.*clang version \([0-9][0-9]*\)\..*/\1/p' | head -n 1)
		[ -n "$major" ] || die "cannot tell clang's version from \`clang --version\`"
		if ! dpkg --print-foreign-architectures | grep -qx arm64; then
			apt_update "libomp5-$major:arm64"
			say "dpkg --add-architecture arm64 (for apt-get download libomp5-$major:arm64)"
			$SUDO dpkg --add-architecture arm64 || die "dpkg --add-architecture arm64 failed"
			updated=0
		fi
		apt_update "libomp5-$major:arm64"
		t=$(mktemp -d)
		say "apt-get download libomp5-$major:arm64, its libomp.so.5 into $ARM/lib"
		(cd "$t" && apt-get download -q "libomp5-$major:arm64" >/dev/null 2>&1) || { rm -rf "$t"; die "apt-get download libomp5-$major:arm64 failed"; }
		dpkg-deb -x "$t"/libomp5-*.deb "$t/x" || { rm -rf "$t"; die "dpkg-deb -x of libomp5-$major:arm64 failed"; }
		so=$(find "$t/x" -name 'libomp.so.5' -type f | head -n 1)
		[ -n "$so" ] || { rm -rf "$t"; die "libomp5-$major:arm64 has no libomp.so.5"; }
		$SUDO install -m 644 "$so" $ARM/lib/libomp.so.5 || { rm -rf "$t"; die "cannot install $ARM/lib/libomp.so.5"; }
		rm -rf "$t"
	fi
	[ -z "$xmissing" ] && say "aarch64 cross toolchain present (qemu-user, libc6-dev-arm64-cross, libgcc-12-dev-arm64-cross, binutils-aarch64-linux-gnu, libomp.so.5)"
fi

# ---- Python packages -------------------------------------------------------------
[ "$python" = 1 ] || exit 0
have "$PYTHON" || die "$PYTHON not found"
if [ "$py_ok" = 1 ] || has_packages; then
	say "python packages present in $PYTHON (torch $TORCH_VERSION, numpy, pytest, pytest-xdist, transformers $TRANSFORMERS_VERSION, torchao $TORCHAO_VERSION)"
	exit 0
fi
if managed; then
	[ -n "$VENV" ] || die "$PYTHON is externally managed (PEP 668) and lacks torch $TORCH_VERSION, numpy," \
		"pytest, pytest-xdist or transformers $TRANSFORMERS_VERSION; install them into it yourself, or leave PYTHON" \
		"unset so that make installs them into a venv ($ROOT/build/venv)"
	say "$PYTHON is externally managed (PEP 668): making a venv, $VENV"
	rm -rf "$VENV"
	"$PYTHON" -m venv "$VENV" >/dev/null || { rm -rf "$VENV"; die "$PYTHON -m venv $VENV failed"; }
	PYTHON=$VENV/bin/python
fi
# torch first and pinned, so that nothing later pulls another build of it
say "$PYTHON -m pip install torch==$TORCH_VERSION numpy pytest pytest-xdist expecttest==$EXPECTTEST_VERSION transformers==$TRANSFORMERS_VERSION"
"$PYTHON" -m pip install -q "torch==$TORCH_VERSION" numpy pytest pytest-xdist "expecttest==$EXPECTTEST_VERSION" ||
	die "pip install failed"
"$PYTHON" -m pip install -q "torch==$TORCH_VERSION" "transformers==$TRANSFORMERS_VERSION" ||
	die "pip install transformers failed"
# torchao's wheel is pure Python over torch: pinned beside torch so that pip keeps torch
"$PYTHON" -m pip install -q "torch==$TORCH_VERSION" "torchao==$TORCHAO_VERSION" ||
	die "pip install torchao failed"
"$PYTHON" -c "import torch, numpy, pytest, xdist, transformers, expecttest, torchao" ||
	die "torch, numpy, pytest, pytest-xdist, expecttest or transformers still cannot be imported after pip install"
