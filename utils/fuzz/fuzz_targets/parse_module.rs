//! Fuzz target `parse_module`: arbitrary bytes, decoded as lossy UTF-8, go through the
//! whole front end (`relax_parser::parse_module`, the verifier, the printer, diagnostic
//! rendering). Errors must point inside the input; a module that parses and verifies must
//! print text that parses, verifies and prints identically. See `relax_fuzz::check_module`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    relax_fuzz::check_module(&String::from_utf8_lossy(data));
});
