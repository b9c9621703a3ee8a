//! Fuzz target `mutate_module`: structure-aware fuzzing of real modules. The corpus is
//! seeded with sample modules (see README.md); the custom mutator makes token- and
//! line-level changes (`relax_fuzz::mutate`: lines deleted, duplicated, moved and
//! re-indented; identifiers, numbers, strings and brackets replaced; lines spliced from
//! built-in donors), and one time in four falls back to libFuzzer's byte mutations.
//! Inputs are checked like `parse_module`'s.

#![no_main]

use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use relax_fuzz::mutate::{Rng, mutate_once};

/// Lines spliced into inputs: typical statements of each kind.
const DONORS: &[&str] = &[
    "@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((\"n\", 4), dtype=\"float32\")) -> R.Tensor((\"n\", 4), dtype=\"float32\"):\n        n = T.int64()\n        cls = Module\n        with R.dataflow():\n            y = R.call_tir(cls.add, (x,), out_sinfo=R.Tensor((n, 4), dtype=\"float32\"))\n            z: R.Tensor((n, 4), dtype=\"float32\") = R.match_cast(y, R.Tensor((n, 4), dtype=\"float32\"))\n            R.output(y)\n        if c:\n            r = y\n        else:\n            r = x\n        return y\n",
    "    @T.prim_func(private=True, s_tir=True)\n    def add(var_x: T.handle, var_y: T.handle):\n        T.func_attr({\"tirx.noalias\": True})\n        n = T.int64()\n        x = T.match_buffer(var_x, (n, T.int64(4)))\n        y = T.match_buffer(var_y, (n, T.int64(4)))\n        for i0, i1 in T.grid(n, T.int64(4)):\n            with T.sblock(\"T_add\"):\n                v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n                T.reads(x[v0, v1])\n                T.writes(y[v0, v1])\n                with T.init():\n                    y[v0, v1] = T.float32(0.0)\n                y[v0, v1] = x[v0, v1] + T.float32(1.0)\n",
];

fuzz_target!(|data: &[u8]| {
    relax_fuzz::check_module(&String::from_utf8_lossy(data));
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    let mut rng = Rng::new(u64::from(seed));
    if rng.one_in(4) {
        return libfuzzer_sys::fuzzer_mutate(data, size, max_size);
    }
    let mut text = String::from_utf8_lossy(&data[..size]).into_owned();
    for _ in 0..1 + rng.below(3) {
        mutate_once(&mut text, &mut rng, DONORS);
    }
    let bytes = text.as_bytes();
    if bytes.len() > max_size {
        // Too long for libFuzzer: fall back to a byte mutation of the original.
        return libfuzzer_sys::fuzzer_mutate(data, size, max_size);
    }
    data[..bytes.len()].copy_from_slice(bytes);
    bytes.len()
});
