//! Unit tests of the simulator on small hand-written PTX: parsing and decoding,
//! predication, comparisons, conversions and their rounding, integer and float
//! arithmetic, barriers with shared memory, warp shuffles, local memory, and the
//! errors (out-of-bounds and misaligned accesses, `trap`, deadlocks, unknown
//! instructions), also through the exported C functions.

use crate::decode::Program;
use crate::exec::{Fault, FaultKind, LaunchDims, launch};
use crate::memory::DeviceMemory;

const HEAD: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// A loaded module and its memory.
struct Sim {
    mem: DeviceMemory,
    prog: Program,
}

impl Sim {
    fn new(body: &str) -> Sim {
        let mut mem = DeviceMemory::new();
        let prog = Program::load(&format!("{HEAD}{body}"), 80, &mut mem, 1).unwrap_or_else(|e| panic!("{e}"));
        Sim { mem, prog }
    }

    fn buf(&mut self, bytes: &[u8]) -> u64 {
        let a = self.mem.alloc(bytes.len() as u64, 0).expect("alloc");
        self.mem.write(a, bytes).expect("write");
        a
    }

    fn f32s(&mut self, v: &[f32]) -> u64 {
        self.buf(&v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>())
    }

    fn read(&self, a: u64, n: usize) -> Vec<u8> {
        let mut out = vec![0u8; n];
        self.mem.read(a, &mut out).expect("read");
        out
    }

    fn read_f32(&self, a: u64, n: usize) -> Vec<f32> {
        self.read(a, 4 * n).chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    /// Launches `kernel` on `grid` x `block` threads; each parameter gets the low bytes
    /// of its value.
    fn run(&mut self, kernel: &str, grid: u32, block: u32, args: &[u64]) -> Result<(), Fault> {
        let k = self.prog.kernel(kernel).expect("the kernel");
        let kk = &self.prog.kernels[k];
        let mut params = vec![0u8; kk.param_bytes];
        assert_eq!(kk.params.len(), args.len());
        for (p, v) in kk.params.iter().zip(args) {
            params[p.offset..p.offset + p.size].copy_from_slice(&v.to_le_bytes()[..p.size]);
        }
        let dims = LaunchDims { grid: [grid, 1, 1], block: [block, 1, 1], dynamic_shared: 0 };
        launch(&self.prog, k, &dims, &params, &mut self.mem)
    }
}

/// The register and memory types for a PTX type name.
fn reg_ty(ty: &str) -> (&'static str, &'static str) {
    match ty {
        "f32" => (".f32", "f32"),
        "f64" => (".f64", "f64"),
        "f16" | "bf16" | "b16" | "u16" | "s16" => (".b16", "b16"),
        "u8" | "s8" | "b8" => (".b16", "u8"),
        "u64" | "s64" | "b64" => (".b64", "b64"),
        _ => (".b32", "b32"),
    }
}

/// Runs one instruction `line` on one thread: `%a`, `%b`, `%c` hold `ins` (type, bits),
/// `%d` of type `out` is the result.
fn op(line: &str, ins: &[(&str, u64)], out: &str) -> u64 {
    let mut body = String::from(".visible .entry k(.param .u64 k_in, .param .u64 k_out)\n{\n.reg .b64 %rd<3>;\n");
    let names = ["%a", "%b", "%c"];
    for (i, (ty, _)) in ins.iter().enumerate() {
        body += &format!(".reg {} {};\n", reg_ty(ty).0, names[i]);
    }
    body += &format!(".reg {} %d;\n", reg_ty(out).0);
    body += "ld.param.u64 %rd1, [k_in];\nld.param.u64 %rd2, [k_out];\n";
    for (i, (ty, _)) in ins.iter().enumerate() {
        body += &format!("ld.global.{} {}, [%rd1+{}];\n", reg_ty(ty).1, names[i], 8 * i);
    }
    body += line;
    body += &format!("\nst.global.{} [%rd2], %d;\nret;\n}}\n", reg_ty(out).1);
    let mut s = Sim::new(&body);
    let input: Vec<u8> = ins.iter().flat_map(|(_, v)| v.to_le_bytes()).chain([0u8; 8]).collect();
    let a = s.buf(&input);
    let o = s.buf(&[0u8; 8]);
    s.run("k", 1, 1, &[a, o]).unwrap_or_else(|e| panic!("{line}: {e}"));
    u64::from_le_bytes(s.read(o, 8).try_into().expect("8 bytes")) & mask_of(out)
}

fn mask_of(ty: &str) -> u64 {
    let (r, m) = reg_ty(ty);
    match (r, m) {
        (_, "u8") => 0xff,
        (".b16", _) => 0xffff,
        (".b32" | ".f32", _) => 0xffff_ffff,
        _ => u64::MAX,
    }
}

fn f(x: f32) -> u64 {
    u64::from(x.to_bits())
}

fn d(x: f64) -> u64 {
    x.to_bits()
}

const PRED: &str = "
.visible .entry pred(.param .u64 pred_x, .param .u64 pred_out, .param .u32 pred_n)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<6>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<6>;

	ld.param.u64 	%rd1, [pred_x];
	ld.param.u64 	%rd2, [pred_out];
	ld.param.u32 	%r1, [pred_n];
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mad.lo.s32 	%r5, %r3, %r4, %r2;
	setp.ge.u32 	%p1, %r5, %r1;
	@%p1 bra 	$L__done;
	mul.wide.u32 	%rd3, %r5, 4;
	add.s64 	%rd4, %rd1, %rd3;
	ld.global.nc.f32 	%f1, [%rd4];
	setp.lt.f32 	%p2, %f1, 0f00000000;
	neg.f32 	%f2, %f1;
	selp.f32 	%f3, %f2, %f1, %p2;
	@!%p2 add.rn.f32 	%f3, %f3, 0f3F800000;
	add.s64 	%rd5, %rd2, %rd3;
	st.global.f32 	[%rd5], %f3;
$L__done:
	ret;
}
";

#[test]
fn predication_guards_and_selp() {
    let mut s = Sim::new(PRED);
    let x: Vec<f32> = (0..70).map(|i| (i as f32 - 35.0) * 0.37).chain([f32::NAN, -0.0]).collect();
    let n = x.len();
    let xa = s.f32s(&x);
    let out = s.f32s(&vec![0.0; n]);
    // 3 blocks of 32 threads: the guard keeps the 24 threads past `n` from writing.
    s.run("pred", 3, 32, &[xa, out, n as u64]).expect("runs");
    let got = s.read_f32(out, n);
    for (v, g) in x.iter().zip(&got) {
        let want = if *v < 0.0 { -v } else { v + 1.0 };
        assert!(want.to_bits() == g.to_bits() || (want.is_nan() && g.is_nan()), "{v}: {g} != {want}");
    }
}

/// What a float comparison means.
type FloatCmp = fn(f32, f32) -> bool;
/// What an integer comparison means.
type IntCmp = fn(i32, i32) -> bool;

#[test]
fn setp_compares_as_ptx_says() {
    let cmps: [(&str, FloatCmp); 14] = [
        ("eq", |a, b| a == b),
        ("ne", |a, b| !a.is_nan() && !b.is_nan() && a != b),
        ("lt", |a, b| a < b),
        ("le", |a, b| a <= b),
        ("gt", |a, b| a > b),
        ("ge", |a, b| a >= b),
        ("equ", |a, b| a.is_nan() || b.is_nan() || a == b),
        ("neu", |a, b| a != b),
        ("ltu", |a, b| a.is_nan() || b.is_nan() || a < b),
        ("leu", |a, b| a.is_nan() || b.is_nan() || a <= b),
        ("gtu", |a, b| a.is_nan() || b.is_nan() || a > b),
        ("geu", |a, b| a.is_nan() || b.is_nan() || a >= b),
        ("num", |a, b| !a.is_nan() && !b.is_nan()),
        ("nan", |a, b| a.is_nan() || b.is_nan()),
    ];
    let vals = [1.0f32, 2.0, -0.0, 0.0, f32::NAN, f32::INFINITY];
    for (name, want) in cmps {
        for a in vals {
            for b in vals {
                let line = format!(".reg .pred %q;\nsetp.{name}.f32 %q, %a, %b;\nselp.u32 %d, 1, 0, %q;");
                let got = op(&line, &[("f32", f(a)), ("f32", f(b))], "u32");
                assert_eq!(got, u64::from(want(a, b)), "setp.{name}.f32 {a} {b}");
            }
        }
    }
    let ints: [(&str, &str, IntCmp); 8] = [
        ("lt", "s32", |a, b| a < b),
        ("lt", "u32", |a, b| (a as u32) < (b as u32)),
        ("ge", "s32", |a, b| a >= b),
        ("lo", "u32", |a, b| (a as u32) < (b as u32)),
        ("ls", "u32", |a, b| (a as u32) <= (b as u32)),
        ("hi", "u32", |a, b| (a as u32) > (b as u32)),
        ("hs", "u32", |a, b| (a as u32) >= (b as u32)),
        ("ne", "b32", |a, b| a != b),
    ];
    for (name, ty, want) in ints {
        for a in [-3i32, 0, 5, i32::MIN] {
            for b in [-3i32, 0, 5] {
                let line = format!(".reg .pred %q;\nsetp.{name}.{ty} %q, %a, %b;\nselp.u32 %d, 1, 0, %q;");
                let got = op(&line, &[(ty, u64::from(a as u32)), (ty, u64::from(b as u32))], "u32");
                assert_eq!(got, u64::from(want(a, b)), "setp.{name}.{ty} {a} {b}");
            }
        }
    }
}

#[test]
fn setp_combines_and_writes_both_results() {
    // p = (a < b) OP !c, q = !(a < b) OP !c, for every a < b and c.
    for (op_name, f_op) in
        [("and", (|x, y| x && y) as fn(bool, bool) -> bool), ("or", |x, y| x || y), ("xor", |x, y| x ^ y)]
    {
        for (a, b) in [(1u64, 2u64), (2, 1)] {
            for c in [0u64, 1] {
                let line = format!(
                    ".reg .pred %p<4>;\n.reg .b32 %r<3>;\nsetp.ne.u32 %p3, %c, 0;\nsetp.lt.{op_name}.u32 %p1|%p2, %a, %b, !%p3;\n\
                     selp.u32 %r1, 1, 0, %p1;\nselp.u32 %r2, 2, 0, %p2;\nor.b32 %d, %r1, %r2;"
                );
                let got = op(&line, &[("u32", a), ("u32", b), ("u32", c)], "u32");
                let (lt, nc) = (a < b, c == 0);
                let want = u64::from(f_op(lt, nc)) | (u64::from(f_op(!lt, nc)) << 1);
                assert_eq!(got, want, "setp.lt.{op_name} {a} {b} !{c}");
            }
        }
    }
}

#[test]
fn cvt_rounds_and_saturates() {
    // Float to integer: the integer rounding, then saturation; NaN is 0.
    for x in [2.5f32, -2.5, 1.7, -1.7, 0.5, 3e9, -3e9, f32::NAN] {
        for (m, r) in [
            ("rni", (|x: f32| x.round_ties_even()) as fn(f32) -> f32),
            ("rzi", f32::trunc),
            ("rmi", f32::floor),
            ("rpi", f32::ceil),
        ] {
            let got = op(&format!("cvt.{m}.s32.f32 %d, %a;"), &[("f32", f(x))], "s32") as u32 as i32;
            assert_eq!(got, r(x) as i32, "cvt.{m}.s32.f32 {x}");
            let got = op(&format!("cvt.{m}.u8.f32 %d, %a;"), &[("f32", f(x))], "u8") as u8;
            assert_eq!(got, r(x) as u8, "cvt.{m}.u8.f32 {x}");
        }
    }
    // f64 to f32 in every direction, just above and below 1, and past the largest f32.
    let tiny = 2f64.powi(-30);
    let cases: [(f64, [f32; 4]); 4] = [
        (1.0 + tiny, [1.0, 1.0, 1.0, 1f32.next_up()]),
        (-(1.0 + tiny), [-1.0, -1.0, (-1f32).next_down(), -1.0]),
        (1e300, [f32::INFINITY, f32::MAX, f32::MAX, f32::INFINITY]),
        (-1e300, [f32::NEG_INFINITY, f32::MIN, f32::NEG_INFINITY, f32::MIN]),
    ];
    for (x, want) in cases {
        for (m, w) in ["rn", "rz", "rm", "rp"].iter().zip(want) {
            let got = op(&format!("cvt.{m}.f32.f64 %d, %a;"), &[("f64", d(x))], "f32");
            assert_eq!(got, f(w), "cvt.{m}.f32.f64 {x}");
        }
    }
    // Integer to float: 2^24 + 1 lies between two f32s.
    let big = (1u64 << 24) + 1;
    for (m, w) in [("rn", 16777216.0f32), ("rz", 16777216.0), ("rm", 16777216.0), ("rp", 16777218.0)] {
        assert_eq!(op(&format!("cvt.{m}.f32.u32 %d, %a;"), &[("u32", big)], "f32"), f(w), "cvt.{m}.f32.u32");
    }
    // Integer to integer: sign extension, truncation, saturation.
    assert_eq!(op("cvt.s64.s32 %d, %a;", &[("s32", 0xffff_fffe)], "s64"), (-2i64) as u64);
    assert_eq!(op("cvt.u64.u32 %d, %a;", &[("u32", 0xffff_fffe)], "u64"), 0xffff_fffe);
    assert_eq!(op("cvt.u32.u64 %d, %a;", &[("u64", 0x1_2345_6789)], "u32"), 0x2345_6789);
    assert_eq!(op("cvt.sat.u8.s32 %d, %a;", &[("s32", 300)], "u8"), 255);
    assert_eq!(op("cvt.sat.u8.s32 %d, %a;", &[("s32", 0xffff_fff0)], "u8"), 0);
    assert_eq!(op("cvt.sat.s16.s64 %d, %a;", &[("s64", (-40000i64) as u64)], "s16"), 0x8000);
    // Halves: round to nearest even, and back exactly.
    let third = 1.0f32 / 3.0;
    assert_eq!(
        op("cvt.rn.f16.f32 %d, %a;", &[("f32", f(third))], "f16"),
        u64::from(half::f16::from_f32(third).to_bits())
    );
    let h = half::f16::from_f32(third);
    assert_eq!(op("cvt.f32.f16 %d, %a;", &[("f16", u64::from(h.to_bits()))], "f32"), f(h.to_f32()));
    assert_eq!(op("cvt.rz.f16.f32 %d, %a;", &[("f32", f(70000.0))], "f16"), u64::from(half::f16::MAX.to_bits()));
    // Float to float of the same type with an integer rounding.
    assert_eq!(op("cvt.rni.f32.f32 %d, %a;", &[("f32", f(2.5))], "f32"), f(2.0));
    assert_eq!(op("cvt.rpi.f32.f32 %d, %a;", &[("f32", f(-2.5))], "f32"), f(-2.0));
    // `.sat` clamps floats to [0, 1] and NaN to 0; `.ftz` flushes subnormals.
    assert_eq!(op("cvt.sat.f32.f32 %d, %a;", &[("f32", f(1.5))], "f32"), f(1.0));
    assert_eq!(op("cvt.sat.f32.f32 %d, %a;", &[("f32", f(f32::NAN))], "f32"), f(0.0));
    assert_eq!(op("cvt.ftz.f32.f32 %d, %a;", &[("f32", f(-1e-40))], "f32"), f(-0.0));
}

#[test]
fn float_arithmetic_is_exactly_rounded() {
    let (a, b) = (1.0f32, 2f32.powi(-30));
    assert_eq!(op("add.rn.f32 %d, %a, %b;", &[("f32", f(a)), ("f32", f(b))], "f32"), f(1.0));
    assert_eq!(op("add.rz.f32 %d, %a, %b;", &[("f32", f(a)), ("f32", f(b))], "f32"), f(1.0));
    assert_eq!(op("add.rp.f32 %d, %a, %b;", &[("f32", f(a)), ("f32", f(b))], "f32"), f(1f32.next_up()));
    assert_eq!(op("sub.rm.f32 %d, %a, %b;", &[("f32", f(a)), ("f32", f(b))], "f32"), f(1f32.next_down()));
    assert_eq!(op("sub.rz.f32 %d, %a, %b;", &[("f32", f(-a)), ("f32", f(b))], "f32"), f(-1.0));
    // Products and quotients: nearest matches Rust; directions bracket it.
    for (x, y) in [(1.1f32, 3.3f32), (1.0, 3.0), (-7.0, 3.0), (1e-20, 3e-25)] {
        for (ins, exact) in [("mul", f64::from(x) * f64::from(y)), ("div", f64::from(x) / f64::from(y))] {
            let rn =
                f32::from_bits(op(&format!("{ins}.rn.f32 %d, %a, %b;"), &[("f32", f(x)), ("f32", f(y))], "f32") as u32);
            let rm =
                f32::from_bits(op(&format!("{ins}.rm.f32 %d, %a, %b;"), &[("f32", f(x)), ("f32", f(y))], "f32") as u32);
            let rp =
                f32::from_bits(op(&format!("{ins}.rp.f32 %d, %a, %b;"), &[("f32", f(x)), ("f32", f(y))], "f32") as u32);
            assert_eq!(rn, if ins == "mul" { x * y } else { x / y }, "{ins}.rn {x} {y}");
            assert!(f64::from(rm) <= exact && exact <= f64::from(rp), "{ins} {x} {y}: {rm} {rp}");
            assert!(rm == rp || rm.next_up() == rp, "{ins} {x} {y}: {rm} {rp} are neighbors");
        }
    }
    // fma rounds once.
    let (x, y, z) = (1.0f32 + f32::EPSILON, 1.0f32 - f32::EPSILON, -1.0f32);
    assert_eq!(
        op("fma.rn.f32 %d, %a, %b, %c;", &[("f32", f(x)), ("f32", f(y)), ("f32", f(z))], "f32"),
        f(x.mul_add(y, z))
    );
    assert_ne!(x.mul_add(y, z), x * y + z);
    assert_eq!(
        op("fma.rn.f64 %d, %a, %b, %c;", &[("f64", d(0.1)), ("f64", d(10.0)), ("f64", d(-1.0))], "f64"),
        d(0.1f64.mul_add(10.0, -1.0))
    );
    // min/max return the number when the other operand is NaN; neg/abs flip bits.
    assert_eq!(op("min.f32 %d, %a, %b;", &[("f32", f(f32::NAN)), ("f32", f(2.0))], "f32"), f(2.0));
    assert_eq!(op("max.f32 %d, %a, %b;", &[("f32", f(-1.0)), ("f32", f(f32::NAN))], "f32"), f(-1.0));
    assert_eq!(op("neg.f32 %d, %a;", &[("f32", f(0.0))], "f32"), f(-0.0));
    assert_eq!(op("abs.f64 %d, %a;", &[("f64", d(-3.5))], "f64"), d(3.5));
    assert_eq!(op("sqrt.rn.f32 %d, %a;", &[("f32", f(2.0))], "f32"), f(2f32.sqrt()));
    assert_eq!(op("rcp.rn.f64 %d, %a;", &[("f64", d(3.0))], "f64"), d(1.0 / 3.0));
    // The approximate functions give the precise value rounded.
    assert_eq!(op("ex2.approx.f32 %d, %a;", &[("f32", f(0.5))], "f32"), f(0.5f64.exp2() as f32));
    assert_eq!(op("lg2.approx.f32 %d, %a;", &[("f32", f(10.0))], "f32"), f(10f64.log2() as f32));
    assert_eq!(op("sin.approx.f32 %d, %a;", &[("f32", f(1.0))], "f32"), f(1f64.sin() as f32));
    // Halves compute in f16.
    let (p, q) = (half::f16::from_f32(1.5), half::f16::from_f32(0.0999));
    let got = op("add.rn.f16 %d, %a, %b;", &[("f16", u64::from(p.to_bits())), ("f16", u64::from(q.to_bits()))], "f16");
    assert_eq!(got, u64::from(half::f16::from_f64(p.to_f64() + q.to_f64()).to_bits()));
}

#[test]
fn integer_arithmetic_wraps_and_extends() {
    let m32 = |x: i64| u64::from(x as u32);
    assert_eq!(op("add.s32 %d, %a, %b;", &[("s32", m32(i32::MAX.into())), ("s32", 1)], "s32"), m32(i32::MIN.into()));
    assert_eq!(
        op("add.sat.s32 %d, %a, %b;", &[("s32", m32(i32::MAX.into())), ("s32", 1)], "s32"),
        m32(i32::MAX.into())
    );
    assert_eq!(op("mul.wide.s32 %d, %a, %b;", &[("s32", m32(-3)), ("s32", 7)], "s64"), (-21i64) as u64);
    assert_eq!(op("mul.wide.u32 %d, %a, %b;", &[("u32", 0xffff_ffff), ("u32", 2)], "u64"), 0x1_ffff_fffe);
    assert_eq!(op("mul.hi.u64 %d, %a, %b;", &[("u64", u64::MAX), ("u64", 3)], "u64"), 2);
    assert_eq!(op("mul.hi.s64 %d, %a, %b;", &[("s64", (-1i64) as u64), ("s64", 3)], "s64"), u64::MAX);
    assert_eq!(op("mad.lo.s64 %d, %a, %b, %c;", &[("s64", 6), ("s64", 7), ("s64", (-2i64) as u64)], "s64"), 40);
    assert_eq!(op("div.s32 %d, %a, %b;", &[("s32", m32(-7)), ("s32", 2)], "s32"), m32(-3));
    assert_eq!(op("rem.s64 %d, %a, %b;", &[("s64", (-7i64) as u64), ("s64", 2)], "s64"), (-1i64) as u64);
    assert_eq!(op("div.u64 %d, %a, %b;", &[("u64", 7), ("u64", 0)], "u64"), u64::MAX);
    assert_eq!(op("shr.s32 %d, %a, %b;", &[("s32", m32(-16)), ("u32", 40)], "s32"), m32(-1));
    assert_eq!(op("shr.u32 %d, %a, %b;", &[("u32", m32(-16)), ("u32", 40)], "u32"), 0);
    assert_eq!(op("shl.b64 %d, %a, %b;", &[("b64", 3), ("u32", 62)], "b64"), 0xc000_0000_0000_0000);
    assert_eq!(op("min.s64 %d, %a, %b;", &[("s64", (-5i64) as u64), ("s64", 3)], "s64"), (-5i64) as u64);
    assert_eq!(op("max.u32 %d, %a, %b;", &[("u32", m32(-5)), ("u32", 3)], "u32"), m32(-5));
    assert_eq!(op("bfe.s32 %d, %a, %b, %c;", &[("s32", 0x0000_0f00), ("u32", 8), ("u32", 4)], "s32"), m32(-1));
    assert_eq!(op("bfe.u64 %d, %a, %b, %c;", &[("u64", 0xabcd_0000), ("u32", 16), ("u32", 8)], "u64"), 0xcd);
    assert_eq!(op("bfi.b32 %d, %a, %b, %c, 4;", &[("b32", 0xf), ("b32", 0xffff_0000), ("u32", 8)], "b32"), 0xffff_0f00);
    assert_eq!(op("popc.b64 %d, %a;", &[("b64", 0xff00_ff00)], "u32"), 16);
    assert_eq!(op("clz.b32 %d, %a;", &[("b32", 1)], "u32"), 31);
    assert_eq!(op("brev.b32 %d, %a;", &[("b32", 1)], "b32"), 0x8000_0000);
    assert_eq!(
        op("prmt.b32 %d, %a, %b, %c;", &[("b32", 0x4433_2211), ("b32", 0x8877_6655), ("b32", 0x0000_7054)], "b32"),
        0x8811_6655
    );
    assert_eq!(
        op("lop3.b32 %d, %a, %b, %c, 0x96;", &[("b32", 0xf0), ("b32", 0xcc), ("b32", 0xaa)], "b32"),
        0xf0 ^ 0xcc ^ 0xaa
    );
    // Byte loads extend by the type's signedness into the register.
    assert_eq!(op("cvt.s32.s8 %d, %a;", &[("s8", 0x80)], "s32"), m32(-128));
    // Pack and unpack.
    assert_eq!(
        op(".reg .b32 %x, %y;\nmov.b64 {%x, %y}, %a;\nmov.b64 %d, {%y, %x};", &[("b64", 0x1111_2222_3333_4444)], "b64"),
        0x3333_4444_1111_2222
    );
}

const REVERSE: &str = "
.visible .entry rev(.param .u64 rev_x, .param .u64 rev_out)
{
	.shared .align 4 .b8 buf[512];
	.reg .b32 	%r<10>;
	.reg .f32 	%f<2>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [rev_x];
	ld.param.u64 	%rd2, [rev_out];
	mov.u32 	%r1, %tid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r8, %ctaid.x;
	mad.lo.s32 	%r9, %r8, %r2, %r1;
	mul.wide.u32 	%rd3, %r9, 4;
	add.s64 	%rd4, %rd1, %rd3;
	ld.global.f32 	%f1, [%rd4];
	mov.u32 	%r3, buf;
	shl.b32 	%r4, %r1, 2;
	add.s32 	%r5, %r3, %r4;
	st.shared.f32 	[%r5], %f1;
	bar.sync 	0;
	sub.s32 	%r6, %r2, %r1;
	sub.s32 	%r6, %r6, 1;
	shl.b32 	%r7, %r6, 2;
	add.s32 	%r7, %r3, %r7;
	ld.shared.f32 	%f1, [%r7];
	add.s64 	%rd5, %rd2, %rd3;
	st.global.f32 	[%rd5], %f1;
	ret;
}
";

#[test]
fn barriers_order_shared_memory_between_threads() {
    let mut s = Sim::new(REVERSE);
    let x: Vec<f32> = (0..192).map(|i| i as f32).collect();
    let xa = s.f32s(&x);
    let out = s.f32s(&[0.0; 192]);
    // Each thread reads what the mirror thread of its block wrote before the barrier.
    s.run("rev", 2, 96, &[xa, out]).expect("runs");
    let got = s.read_f32(out, 192);
    let want: Vec<f32> = (0..192).map(|i| ((i / 96) * 96 + 95 - i % 96) as f32).collect();
    assert_eq!(got, want);
}

const TREE: &str = "
.visible .entry tree(.param .u64 tree_x, .param .u64 tree_out)
{
	.shared .align 4 .f32 sh[256];
	.reg .pred 	%p<4>;
	.reg .b32 	%r<12>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [tree_x];
	ld.param.u64 	%rd2, [tree_out];
	mov.u32 	%r1, %tid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %ctaid.x;
	mad.lo.s32 	%r4, %r3, %r2, %r1;
	mul.wide.u32 	%rd3, %r4, 4;
	add.s64 	%rd4, %rd1, %rd3;
	ld.global.f32 	%f1, [%rd4];
	mov.u64 	%rd5, sh;
	cvta.shared.u64 	%rd5, %rd5;
	mul.wide.u32 	%rd6, %r1, 4;
	add.s64 	%rd6, %rd5, %rd6;
	st.f32 	[%rd6], %f1;
	bar.sync 	0;
	shr.u32 	%r5, %r2, 1;
$L__loop:
	setp.eq.s32 	%p1, %r5, 0;
	@%p1 bra 	$L__end;
	setp.ge.u32 	%p2, %r1, %r5;
	@%p2 bra 	$L__skip;
	{
	.reg .b64 	%t<2>;
	mul.wide.u32 	%t0, %r5, 4;
	add.s64 	%t1, %rd6, %t0;
	ld.f32 	%f2, [%t1];
	}
	ld.f32 	%f3, [%rd6];
	add.rn.f32 	%f3, %f3, %f2;
	st.f32 	[%rd6], %f3;
$L__skip:
	barrier.sync.aligned 	0;
	shr.u32 	%r5, %r5, 1;
	bra.uni 	$L__loop;
$L__end:
	setp.ne.s32 	%p3, %r1, 0;
	@%p3 bra 	$L__ret;
	ld.shared.f32 	%f1, [sh];
	mul.wide.u32 	%rd7, %r3, 4;
	add.s64 	%rd7, %rd2, %rd7;
	st.global.f32 	[%rd7], %f1;
$L__ret:
	ret;
}
";

#[test]
fn a_tree_reduction_in_shared_memory_sums_each_block() {
    let mut s = Sim::new(TREE);
    let x: Vec<f32> = (0..512).map(|i| ((i * 37) % 101) as f32 * 0.013 - 0.5).collect();
    let xa = s.f32s(&x);
    let out = s.f32s(&[0.0; 4]);
    s.run("tree", 4, 128, &[xa, out]).expect("runs");
    let got = s.read_f32(out, 4);
    for (b, g) in got.iter().enumerate() {
        let mut v = x[b * 128..(b + 1) * 128].to_vec();
        let mut half = 64;
        while half > 0 {
            for i in 0..half {
                v[i] += v[i + half];
            }
            half /= 2;
        }
        assert_eq!(g.to_bits(), v[0].to_bits(), "block {b}");
    }
}

const WARP: &str = "
.visible .entry warp(.param .u64 warp_x, .param .u64 warp_out)
{
	.reg .b32 	%r<2>;
	.reg .f32 	%f<3>;
	.reg .b64 	%rd<5>;

	ld.param.u64 	%rd1, [warp_x];
	ld.param.u64 	%rd2, [warp_out];
	mov.u32 	%r1, %tid.x;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd1, %rd3;
	ld.global.f32 	%f1, [%rd4];
	shfl.sync.bfly.b32 	%f2, %f1, 16, 31, -1;
	add.rn.f32 	%f1, %f1, %f2;
	shfl.sync.bfly.b32 	%f2, %f1, 8, 31, -1;
	add.rn.f32 	%f1, %f1, %f2;
	shfl.sync.bfly.b32 	%f2, %f1, 4, 31, -1;
	add.rn.f32 	%f1, %f1, %f2;
	shfl.sync.bfly.b32 	%f2, %f1, 2, 31, -1;
	add.rn.f32 	%f1, %f1, %f2;
	shfl.sync.bfly.b32 	%f2, %f1, 1, 31, -1;
	add.rn.f32 	%f1, %f1, %f2;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.f32 	[%rd4], %f1;
	ret;
}
";

#[test]
fn warp_shuffles_exchange_registers() {
    let mut s = Sim::new(WARP);
    let x: Vec<f32> = (0..64).map(|i| (i as f32).sin()).collect();
    let xa = s.f32s(&x);
    let out = s.f32s(&[0.0; 64]);
    s.run("warp", 1, 64, &[xa, out]).expect("runs");
    let got = s.read_f32(out, 64);
    for w in 0..2 {
        let mut v = x[w * 32..(w + 1) * 32].to_vec();
        for o in [16, 8, 4, 2, 1] {
            v = (0..32).map(|i| v[i] + v[i ^ o]).collect();
        }
        assert_eq!(&got[w * 32..(w + 1) * 32], &v[..], "warp {w}");
    }
}

const LOCAL: &str = "
.global .align 4 .u32 table[4] = {10, 20, 30, 40};

.visible .entry loc(.param .u64 loc_out)
{
	.local .align 8 .b8 	__local_depot0[16];
	.reg .b64 	%SP;
	.reg .b64 	%SPL;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<4>;

	mov.u64 	%SPL, __local_depot0;
	cvta.local.u64 	%SP, %SPL;
	mov.u32 	%r1, %tid.x;
	st.local.v2.u32 	[%SPL], {%r1, 7};
	ld.u32 	%r2, [%SP+4];
	ld.local.u32 	%r3, [%SPL];
	ld.global.u32 	%r4, [table+8];
	atom.global.add.u32 	%r5, [table], %r1;
	add.s32 	%r6, %r2, %r3;
	add.s32 	%r6, %r6, %r4;
	ld.param.u64 	%rd1, [loc_out];
	mul.wide.u32 	%rd2, %r1, 4;
	add.s64 	%rd3, %rd1, %rd2;
	st.global.u32 	[%rd3], %r6;
	ret;
}
";

#[test]
fn local_memory_globals_vectors_and_atomics() {
    let mut s = Sim::new(LOCAL);
    let out = s.buf(&[0u8; 32]);
    s.run("loc", 1, 8, &[out]).expect("runs");
    let got: Vec<u32> = s.read(out, 32).chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let want: Vec<u32> = (0..8).map(|t| 7 + t + 30).collect();
    assert_eq!(got, want);
    // The atomic adds of the 8 threads accumulated in the module's variable.
    let table = s.mem.find(crate::memory::GLOBAL_BASE, 16, &mut 0).map(|i| s.mem.region(i).data[..4].to_vec());
    assert_eq!(table, Some((10u32 + (0..8).sum::<u32>()).to_le_bytes().to_vec()));
}

#[test]
fn out_of_bounds_and_misaligned_accesses_are_faults() {
    let mut s = Sim::new(PRED);
    let x = s.f32s(&[1.0; 8]);
    let out = s.f32s(&[0.0; 8]);
    // `n` says 9 elements, the buffers hold 8: thread 8 reads past the end.
    let e = s.run("pred", 1, 32, &[x, out, 9]).expect_err("out of bounds");
    assert_eq!(e.kind, FaultKind::IllegalAddress);
    assert!(e.message.contains("kernel `pred`, block (0, 0, 0), thread (8, 0, 0)"), "{}", e.message);
    assert!(e.message.contains("`ld.global.nc.f32 %f1, [%rd4];`"), "{}", e.message);
    assert!(e.message.contains(&format!("at 0x{:x}", x + 32)), "{}", e.message);
    // A pointer two bytes into a buffer misaligns every f32 access.
    let e = s.run("pred", 1, 1, &[x + 2, out, 1]).expect_err("misaligned");
    assert_eq!(e.kind, FaultKind::Misaligned);
    // Freed memory is gone.
    s.mem.free(x).expect("free");
    let e = s.run("pred", 1, 1, &[x, out, 1]).expect_err("freed");
    assert_eq!(e.kind, FaultKind::IllegalAddress);
    // Shared memory has bounds too.
    let mut s = Sim::new(&REVERSE.replace("buf[512]", "buf[64]"));
    let x = s.f32s(&[1.0; 32]);
    let out = s.f32s(&[0.0; 32]);
    let e = s.run("rev", 1, 32, &[x, out]).expect_err("shared out of bounds");
    assert_eq!(e.kind, FaultKind::IllegalAddress);
    assert!(e.message.contains("shared"), "{}", e.message);
}

#[test]
fn trap_and_deadlocks_are_faults() {
    let mut s = Sim::new(".visible .entry t() { trap; }");
    assert_eq!(s.run("t", 1, 1, &[]).expect_err("trap").kind, FaultKind::Trap);
    let split = ".visible .entry split()
{
	.reg .pred %p1;
	.reg .b32 %r1;
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 bra $L__a;
	bar.sync 0;
	bra.uni $L__e;
$L__a:
	bar.sync 1;
$L__e:
	ret;
}";
    let mut s = Sim::new(split);
    let e = s.run("split", 1, 4, &[]).expect_err("deadlock");
    assert_eq!(e.kind, FaultKind::Deadlock);
    assert!(e.message.contains("different barriers"), "{}", e.message);
    // A kernel that never ends is stopped at the instruction limit.
    let s = Sim::new(".visible .entry spin()\n{\n$L__top:\n\tbra.uni $L__top;\n}");
    let dims = LaunchDims { grid: [1, 1, 1], block: [1, 1, 1], dynamic_shared: 0 };
    let mut mem = DeviceMemory::new();
    let e = crate::exec::launch_limited(&s.prog, 0, &dims, &[], &mut mem, 1000).expect_err("hangs");
    assert_eq!(e.kind, FaultKind::Timeout);
    // Threads that exit before a barrier do not hold it up.
    let early = split.replace("bar.sync 1;", "ret;");
    let mut s = Sim::new(&early);
    s.run("split", 1, 4, &[]).expect("exited threads count as arrived");
}

#[test]
fn unsupported_text_is_an_error_with_its_line() {
    let load = |body: &str| Program::load(&format!("{HEAD}{body}"), 80, &mut DeviceMemory::new(), 1);
    let e = load(".visible .entry k()\n{\n\t.reg .pred %p<3>;\n\tvote.sync.any.pred %p1, %p2, -1;\n\tret;\n}")
        .expect_err("vote");
    assert_eq!(e.line, 7);
    assert!(e.message.contains("unknown instruction `vote.sync.any.pred`"), "{}", e.message);
    let e = load(".visible .entry k()\n{\n\t.reg .pred %p;\n\t.reg .b32 %r;\n\tsetp.lt.b32 %p, %r, %r;\n}")
        .expect_err("setp");
    assert!(e.message.contains("unknown instruction `setp.lt.b32`"), "{}", e.message);
    let e =
        load(".visible .entry k()\n{\n\t.reg .f64 %fd;\n\tfma.rz.f64 %fd, %fd, %fd, %fd;\n}").expect_err("fma.rz.f64");
    assert!(e.message.contains("not supported by the simulator"), "{}", e.message);
    let e = load(".visible .entry k()\n{\n\tcall.uni foo, ();\n}").expect_err("call");
    assert!(e.message.contains("calls"), "{}", e.message);
    let e = load(".visible .entry k()\n{\n\t.reg .b32 %r1;\n\tadd.cc.u32 %r1, %r1, %r1;\n}").expect_err("add.cc");
    assert!(e.message.contains("`.cc`"), "{}", e.message);
    let e = load(".visible .entry k()\n{\n\tmov.u32 %r9, 1;\n}").expect_err("undeclared");
    assert!(e.message.contains("`%r9` is not a declared register"), "{}", e.message);
    let e = load(".visible .entry k()\n{\n\tbra $L__nowhere;\n}").expect_err("label");
    assert!(e.message.contains("no label `$L__nowhere`"), "{}", e.message);
    let e = load(".section .debug_info { }").expect_err("directive");
    assert!(e.message.contains("unsupported directive `.section`"), "{}", e.message);
    let e = load(".visible .entry k(\n\t.param .u64 p\n\n{\n}").expect_err("syntax");
    assert_eq!(e.line, 7);
    let e = Program::load(".version 9.9\n.target sm_80\n.address_size 64\n", 80, &mut DeviceMemory::new(), 1)
        .expect_err("version");
    assert!(e.version);
    let e = Program::load(".version 7.8\n.target sm_90\n.address_size 64\n", 80, &mut DeviceMemory::new(), 1)
        .expect_err("target");
    assert!(e.message.contains("newer than the device"), "{}", e.message);
    // A module whose variables were placed frees them when it fails later.
    let mut mem = DeviceMemory::new();
    let text = format!("{HEAD}.global .u32 g[4];\n.visible .entry k()\n{{\n\tfoo;\n}}");
    assert!(Program::load(&text, 80, &mut mem, 5).is_err());
    assert!(mem.is_empty());
}

#[test]
fn the_c_api_runs_a_kernel_and_explains_failures() {
    #![expect(unsafe_code, reason = "calls the exported C functions")]
    use std::ffi::{CStr, c_void};

    use crate::ffi::*;

    let msg = |code: i32| {
        let mut p = std::ptr::null();
        // SAFETY: writes one pointer to a static string.
        assert_eq!(unsafe { cuGetErrorString(code, &mut p) }, 0);
        // SAFETY: a NUL-terminated string that lives as long as the library.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    };
    assert_eq!(cuInit(3), 1);
    assert!(msg(1).contains("cuInit takes flags 0"), "{}", msg(1));
    assert_eq!(cuInit(0), 0);
    let (mut n, mut dev, mut major) = (0, -1, 0);
    // SAFETY: each call writes one int.
    unsafe {
        assert_eq!(cuDeviceGetCount(&mut n), 0);
        assert_eq!(cuDeviceGet(&mut dev, 0), 0);
        assert_eq!(cuDeviceGetAttribute(&mut major, 75, dev), 0);
    }
    assert_eq!((n, dev, major), (1, 0, 8));
    let mut name = [0 as std::ffi::c_char; 8];
    // SAFETY: the buffer holds 8 bytes.
    assert_eq!(unsafe { cuDeviceGetName(name.as_mut_ptr(), 8, 0) }, 0);
    // SAFETY: NUL-terminated within the buffer.
    assert_eq!(unsafe { CStr::from_ptr(name.as_ptr()) }.to_str(), Ok("relax P"));
    let mut ctx = std::ptr::null_mut();
    // SAFETY: writes one handle.
    assert_eq!(unsafe { cuCtxCreate_v2(&mut ctx, 0, 0) }, 0);
    let ptx = format!("{HEAD}{PRED}\0");
    let mut module = std::ptr::null_mut();
    // SAFETY: a NUL-terminated image; writes one handle.
    assert_eq!(unsafe { cuModuleLoadData(&mut module, ptx.as_ptr().cast()) }, 0);
    let mut func = std::ptr::null_mut();
    // SAFETY: a NUL-terminated name; writes one handle.
    assert_eq!(unsafe { cuModuleGetFunction(&mut func, module, c"nope".as_ptr()) }, 500);
    // SAFETY: as above.
    assert_eq!(unsafe { cuModuleGetFunction(&mut func, module, c"pred".as_ptr()) }, 0);
    let x: Vec<u8> = [-1.0f32, 2.0, -3.0, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let (mut xd, mut od) = (0u64, 0u64);
    // SAFETY: each writes one device pointer; the copy reads `x.len()` bytes.
    unsafe {
        assert_eq!(cuMemAlloc_v2(&mut xd, 16), 0);
        assert_eq!(cuMemAlloc_v2(&mut od, 16), 0);
        assert_eq!(cuMemcpyHtoD_v2(xd, x.as_ptr().cast(), 16), 0);
    }
    let launch = |n: u32, xd: &mut u64, od: &mut u64| {
        let mut n = n;
        let mut params: [*mut c_void; 3] =
            [std::ptr::from_mut(xd).cast(), std::ptr::from_mut(od).cast(), std::ptr::from_mut(&mut n).cast()];
        // SAFETY: one pointer per parameter, alive during the call.
        unsafe {
            cuLaunchKernel(func, 1, 1, 1, 8, 1, 1, 0, std::ptr::null_mut(), params.as_mut_ptr(), std::ptr::null_mut())
        }
    };
    assert_eq!(launch(4, &mut xd, &mut od), 0);
    assert_eq!(cuCtxSynchronize(), 0);
    let mut back = [0u8; 16];
    // SAFETY: the buffer holds 16 bytes.
    assert_eq!(unsafe { cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), od, 16) }, 0);
    let got: Vec<f32> = back.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert_eq!(got, [1.0, 3.0, 3.0, 5.0]);
    // An out-of-bounds launch: the launch succeeds, synchronizing reports the fault with
    // where it happened, and the context stays failed.
    assert_eq!(launch(5, &mut xd, &mut od), 0);
    assert_eq!(cuCtxSynchronize(), 700);
    let text = msg(700);
    assert!(text.starts_with("an illegal memory access was encountered: kernel `pred`"), "{text}");
    assert!(text.contains("thread (4, 0, 0)"), "{text}");
    // SAFETY: the buffer holds 16 bytes.
    assert_eq!(unsafe { cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), od, 16) }, 700);
    // Releasing still works in the failed context.
    assert_eq!(cuMemFree_v2(xd), 0);
    assert_eq!(cuMemFree_v2(xd), 1);
    assert_eq!(cuModuleUnload(module), 0);
    assert_eq!(cuCtxDestroy_v2(ctx), 0);
    assert_eq!(cuCtxSynchronize(), 201);
    // Bad PTX names the instruction and its line.
    let mut ctx = std::ptr::null_mut();
    // SAFETY: writes one handle.
    assert_eq!(unsafe { cuCtxCreate_v2(&mut ctx, 0, 0) }, 0);
    let bad = format!("{HEAD}.visible .entry k()\n{{\n\tfrobnicate.f32 %f1;\n}}\n\0");
    // SAFETY: as above.
    assert_eq!(unsafe { cuModuleLoadData(&mut module, bad.as_ptr().cast()) }, 218);
    assert!(msg(218).contains("line 6: unknown instruction `frobnicate.f32`"), "{}", msg(218));
    // A bad launch configuration is reported by the launch itself, and a bad handle.
    // SAFETY: as above.
    assert_eq!(unsafe { cuModuleLoadData(&mut module, ptx.as_ptr().cast()) }, 0);
    // SAFETY: as above.
    assert_eq!(unsafe { cuModuleGetFunction(&mut func, module, c"pred".as_ptr()) }, 0);
    let (mut xd, mut od) = (0u64, 0u64);
    let mut n = 1u32;
    let mut params: [*mut c_void; 3] =
        [std::ptr::from_mut(&mut xd).cast(), std::ptr::from_mut(&mut od).cast(), std::ptr::from_mut(&mut n).cast()];
    // SAFETY: one pointer per parameter, alive during the call.
    let r = unsafe {
        cuLaunchKernel(func, 1, 1, 1, 2048, 1, 1, 0, std::ptr::null_mut(), params.as_mut_ptr(), std::ptr::null_mut())
    };
    assert_eq!(r, 1);
    assert!(msg(1).contains("exceeds"), "{}", msg(1));
    // SAFETY: a function handle that does not exist is rejected before anything is read.
    let r = unsafe {
        cuLaunchKernel(
            std::ptr::null_mut(),
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            std::ptr::null_mut(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(r, 400);
    assert_eq!(cuCtxDestroy_v2(ctx), 0);
}

#[test]
fn launch_configurations_are_checked() {
    let mut s = Sim::new(&PRED.replace("\n{", "\n.maxntid 64, 1, 1\n{"));
    let x = s.f32s(&[1.0; 4]);
    let e = s.run("pred", 1, 128, &[x, x, 4]).expect_err("too many threads");
    assert_eq!(e.kind, FaultKind::InvalidLaunch);
    assert!(e.message.contains(".maxntid"), "{}", e.message);
    let e = s.run("pred", 0, 32, &[x, x, 4]).expect_err("empty grid");
    assert_eq!(e.kind, FaultKind::InvalidLaunch);
    // Threads that run in phases hold their state at once: 1024 threads of 512 KiB of
    // local memory are more than the simulator takes.
    let mut s = Sim::new(".visible .entry big()\n{\n\t.local .align 4 .b8 d[524288];\n\tbar.sync 0;\n\tret;\n}");
    let e = s.run("big", 1, 1024, &[]).expect_err("too much state");
    assert_eq!(e.kind, FaultKind::OutOfResources);
    s.run("big", 1, 64, &[]).expect("64 threads fit");
}
