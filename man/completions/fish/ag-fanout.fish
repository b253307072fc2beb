complete -c ag-fanout -l engine -d 'Where the tasks run' -r -f -a "parallel\t'GNU parallel, on this machine or over ssh'
slurm\t'One Slurm job array (sbatch --array), followed until it ends'
kubernetes\t'One Kubernetes Indexed Job (kubectl), followed until it ends'"
complete -c ag-fanout -l task -d 'Runs only line N of TASKS (from 1) and prints its result line: what each engine runs for one task' -r
complete -c ag-fanout -l results-dir -d 'With --task: also writes the result line into DIR as N.json, whole or not at all (what the cluster engines\' tasks do)' -r -F
complete -c ag-fanout -s j -l jobs -d 'Tasks at a time (GNU parallel\'s -j; the Slurm array\'s % cap; the Kubernetes Job\'s parallelism)' -r
complete -c ag-fanout -l work-dir -d 'Engines slurm and kubernetes: the run\'s directory (default: TASKS.fanout beside the tasks file); for slurm on a file system the cluster shares with this machine. It keeps what was submitted and each task\'s result, so that --resume can go on' -r -F
complete -c ag-fanout -l partition -d 'Slurm: the partition (sbatch --partition)' -r
complete -c ag-fanout -l time -d 'Slurm and Kubernetes: each task\'s time limit, in Slurm\'s forms (MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, ...): sbatch --time, or the pod\'s activeDeadlineSeconds. A task past it is reported with engine_state TIMEOUT (Slurm) or DeadlineExceeded' -r
complete -c ag-fanout -l cpus-per-task -d 'Slurm and Kubernetes: CPUs per task (sbatch --cpus-per-task; the pod\'s cpu request and limit)' -r
complete -c ag-fanout -l mem -d 'Slurm and Kubernetes: memory per task (sbatch --mem, e.g. 4G; the pod\'s memory request and limit, e.g. 4Gi)' -r
complete -c ag-fanout -l image -d 'Kubernetes: the pods\' container image, which holds the ag binaries (ag-fanout on PATH) and git (examples/k8s/Dockerfile builds one)' -r
complete -c ag-fanout -l namespace -d 'Kubernetes: the namespace (kubectl\'s current one by default)' -r
complete -c ag-fanout -l secret-env -d 'Kubernetes: an environment variable (a provider key) that reaches the pods through a Secret made for the run from this environment and deleted with the Job; repeat it for more' -r
complete -c ag-fanout -l summary -d 'Prints the summary of saved result lines (the last result of each task id counts), for runs resumed into several files: the arguments are result files'
complete -c ag-fanout -l resume -d 'Goes on with an interrupted run: GNU parallel\'s --resume (with --joblog); with slurm and kubernetes, prints the results already in the work directory, collects those that ended meanwhile, follows the tasks still queued or running, and submits only the tasks that have no result'
complete -c ag-fanout -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-fanout -s V -l version -d 'Print version'
