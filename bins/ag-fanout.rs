//! ag-fanout: many ag-loop sessions from a tasks file, on GNU parallel,
//! Slurm or Kubernetes.

fn main() -> std::process::ExitCode {
    ag::fanout::main()
}
