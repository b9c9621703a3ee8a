//! `relax-translate`: the thin binary over `relax_driver::translate_main`.

fn main() -> std::process::ExitCode {
    relax_driver::process_main(relax_driver::translate_main, "relax-translate", "translator")
}
