//! The `loopc` binary: the command line ([`cli`]) over the `loopc` library.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
