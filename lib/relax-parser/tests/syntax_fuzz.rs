//! A quick in-tree fuzzer: random bytes, random token soup and mutated samples must never
//! make `parse_syntax` panic, overflow the stack or take long. The real fuzzer is the
//! cargo-fuzz target in `utils/fuzz` (nightly); this one runs in every `cargo test`.
//!
//! `RELAX_FUZZ_ITERS` sets the number of inputs per strategy (default 2,000; three
//! strategies plus truncations, so about 10k inputs in all).

use std::time::{Duration, Instant};

use relax_parser::parse_syntax;

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const SAMPLES: &[&str] = &[
    include_str!("data/025_02_types_match_cast_dps_packed.rlx"),
    include_str!("data/027_04_gpu_scheduled_rms_norm.rlx"),
    include_str!("data/lowered_tir_excerpt.rlx"),
];

const PIECES: &[&str] = &[
    "def",
    "class",
    "if",
    "elif",
    "else",
    "for",
    "in",
    "while",
    "with",
    "as",
    "return",
    "assert",
    "pass",
    "not",
    "and",
    "or",
    "is",
    "lambda",
    "import",
    "from",
    "True",
    "None",
    "x",
    "R.add",
    "T.int64",
    "0",
    "1.5",
    "1e-05",
    "\"s\"",
    "'''",
    "\"",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    ".",
    "=",
    "->",
    "@",
    "+",
    "-",
    "*",
    "**",
    "//",
    "<",
    "==",
    "!=",
    "+=",
    "~",
    ";",
    "\\",
    "\n",
    "\n    ",
    "\n        ",
    "\n  ",
    "\t",
    "\r\n",
    " ",
    " ",
    " ",
    "#",
    "# from a import b\n",
    "\0",
    "\u{1b}",
    "é",
    "$",
];

fn iterations() -> usize {
    std::env::var("RELAX_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000)
}

#[track_caller]
fn check(input: &str) {
    let start = Instant::now();
    let (file, errors) = parse_syntax(input);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?} on {:?}", &input[..input.len().min(200)]);
    // Errors are sorted, in bounds and on character boundaries.
    for pair in errors.windows(2) {
        assert!(pair[0].span <= pair[1].span);
    }
    for e in &errors {
        assert!(e.span.start <= e.span.end && e.span.end as usize <= input.len());
        assert!(input.is_char_boundary(e.span.start as usize));
        assert!(!e.message.is_empty() && !e.message.ends_with('.'));
    }
    // No errors means a tree.
    assert!(!errors.is_empty() || file.is_some());
    drop(file);
}

fn mutate(rng: &mut Rng, sample: &str) -> String {
    let mut bytes = sample.as_bytes().to_vec();
    for _ in 0..=rng.below(8) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(6) {
            0 if at < bytes.len() => {
                bytes.remove(at);
            }
            1 if at < bytes.len() => bytes[at] = rng.next() as u8,
            2 => {
                let piece = rng.pick(PIECES).as_bytes();
                bytes.splice(at..at, piece.iter().copied());
            }
            3 => {
                // Duplicate a slice (repeats lines, brackets, indentation).
                let len = rng.below(64).min(bytes.len() - at.min(bytes.len()));
                let chunk: Vec<u8> = bytes[at..at + len].to_vec();
                bytes.splice(at..at, chunk);
            }
            4 => bytes.truncate(at),
            _ => {
                // Delete a slice.
                let len = rng.below(32).min(bytes.len().saturating_sub(at));
                bytes.drain(at..at + len);
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn random_bytes() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..iterations() {
        let len = rng.below(512);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        check(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn token_soup() {
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    for _ in 0..iterations() {
        let mut s = String::new();
        for _ in 0..rng.below(200) {
            s.push_str(rng.pick(PIECES));
            if rng.below(3) == 0 {
                s.push(' ');
            }
        }
        check(&s);
    }
}

#[test]
fn mutated_samples() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for _ in 0..iterations() {
        let sample = rng.pick(SAMPLES);
        check(&mutate(&mut rng, sample));
    }
}

#[test]
fn every_prefix_of_a_sample() {
    let sample = SAMPLES[0];
    for (i, _) in sample.char_indices() {
        check(&sample[..i]);
    }
}
