#!/bin/sh
# test/setup.sh - install what building and testing doccc needs, if missing.
#
#   Debian packages: clang libomp-dev libyaml-dev libcjson-dev libzip-dev pkg-config
#                    hipcc libamdhip64-dev rocm-device-libs (-t rocm; about 70 MB)
#   Python packages: torch==2.13.0 numpy pytest transformers==5.24.0
#                    (test and example dependencies only; transformers for the
#                    real-model suite test/test_hf.py, which builds its models
#                    from configs: nothing is downloaded)
#
# Idempotent and quick when everything is present: tools and libraries are
# checked by what the build uses (commands, pkg-config modules, omp.h), and
# apt-get update runs once, only when something is missing. Uses sudo only when
# not root. Prints one line per action; exits non-zero if an install fails.
# PYTHON (default python3) selects the interpreter.

set -eu

PYTHON=${PYTHON:-python3}
TORCH_VERSION=2.13.0
TRANSFORMERS_VERSION=5.24.0
say() { echo "setup: $*"; }
die() { echo "setup: error: $*" >&2; exit 1; }

# ---- Debian packages -----------------------------------------------------------
missing=""
need() { missing="$missing $1"; }

command -v clang >/dev/null 2>&1 || need clang
command -v pkg-config >/dev/null 2>&1 || need pkg-config
if command -v pkg-config >/dev/null 2>&1; then
	pkg-config --exists yaml-0.1 || need libyaml-dev
	pkg-config --exists libcjson || need libcjson-dev
	pkg-config --exists libzip || need libzip-dev
else
	need libyaml-dev; need libcjson-dev; need libzip-dev
fi
# HIP: hipcc and the device libraries it links for --offload-arch=gfx90a.
command -v hipcc >/dev/null 2>&1 || { need hipcc; need libamdhip64-dev; need rocm-device-libs; }
# OpenMP: clang must find omp.h (the openmp target's generated code includes it).
if ! command -v clang >/dev/null 2>&1 ||
   ! printf '#include <omp.h>\n' | clang -fopenmp -x c -E - >/dev/null 2>&1; then
	need libomp-dev
fi

if [ -n "$missing" ]; then
	command -v apt-get >/dev/null 2>&1 ||
		die "missing:$missing, and there is no apt-get here; install them by hand"
	SUDO=""
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || die "missing:$missing; need root or sudo to install them"
		SUDO="sudo"
	fi
	say "apt-get update"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null ||
		die "apt-get update failed"
	say "apt-get install$missing"
	# shellcheck disable=SC2086
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null ||
		die "apt-get install$missing failed"
else
	say "system packages present (clang, libomp-dev, libyaml-dev, libcjson-dev, libzip-dev, pkg-config, hipcc)"
fi

# nvcc is not a Debian package here (it comes with the machine, from NVIDIA's
# pip wheels); without it -t cuda cannot compile and its tests say so.
command -v nvcc >/dev/null 2>&1 || say "note: nvcc not found: -t cuda builds (not --simulate) will fail"

# ---- Python packages -------------------------------------------------------------
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found"
if "$PYTHON" -c "
import sys, torch, numpy, pytest, transformers
sys.exit(0 if torch.__version__.startswith('$TORCH_VERSION') and transformers.__version__ == '$TRANSFORMERS_VERSION' else 1)
" >/dev/null 2>&1; then
	say "python packages present (torch $TORCH_VERSION, numpy, pytest, transformers $TRANSFORMERS_VERSION)"
else
	# torch first and pinned, so that nothing later pulls another build of it
	say "$PYTHON -m pip install torch==$TORCH_VERSION numpy pytest transformers==$TRANSFORMERS_VERSION"
	"$PYTHON" -m pip install -q "torch==$TORCH_VERSION" numpy pytest ||
		die "pip install failed"
	"$PYTHON" -m pip install -q "torch==$TORCH_VERSION" "transformers==$TRANSFORMERS_VERSION" ||
		die "pip install transformers failed"
	"$PYTHON" -c "import torch, numpy, pytest, transformers" ||
		die "torch, numpy, pytest or transformers still cannot be imported after pip install"
fi
