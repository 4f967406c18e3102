"""What this machine's CPU can run, for the suite and the benchmarks.

doccc's categories compile for an instruction set level (target.c: edge
x86-64-v2, desktop x86-64-v3, server x86-64-v4), and a library built for a
level the CPU lacks refuses to start (DOCCC_ERR_CPU). The suite runs the
libraries it builds on this machine, so where the CPU lacks the default
category's level, conftest.py sets DOCC_MARCH (doccc's default -march for
the CPU targets when neither --march nor the options file gives one) to the
highest level the CPU has, and the differential tests run everywhere.
"""

from pathlib import Path

# The x86-64 micro-architecture levels, each with the /proc/cpuinfo flags it
# adds to the one before (the psABI's lists; abm is LZCNT, pni is SSE3).
LEVELS = (
    ("x86-64-v2", {"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"}),
    ("x86-64-v3", {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}),
    ("x86-64-v4", {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}),
)
CATEGORY_LEVEL = {"edge": "x86-64-v2", "desktop": "x86-64-v3", "server": "x86-64-v4"}


def cpu_model(cpuinfo="/proc/cpuinfo"):
    """The processor's name ("model name" in cpuinfo), or "an unnamed CPU"."""
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "an unnamed CPU"


def cpu_flags(cpuinfo="/proc/cpuinfo"):
    """The flags of the first processor in cpuinfo, or None where there is none (not Linux on x86)."""
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def best_level(flags=None):
    """The highest x86-64 level the CPU has ("x86-64" for the baseline), or None when unknown."""
    flags = cpu_flags() if flags is None else flags
    if flags is None:
        return None
    best, have = "x86-64", set()
    for name, adds in LEVELS:
        have |= adds
        if not have <= flags:
            break
        best = name
    return best


def runs_category(category, flags=None):
    """Whether the CPU has the level category compiles for (True when unknown)."""
    best = best_level(flags)
    names = ["x86-64"] + [n for n, _ in LEVELS]
    return best is None or names.index(best) >= names.index(CATEGORY_LEVEL[category])


def default_march(flags=None):
    """The DOCC_MARCH the suite needs here: None where the CPU has the
    server category's level (or is not x86), else its own highest level."""
    return None if runs_category("server", flags) else best_level(flags)


def host_category(flags=None):
    """The category whose level this CPU has that compiles for the widest vectors."""
    return next(c for c in ("server", "desktop", "edge") if runs_category(c, flags))


def use_host_march():
    """Set DOCC_MARCH for every doccc this process starts, where the CPU
    lacks the default category's level and the caller set none; returns
    the march set, or None."""
    import os
    march = default_march()
    if not march or "DOCC_MARCH" in os.environ:
        return None
    os.environ["DOCC_MARCH"] = march
    return march
