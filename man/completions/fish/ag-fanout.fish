complete -c ag-fanout -l engine -d 'Where the tasks run' -r -f -a "parallel\t'GNU parallel, on this machine or over ssh'
slurm\t'One Slurm job array (sbatch --array), followed until it ends'"
complete -c ag-fanout -l task -d 'Runs only line N of TASKS (from 1) and prints its result line: what each engine runs for one task' -r
complete -c ag-fanout -l results-dir -d 'With --task: also writes the result line into DIR as N.json, whole or not at all (what the cluster engines\' tasks do)' -r -F
complete -c ag-fanout -s j -l jobs -d 'Tasks at a time (GNU parallel\'s -j; the Slurm array\'s % cap)' -r
complete -c ag-fanout -l work-dir -d 'Engine slurm: the run\'s directory, on a file system the cluster shares with this machine (default: TASKS.fanout beside the tasks file). It keeps the batch script, the arrays submitted, each task\'s result and output, so that --resume can go on' -r -F
complete -c ag-fanout -l partition -d 'Slurm: the partition (sbatch --partition)' -r
complete -c ag-fanout -l time -d 'Slurm: each task\'s time limit (sbatch --time: MINUTES, HOURS:MINUTES:SECONDS, DAYS-HOURS, ...); a task past it is reported with engine_state TIMEOUT' -r
complete -c ag-fanout -l cpus-per-task -d 'Slurm: CPUs per task (sbatch --cpus-per-task)' -r
complete -c ag-fanout -l mem -d 'Slurm: memory per task (sbatch --mem, e.g. 4G)' -r
complete -c ag-fanout -l summary -d 'Prints the summary of saved result lines (the last result of each task id counts), for runs resumed into several files: the arguments are result files'
complete -c ag-fanout -l resume -d 'Goes on with an interrupted run: GNU parallel\'s --resume (with --joblog); with slurm, prints the results already in the work directory, follows the tasks still queued or running, and submits only the tasks that have no result'
complete -c ag-fanout -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-fanout -s V -l version -d 'Print version'
