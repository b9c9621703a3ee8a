//! `relax-run`: the thin binary over `relax_driver::run_main`.

fn main() -> std::process::ExitCode {
    relax_driver::process_main(relax_driver::run_main, "relax-run", "interpreter")
}
