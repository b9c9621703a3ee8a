"""Malformed variants of real modules: every one must get a proper diagnostic.

usage: python3 utils/fuzz/malformed_samples.py --relax-opt BIN [--seed N] [--per-kind K]
           [--timeout S] [--show-accepted] PATH...

PATH are `.rlx` files or folders of them (transcripts are cut into their sections as
`support/mutate.rs` does: at lines starting `=== ` or `######## `, dropping the
`prim funcs:` / `out shapes:` lines). Every section that `relax-opt` accepts as it is
becomes the seed of up to K variants of each kind:

| kind | what changes | must be an error |
|---|---|---|
| `truncate` | the text is cut inside a random code line | no (a cut can leave valid text) |
| `delete-token` | one token of a code line is deleted | no |
| `indent` | a code line inside a body is indented 4 more (no block opens there) or 2 less / 2 more | yes |
| `shape` | the rank of a tensor annotation of a binding changes (`(4, n)` -> `(4, n, 1)`) | yes when the value's rank is known (a Relax op call) |
| `dtype` | the dtype of a tensor annotation of an op-call binding changes | yes (same condition) |
| `match-cast` | the annotation of a match-cast binding stops being the cast's type | yes |
| `undefined` | a variable used as a call argument is renamed to an undefined name | yes |

Each variant goes through `relax-opt FILE` and must:

* exit with status 0 or 1 (no panic, no signal), within the timeout;
* on status 1: print only diagnostics on standard error, each headed
  `FILE:LINE:COL: SEVERITY: message`, with at least one error, and every header followed by
  its snippet: the line `LINE │ text` whose text is that line of the input (or a window of
  it, for very long lines) and a caret line;
* on status 0 (only for kinds that may stay valid): print text that reads back and prints
  identically (`relax-opt` on its own output).

A variant of a "must be an error" kind that is accepted is a failure. Failures are printed
with the variant text in a file under `--out` (default `/tmp/malformed-failures`), and the
exit status is 1 when there is any. `--show-accepted` lists the accepted variants of the
kinds that may stay valid, to review by hand.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

HEADER = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|note|remark): ")
SNIPPET = re.compile(r"^ *(?P<num>\d+) │ ?(?P<text>.*)$")
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?(?:e[+-]?\d+)?|->|//|\*\*|[<>=!]=|\S')
DTYPES = ["float32", "float16", "int32", "int8", "bool", "int64", "uint8", "bfloat16"]
OP_CALL = re.compile(r"^(\s+)(\w+): R\.Tensor\(\(([^()]*)\), dtype=\"(\w+)\"\) = (R\.(?!call_|match_cast|builtin|memory|vm|const)[\w.]+)\(")
MATCH_CAST = re.compile(r"^(\s+)(\w+): (R\.Tensor\(.*?dtype=\"(\w+)\".*?\)) = R\.match_cast\(")
# The first argument of an op call; not of `R.call_tir` and its kind, whose first argument
# may name a function that single-function text does not show.
ARG_CALL = re.compile(r"(= R\.(?!call_|make_closure)[\w.]+\()([a-z_][a-z0-9_]*)([,)])")


def sections(text):
    out, cur = [], []
    for line in text.split("\n"):
        if line.startswith("=== ") or line.startswith("######## "):
            out.append("\n".join(cur))
            cur = []
            continue
        if line.startswith("prim funcs:") or line.startswith("out shapes:"):
            continue
        cur.append(line)
    out.append("\n".join(cur))
    return [s for s in out if s.strip()]


def rlx_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(".rlx") and "/Output" not in root:
                        yield os.path.join(root, f)
        else:
            yield p


def run(relax_opt, path, timeout, stdin=None, args=()):
    try:
        r = subprocess.run(
            [relax_opt, path, *args], input=stdin, capture_output=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return None, "", ""
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def code_lines(lines):
    """Indices of lines holding code (not blank, not comments), inside a def."""
    out, inside = [], False
    for i, l in enumerate(lines):
        s = l.strip()
        if s.startswith("def ") or s.startswith("@"):
            inside = True
        if inside and s and not s.startswith("#"):
            out.append(i)
    return out


def indent_of(l):
    return len(l) - len(l.lstrip(" "))


def variants(text, rng, per_kind):
    lines = text.split("\n")
    code = code_lines(lines)
    if not code:
        return
    for _ in range(per_kind):
        i = rng.choice(code)
        l = lines[i]
        body = l.strip()
        if len(body) > 2:
            cut = indent_of(l) + rng.randrange(1, len(body))
            yield "truncate", False, "\n".join(lines[:i] + [l[:cut]])
    for _ in range(per_kind):
        i = rng.choice(code)
        toks = list(TOKEN.finditer(lines[i]))
        if toks:
            t = rng.choice(toks)
            new = lines[i][: t.start()] + lines[i][t.end():]
            yield "delete-token", False, "\n".join(lines[:i] + [new] + lines[i + 1:])
    # Lines that are neither the first of a block nor decorators / defs.
    plain = [
        i for i in code
        if i > 0 and not lines[i].strip().startswith(("@", "def ", "class "))
        and lines[i - 1].strip() and not lines[i - 1].rstrip().endswith(":")
        and indent_of(lines[i]) >= 8
    ]
    for _ in range(per_kind if plain else 0):
        i = rng.choice(plain)
        l = lines[i]
        # 4 more is an unexpected indent only when the line above is not already deeper
        # (the end of a nested block, which the line would then join).
        deeper = indent_of(lines[i - 1]) > indent_of(l)
        delta = rng.choice([2, -2] if deeper else [4, 2, -2])
        new = " " * (indent_of(l) + delta) + l.lstrip(" ")
        yield "indent", True, "\n".join(lines[:i] + [new] + lines[i + 1:])
    # (Not when an argument is an opaque `metadata[...]` constant: its type is unknown.)
    ops = [(i, m) for i in code for m in [OP_CALL.match(lines[i])] if m and "metadata[" not in lines[i]]
    for _ in range(per_kind if ops else 0):
        i, m = rng.choice(ops)
        dims = m.group(3)
        new_dims = (dims + " 1" if dims.endswith(",") else dims + ", 1") if dims else "1,"
        new = lines[i].replace(f"R.Tensor(({dims}), dtype=", f"R.Tensor(({new_dims}), dtype=", 1)
        yield "shape", True, "\n".join(lines[:i] + [new] + lines[i + 1:])
    for _ in range(per_kind if ops else 0):
        i, m = rng.choice(ops)
        other = rng.choice([d for d in DTYPES if d != m.group(4)])
        head = f"{m.group(2)}: R.Tensor(({m.group(3)}), dtype=\"{m.group(4)}\")"
        new = lines[i].replace(head, f"{m.group(2)}: R.Tensor(({m.group(3)}), dtype=\"{other}\")", 1)
        yield "dtype", True, "\n".join(lines[:i] + [new] + lines[i + 1:])
    casts = [(i, m) for i in code for m in [MATCH_CAST.match(lines[i])] if m]
    for _ in range(per_kind if casts else 0):
        i, m = rng.choice(casts)
        other = rng.choice([d for d in DTYPES if d != m.group(4)])
        ann = m.group(3)
        new_ann = ann.replace(f'dtype="{m.group(4)}"', f'dtype="{other}"', 1)
        new = lines[i].replace(f"{m.group(2)}: {ann} =", f"{m.group(2)}: {new_ann} =", 1)
        yield "match-cast", True, "\n".join(lines[:i] + [new] + lines[i + 1:])
    uses = [(i, m) for i in code for m in ARG_CALL.finditer(lines[i])]
    for _ in range(per_kind if uses else 0):
        i, m = rng.choice(uses)
        new = lines[i][: m.start(2)] + "undefined_zz" + lines[i][m.end(2):]
        yield "undefined", True, "\n".join(lines[:i] + [new] + lines[i + 1:])


def check_diagnostics(path, src_lines, stderr):
    """Problems with the diagnostics on standard error (empty when they are fine)."""
    problems = []
    lines = stderr.split("\n")
    errors = 0
    i = 0
    while i < len(lines):
        l = lines[i]
        m = HEADER.match(l)
        if not m:
            if l.strip() and not l.startswith(" ") and "│" not in l[:12]:
                problems.append(f"stray line on stderr: {l!r}")
            i += 1
            continue
        if m.group("file") != path:
            problems.append(f"header names {m.group('file')!r}, not the file")
        errors += m.group("sev") == "error"
        line_no = int(m.group("line"))
        # The snippet: `  │`, then `N │ text`, then the caret line.
        snippet = None
        j = i + 1
        while j < len(lines) and not HEADER.match(lines[j]):
            s = SNIPPET.match(lines[j])
            if s and int(s.group("num")) == line_no and snippet is None:
                snippet = s.group("text")
                caret = lines[j + 1] if j + 1 < len(lines) else ""
                if "^" not in caret:
                    problems.append(f"no caret under line {line_no}: {caret!r}")
            j += 1
        if not 1 <= line_no <= max(1, len(src_lines) + 1):
            problems.append(f"line {line_no} is past the end ({len(src_lines)} lines)")
        elif snippet is None:
            problems.append(f"no source line {line_no} after `{l}`")
        else:
            want = src_lines[line_no - 1] if line_no <= len(src_lines) else ""
            # A long line is shown as a window, `...` marking the cut ends.
            pieces = [p.strip() for p in snippet.split("...") if p.strip()]
            plain = want.replace("\t", " ")
            if not all(p in plain for p in pieces) and not any(ord(c) < 32 for c in want):
                problems.append(f"line {line_no} shown as {snippet!r}, input has {want!r}")
        i = j
    if errors == 0:
        problems.append("exit status 1 without an error")
    return problems


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--relax-opt", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-kind", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--max-bytes", type=int, default=60000)
    ap.add_argument("--out", default="/tmp/malformed-failures")
    ap.add_argument("--show-accepted", action="store_true")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="malformed-")
    stats = {}
    failures = 0
    seeds = 0
    for f in rlx_files(a.paths):
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for k, sec in enumerate(sections(text)):
            if len(sec) > a.max_bytes:
                continue
            seed_path = os.path.join(work, "seed.rlx")
            with open(seed_path, "w", encoding="utf-8") as fh:
                fh.write(sec)
            status, _, _ = run(a.relax_opt, seed_path, a.timeout)
            if status != 0:
                continue
            seeds += 1
            for n, (kind, must_fail, var) in enumerate(variants(sec, rng, a.per_kind)):
                path = os.path.join(work, f"{kind}.rlx")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(var)
                status, out, err = run(a.relax_opt, path, a.timeout)
                st = stats.setdefault(kind, {"error": 0, "accepted": 0, "bad": 0})
                problems = []
                if status is None:
                    problems.append(f"timed out after {a.timeout}s")
                elif status == 1:
                    problems = check_diagnostics(path, var.split("\n"), err)
                elif status == 0:
                    if must_fail:
                        problems.append("accepted, but it must be an error")
                    else:
                        s2, out2, err2 = run(a.relax_opt, "-", a.timeout, stdin=out.encode())
                        if s2 != 0:
                            problems.append(f"the output does not read back: {err2[:300]}")
                        elif out2 != out:
                            problems.append("printing the output again changes it")
                    if a.show_accepted and not problems:
                        print(f"accepted {kind}: {f} section {k}")
                else:
                    problems.append(f"exit status {status}: {err[-400:]}")
                if problems:
                    st["bad"] += 1
                    failures += 1
                    name = os.path.join(a.out, f"{failures:04d}-{kind}.rlx")
                    with open(name, "w", encoding="utf-8") as fh:
                        fh.write(var)
                    print(f"FAIL {kind} of {f} section {k} -> {name}")
                    for p in problems[:5]:
                        print(f"    {p}")
                else:
                    st["error" if status == 1 else "accepted"] += 1
    print(f"{seeds} seed sections")
    for kind, st in sorted(stats.items()):
        print(f"  {kind:13} {st['error']:5} errors, {st['accepted']:5} accepted, {st['bad']:4} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
