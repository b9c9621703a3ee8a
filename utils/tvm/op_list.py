"""The Relax ops of a TVM release and how its LegalizeOps treats them.

usage: python op_list.py > utils/tvm/tvm-0.25-ops.txt

Prints one line per op of `tvm.ir.Op.list_op_names()` whose name starts with `relax.`,
sorted: the name and `legalize` (the op has an `FLegalize` attribute), `packed` (an
`FCallPacked` attribute: LegalizeOps turns it into a packed call) or `-` (neither).
`lib/relax-runtime/tests/op_table.rs` reads the file to build the op table of
`docs/legalize.md` and to check that the project's op table knows every op.

Run it with TVM 0.25's Python (`~/.cache/relax-peers/tvm025/bin/python`).
"""
import tvm
from tvm import relax  # noqa: F401  (registers the Relax ops)


def main():
    print(f"# Relax ops of TVM {tvm.__version__}: written by utils/tvm/op_list.py")
    for name in sorted(n for n in tvm.ir.Op.list_op_names() if n.startswith("relax.")):
        op = tvm.ir.Op.get(name)
        if op.get_attr("FLegalize") is not None:
            kind = "legalize"
        elif op.get_attr("FCallPacked") is not None:
            kind = "packed"
        else:
            kind = "-"
        print(name, kind)


if __name__ == "__main__":
    main()
