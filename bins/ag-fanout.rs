//! ag-fanout: many ag-loop sessions from a tasks file, on GNU parallel
//! or Slurm.

fn main() -> std::process::ExitCode {
    ag::fanout::main()
}
