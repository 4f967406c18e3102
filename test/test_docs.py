"""The documentation against the program: README.md and docs/*.md.

  - every `doccc` command in a ```sh, ```bash or ```console block (a console
    block's commands are its `$ ` lines) parses as a shell line, names a real
    subcommand, and uses only options that its --help and man/doccc.1 both
    list (doccc has no dry run: the commands name models the docs do not
    ship, so the rest cannot run here);
  - the README's five-minute tour runs for real, block by block, in a
    temporary folder: its Python and C blocks are saved under the name their
    first line gives (`# export.py`, `/* main.c */`), its shell blocks run in
    order, each command must exit 0. The tour's first block (PATH, the venv,
    the folder) is replaced by the test's own: doccc from build/, this
    Python as python3, a temporary folder;
  - every relative link and image (`[text](path#anchor)`) points to a file
    that exists, and an anchor to a heading of that file, except the files
    in PENDING;
  - test/gen_perf_page.py turns the fixture JSON files of test/fixtures/perf/
    into the page test/fixtures/perf/expected.md.
The checkers are plain functions; test_checkers_fail shows that a broken
command, option or link makes them report it.
"""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import doccc_path, fmt_result

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Files that other branches add (issue 31): links to them are allowed while
# they are missing. The lead engineer removes each entry once its file is on
# main; an entry whose file exists fails test_pending_still_missing.
PENDING = set()

SUBCOMMANDS = {"run", "check", "inspect", "opt", "tune", "compare"}
SHELL_LANGS = {"sh", "bash", "shell", "console"}


# --- Markdown -------------------------------------------------------------

def code_blocks(text):
    """[(lang, line number of the first line, [lines])] of the fenced blocks."""
    blocks, cur = [], None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"\s*```(\S*)\s*$", line)
        if cur is None and m:
            cur = (m.group(1).lower(), n + 1, [], len(line) - len(line.lstrip()))
        elif cur is not None and m and not m.group(1):
            blocks.append(cur[:3])
            cur = None
        elif cur is not None:  # a block inside a list item: its indentation off
            ind = cur[3]
            cur[2].append(line[ind:] if not line[:ind].strip() else line.lstrip())
    return blocks


def prose(text):
    """The text outside fenced blocks and inline code spans, as lines (the same count)."""
    out, fence = [], False
    for line in text.split("\n"):
        if re.match(r"\s*```", line):
            fence = not fence
            out.append("")
            continue
        out.append("" if fence else re.sub(r"`[^`]*`", "", line))
    return out


def slug(heading):
    """GitHub's anchor for a heading."""
    s = re.sub(r"`", "", heading.strip().lower())
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(text):
    seen, out = {}, set()
    for line in prose(text):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else f"{s}-{k}")
    return out


def shell_commands(lang, lines):
    """The command lines of a shell block: continuations joined, comments kept
    for shlex to drop; a console block's are its `$ ` lines."""
    cmds, cur = [], None
    for line in lines:
        if cur is not None:
            cur += " " + line.strip()
        else:
            s = line.strip()
            if lang == "console":
                if not s.startswith("$ "):
                    continue
                s = s[2:]
            if not s or s.startswith("#"):
                continue
            cur = s
        if cur.endswith("\\"):
            cur = cur[:-1]
            continue
        cmds.append(cur)
        cur = None
    if cur is not None:
        cmds.append(cur)
    return cmds


# --- Checkers -------------------------------------------------------------

def known_options(text):
    """The options a help text or man page names: -x, --long, -MD."""
    text = text.replace("\\-", "-")
    text = re.sub(r"\\f[BIRP]", "", text)
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text))


def help_texts(doccc):
    def h(*args):
        r = subprocess.run([str(doccc), *args, "--help"], capture_output=True, text=True)
        return r.stdout + r.stderr
    main = h()
    return {"compile": main, "check": main, "tune": main,
            "run": h("run"), "inspect": h("inspect"), "opt": h("opt"), "compare": h("compare")}


def check_command(cmd, helps, man):
    """Problems with one doccc command line ([] when none)."""
    try:
        words = shlex.split(cmd, comments=True)
    except ValueError as e:
        return [f"does not parse as a shell line: {e}"]
    while words and re.match(r"[A-Za-z_]\w*=", words[0]):  # VAR=value doccc ...
        words.pop(0)
    if not words or words[0] != "doccc":
        return []
    sub = words[1] if len(words) > 1 and words[1] in SUBCOMMANDS else "compile"
    if sub == "compile" and len(words) > 1 and not words[1].startswith("-") and not re.search(
            r"\.(pt2|json)$", words[1]):
        return [f"'{words[1]}' is neither a subcommand ({', '.join(sorted(SUBCOMMANDS))}) nor a .pt2 or .json model"]
    have_help, have_man = known_options(helps[sub]), known_options(man)
    problems = []
    for w in words[1:]:
        if not w.startswith("-") or w == "-":
            continue
        opt = w.split("=", 1)[0]
        if re.match(r"-M[FT].", opt):  # -MFFILE, as gcc spells it
            opt = opt[:3]
        if opt not in have_help:
            problems.append(f"{opt}: not in `doccc {'' if sub == 'compile' else sub + ' '}--help`")
        if opt not in have_man:
            problems.append(f"{opt}: not in man/doccc.1")
    return problems


def check_commands(path, text, helps, man):
    """'file:line: command: problem' for every doccc command of every shell block."""
    out = []
    for lang, line, lines in code_blocks(text):
        if lang not in SHELL_LANGS:
            continue
        for cmd in shell_commands(lang, lines):
            for p in check_command(cmd, helps, man):
                out.append(f"{path}:{line}: {cmd}: {p}")
    return out


def check_links(path, text, root=ROOT, pending=PENDING):
    """'file:line: target: problem' for every relative link that goes nowhere."""
    out = []
    for n, line in enumerate(prose(text), 1):
        for target in re.findall(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", line):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path.resolve()
            try:
                rel = dest.relative_to(root.resolve()).as_posix()
            except ValueError:
                out.append(f"{path}:{n}: {target}: outside the repository")
                continue
            if rel in pending:
                continue
            if not dest.exists():
                out.append(f"{path}:{n}: {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
                out.append(f"{path}:{n}: {target}: no heading '#{anchor}' in {rel}")
    return out


# --- Tests ----------------------------------------------------------------

@pytest.fixture(scope="module")
def helps():
    return help_texts(doccc_path())


@pytest.fixture(scope="module")
def man():
    return (ROOT / "man" / "doccc.1").read_text()


def rel(p):
    return p.relative_to(ROOT).as_posix()


def test_commands_use_real_options(helps, man):
    problems, n = [], 0
    for p in DOCS:
        text = p.read_text()
        n += sum(1 for lang, _, ls in code_blocks(text) if lang in SHELL_LANGS
                 for c in shell_commands(lang, ls) if "doccc" in c)
        problems += check_commands(rel(p), text, helps, man)
    assert n > 30, f"only {n} doccc commands found in the docs: is the block parser broken?"
    assert not problems, "\n".join(problems)


def test_links(tmp_path):
    problems = []
    for p in DOCS:
        problems += check_links(p, p.read_text())
    assert not problems, "\n".join(problems)


def test_pending_still_missing():
    there = [f for f in PENDING if (ROOT / f).exists()]
    assert not there, f"now on this branch, remove from PENDING in test/test_docs.py: {there}"


def test_checkers_fail(helps, man, tmp_path):
    """A broken command, option or link is reported."""
    md = tmp_path / "docs" / "bad.md"
    md.parent.mkdir()
    md.write_text("# Bad\n\n```sh\ndoccc run lib.so -i x.npy --no-such-flag\n"
                  "doccc model.pt2 -t openmp --emit-cmake -o build/\n"
                  "doccc frobnicate model.pt2\n"
                  "doccc model.pt2 'unclosed\n```\n\n"
                  "```console\n$ doccc inspect lib.so --jsn\nbuild/lib.so: --output-is-not-checked\n```\n\n"
                  "[gone](missing.md), [fine](bad.md#bad), [no anchor](bad.md#nowhere), "
                  "[pending](pending.md), `[in code](nowhere.md)`\n")
    text = md.read_text()
    got = check_commands("bad.md", text, helps, man)
    assert any("--no-such-flag: not in `doccc run --help`" in p for p in got), got
    assert any("--no-such-flag: not in man/doccc.1" in p for p in got), got
    assert any("frobnicate" in p and "neither a subcommand" in p for p in got), got
    assert any("does not parse" in p for p in got), got
    assert any("--jsn: not in `doccc inspect --help`" in p for p in got), got
    assert not any("--emit-cmake" in p or "--output-is-not-checked" in p for p in got), got
    assert len(got) == 6, got
    links = check_links(md, text, root=tmp_path, pending={"docs/pending.md"})
    assert len(links) == 2 and "missing.md: no such file" in links[0] and "no heading '#nowhere'" in links[1], links


def run_tour(tmp_path):
    """Run the README's tour; returns the output of its commands."""
    text = (ROOT / "README.md").read_text()
    m = re.search(r"^## A five-minute tour\n(.*?)(?=^## )", text, re.M | re.S)
    assert m, "README.md has no '## A five-minute tour' section"
    blocks = code_blocks(m.group(1))
    assert blocks and blocks[0][0] == "sh" and any("export PATH" in ln for ln in blocks[0][2]), \
        "the tour's first block sets up PATH (the test replaces it)"
    work, bindir = tmp_path / "tour", tmp_path / "bin"
    work.mkdir()
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    env = dict(os.environ, PATH=f"{bindir}:{doccc_path().parent}:{os.environ['PATH']}")
    log, ran = [], 0
    for lang, _, lines in blocks[1:]:
        first = lines[0].strip() if lines else ""
        name = re.fullmatch(r"(?:#|/\*|//)\s*([\w.-]+)\s*(?:\*/)?", first)
        if lang in ("python", "c"):
            assert name, f"a {lang} block of the tour must name its file on its first line: {first!r}"
            (work / name.group(1)).write_text("\n".join(lines) + "\n")
            continue
        if lang not in SHELL_LANGS:
            continue
        for cmd in shell_commands(lang, lines):
            r = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, f"README tour: {cmd}\n{fmt_result(r)}"
            log.append(f"$ {cmd}\n{r.stdout}{r.stderr}")
            ran += 1
    return ran, "\n".join(log)


def test_readme_tour(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    import hostcpu
    if not hostcpu.runs_category("desktop"):
        pytest.skip("the tour compiles for -c desktop (AVX2), which this CPU lacks")
    ran, log = run_tour(tmp_path)
    assert ran >= 6, log
    assert "PASS: 0 of 1 output outside" in log and "doccc shared library" in log, log


def test_perf_page_from_fixtures(tmp_path):
    fixtures = ROOT / "test" / "fixtures" / "perf"
    out = tmp_path / "performance.md"
    r = subprocess.run([sys.executable, str(ROOT / "test" / "gen_perf_page.py"), "--build", str(fixtures),
                        "-o", str(out), "--date", "2026-01-02"], capture_output=True, text=True)
    assert r.returncode == 0, fmt_result(r)
    got, want = out.read_text(), (fixtures / "expected.md").read_text()
    assert got == want, f"test/gen_perf_page.py's page differs from test/fixtures/perf/expected.md:\n{got}"
    # the parts without a JSON file say so; the page links the trace image
    assert got.count("Not measured in this run") == 6 and "](img/trace.png)" in got
