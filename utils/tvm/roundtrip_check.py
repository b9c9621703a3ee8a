"""Checks that TVM re-reads relax's printed text as the same module.

usage: python roundtrip_check.py ORIGINAL.rlx OURS.rlx [ORIGINAL2.rlx OURS2.rlx ...]
       python roundtrip_check.py --parse-only OURS.rlx [OURS2.rlx ...]

Run it with a Python that has apache-tvm 0.25 installed (see ../shared/peers/setup.sh).
For each pair, TVM parses both files and the modules must be structurally equal (free
variables mapped). A pair whose original TVM itself cannot parse (omitted metadata,
single-function text calling other functions) is reported as skipped. Exit status 1 when
any pair differs or when TVM cannot parse our output.

With `--parse-only`, each file only has to parse (for our prints of text that TVM 0.25
cannot read itself, such as TVM 0.27's).
"""
import sys

import tvm
from tvm.script import from_source

from common import structural_equal


def load(path):
    with open(path, encoding="utf-8") as f:
        return from_source(f.read())


def last_error_line(e):
    lines = [l for l in str(e).strip().splitlines() if "error" in l.lower()]
    return (lines or [str(e).strip().splitlines()[-1]])[0]


def parse_only(paths):
    bad = 0
    for path in paths:
        try:
            load(path)
            print(f"parsed {path}")
        except Exception as e:  # noqa: BLE001
            print(f"FAIL {path}: TVM cannot parse our output ({last_error_line(e)})")
            bad += 1
    return 1 if bad else 0


def main(argv):
    if argv[:1] == ["--parse-only"]:
        return parse_only(argv[1:])
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__)
        return 2
    bad = 0
    for original, ours in zip(argv[0::2], argv[1::2]):
        try:
            a = load(original)
        except Exception as e:  # noqa: BLE001 - any parse failure of the original
            print(f"skipped {original}: TVM cannot parse the original ({last_error_line(e)})")
            continue
        try:
            b = load(ours)
        except Exception as e:  # noqa: BLE001
            print(f"FAIL {ours}: TVM cannot parse our output ({last_error_line(e)})")
            bad += 1
            continue
        if structural_equal(a, b, map_free_vars=True):
            print(f"equal {original}")
        else:
            print(f"FAIL {original}: not structurally equal to {ours}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
