"""The progress line (issue 31): while doccc compiles or tunes, stderr shows
one line, redrawn in place ("\\r", the text, ESC [ K) and erased at the end.

  - DOCC_PROGRESS=1 draws it whatever stderr is (a pipe here): a compile
    names its phases, the weights' bytes ("MiB") with embedded and with
    external weights, and ends with the line erased, so that what a
    terminal shows at the end is exactly the stderr of a run without it;
  - without it, on a pipe, nothing of it appears (stderr has no \\r or
    escape); nor with -q, DOCC_PROGRESS=0, or doccc check --json;
  - on a real terminal (a pty) it appears without DOCC_PROGRESS, and not
    with -q or TERM=dumb;
  - messages printed meanwhile (notes, -v's commands) erase it first and
    stand on lines of their own;
  - doccc tune counts its candidates and names the step it tunes.
"""

import fcntl
import os
import re
import select
import struct
import subprocess
import termios

import pytest

from conftest import doccc_cmd, doccc_path, fmt_result, require

ERASE = "\r\033[K"


def render(text):
    """What a terminal shows after text: \\r returns to the line's start,
    ESC [ K clears from the cursor to the line's end, other characters
    overwrite."""
    lines, cur, col, i = [], [], 0, 0
    while i < len(text):
        if text.startswith("\033[K", i):
            del cur[col:]
            i += 3
            continue
        ch = text[i]
        i += 1
        if ch == "\r":
            col = 0
        elif ch == "\n":
            lines.append("".join(cur))
            cur, col = [], 0
        else:
            if col < len(cur):
                cur[col] = ch
            else:
                cur.append(ch)
            col += 1
    return "\n".join(lines + ["".join(cur)] if cur else lines) + ("\n" if lines and not cur else "")


def test_render():
    assert render("\rabc\033[K\rx\033[K\r\033[K") == ""
    assert render("\rabc\033[K\r\033[Knote\n\rabc\033[K\r\033[K") == "note\n"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """Two Linear layers: 1.5 M floats, 6 MiB of weights."""
    torch = require("torch")
    d = tmp_path_factory.mktemp("progress")

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.a = torch.nn.Linear(512, 1024)
            self.b = torch.nn.Linear(1024, 1024)

        def forward(self, x):
            return self.b(torch.relu(self.a(x)))

    pt2 = d / "prog.pt2"
    torch.export.save(torch.export.export(M().eval(), (torch.randn(2, 512),)), str(pt2))
    return pt2


def doccc_raw(*args, env=None, timeout=600):
    """doccc_cmd, but with stderr as written: text mode would turn each \r
    into a newline."""
    full = {k: v for k, v in os.environ.items() if k != "DOCC_PROGRESS"}
    full.update(env or {})
    r = subprocess.run([str(doccc_path())] + [str(a) for a in args], capture_output=True, env=full,
                       stdin=subprocess.DEVNULL, timeout=timeout)
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(), r.stderr.decode())


def compile_(pt2, out, *extra, env=None):
    r = doccc_raw(pt2, "-o", f"{out}/", *extra, env=env)
    assert r.returncode == 0, fmt_result(r)
    return r


PHASES = ["reading prog.pt2", "importing", "running passes", "writing weights", "emitting prog.c",
          "compiling prog.c (", "linking libprog.so", "installing libprog.so"]


def test_phases_and_bytes(model, tmp_path):
    plain = compile_(model, tmp_path / "plain", env={"DOCC_PROGRESS": "0"})
    assert "\r" not in plain.stderr and "\033" not in plain.stderr, fmt_result(plain)
    r = compile_(model, tmp_path / "on", env={"DOCC_PROGRESS": "1"})
    for p in PHASES:
        assert f"\rdoccc: {p}" in r.stderr, f"no phase {p!r}:\n{fmt_result(r)}"
    assert "writing weights 0 B / 6.0 MiB\033[K" in r.stderr, fmt_result(r)
    assert r.stderr.endswith(ERASE), fmt_result(r)
    assert render(r.stderr) == plain.stderr
    assert r.stdout == "" and plain.stdout == ""
    # the phases in their order
    at = [r.stderr.index(f"\rdoccc: {p}") for p in PHASES]
    assert at == sorted(at), at


def test_external_weights(model, tmp_path):
    r = compile_(model, tmp_path, "--external-weights", env={"DOCC_PROGRESS": "1"})
    assert "\rdoccc: writing prog.weights 0 B / 6.0 MiB\033[K" in r.stderr, fmt_result(r)
    assert render(r.stderr) == ""


def test_nothing_without_it(model, tmp_path):
    r = compile_(model, tmp_path / "a")
    assert r.stderr == "" and r.stdout == "", fmt_result(r)
    for extra in (["-q"], ["--quiet"]):
        r = compile_(model, tmp_path / "q", *extra, env={"DOCC_PROGRESS": "1"})
        assert r.stderr == "", fmt_result(r)
    r = doccc_raw("check", model, "--json", env={"DOCC_PROGRESS": "1"})
    assert r.returncode == 0 and r.stderr == "" and r.stdout.lstrip().startswith("{"), fmt_result(r)
    r = doccc_raw("check", model, env={"DOCC_PROGRESS": "1"})
    assert r.returncode == 0 and "\r" not in r.stderr + r.stdout and "\033" not in r.stderr + r.stdout, fmt_result(r)


def test_messages_stand_on_their_own_lines(model, tmp_path):
    """-v's commands and the tuning database's notes, printed while the line
    is shown: each erases it first; what stays is the plain run's text."""
    db = tmp_path / "empty.db"
    r = doccc_cmd("tune", model, "-t", "sequential", "--tuning-db", db, "--tune-budget", "0")
    assert r.returncode == 0, fmt_result(r)
    args = ("-t", "sequential", "--tuning-db", db, "-v")
    plain = compile_(model, tmp_path / "plain", *args, env={"DOCC_PROGRESS": "0"})
    r = compile_(model, tmp_path / "on", *args, env={"DOCC_PROGRESS": "1"})
    assert "note:" in plain.stderr and "clang" in plain.stderr, fmt_result(plain)
    norm = lambda s: s.replace(str(tmp_path / "on"), "OUT").replace(str(tmp_path / "plain"), "OUT")
    # the working directory differs from run to run
    wd = lambda s: re.sub(r"doccc-[A-Za-z0-9]{6}", "doccc-XXXXXX", norm(s))
    assert wd(render(r.stderr)) == wd(plain.stderr)
    for line in plain.stderr.splitlines():
        assert wd(ERASE + line + "\n") in wd(r.stderr), f"{line!r} not on a line of its own:\n{r.stderr!r}"


def run_on_pty(args, env, cols=0):
    """Run doccc with its stderr on a pseudo-terminal (cols wide, when
    given): (exit status, what it wrote there)."""
    master, slave = os.openpty()
    if cols:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    try:
        p = subprocess.Popen([str(doccc_path())] + [str(a) for a in args], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=slave, env=env)
    finally:
        os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 600)
        if not ready:
            p.kill()
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    p.stdout.read()
    return p.wait(), out.decode(errors="replace")


def test_terminal(model, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DOCC_PROGRESS"}
    env["TERM"] = "xterm"
    rc, text = run_on_pty([model, "-o", f"{tmp_path}/a/"], env)
    assert rc == 0 and "\rdoccc: compiling prog.c (" in text and text.endswith(ERASE), repr(text)
    assert render(text) == ""
    # cut to the terminal's width less one, so that it never wraps
    rc, text = run_on_pty([model, "-o", f"{tmp_path}/w/"], env, cols=20)
    drawn = re.findall(r"\r([^\r\n]*?)\033\[K", text)
    assert rc == 0 and "doccc: compiling pr" in drawn and max(map(len, drawn)) == 19, repr(text)
    rc, text = run_on_pty([model, "-o", f"{tmp_path}/b/", "-q"], env)
    assert rc == 0 and text == "", repr(text)
    rc, text = run_on_pty([model, "-o", f"{tmp_path}/c/"], dict(env, TERM="dumb"))
    assert rc == 0 and text == "", repr(text)
    rc, text = run_on_pty([model, "-o", f"{tmp_path}/d/"], dict(env, DOCC_PROGRESS="0"))
    assert rc == 0 and text == "", repr(text)


def test_tune_counts_candidates(tmp_path):
    torch = require("torch")
    lin = torch.nn.Linear(64, 32).eval()
    pt2 = tmp_path / "lin.pt2"
    torch.export.save(torch.export.export(lin, (torch.randn(4, 64),)), str(pt2))
    r = doccc_raw("tune", pt2, "-t", "sequential", "-c", "desktop", "--tuning-db", tmp_path / "t.db",
                  env={"DOCC_PROGRESS": "1", "DOCC_TUNE_MS": "2"}, timeout=900)
    assert r.returncode == 0, fmt_result(r)
    step = "\rdoccc: tuning step 1 of 1, 'linear' (gemm "
    assert step in r.stderr and "\rdoccc: compiling the timing harness" in r.stderr, fmt_result(r)
    assert "candidates 0 of " in r.stderr and "building the rules' schedule" in r.stderr, fmt_result(r)
    assert "timing " in r.stderr and r.stderr.endswith("\n"), fmt_result(r)
    shown = render(r.stderr)
    assert "tuning step" not in shown and all(": note: " in line for line in shown.splitlines()), shown
