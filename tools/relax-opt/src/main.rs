//! `relax-opt`: the thin binary over `relax_driver::opt_main`.

fn main() -> std::process::ExitCode {
    relax_driver::process_main(relax_driver::opt_main, "relax-opt", "compiler")
}
