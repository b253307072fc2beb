complete -c ag-bash -l timeout -d 'Seconds after which the command and everything it started are stopped (default 180, at most 3600). Fractions are allowed' -r
complete -c ag-bash -l cwd -d 'Directory to run in (default: the working directory)' -r
complete -c ag-bash -l stdin -d 'Text given to the command on its standard input. Without it stdin is empty (/dev/null), so a command waiting for input ends at once' -r
complete -c ag-bash -l max-output -d 'Bytes of output kept (default 1048576, from 1024 to 8388608); the start and the end are kept, the middle is cut' -r
complete -c ag-bash -l shell -d 'The shell that runs the command with `-c` (default `bash`; `sh` for a POSIX shell; `$SHELL` for the user\'s login shell)' -r
complete -c ag-bash -l job -d 'A background job\'s id: shows its state and the end of its log (or, with `stop`, stops it; `all` stops every running job)' -r
complete -c ag-bash -l lines -d 'With `job`: how many lines of its log to show (default 50, at most 1000)' -r
complete -c ag-bash -l sandbox -d 'Confine each command (Landlock, seccomp; see ag-sandbox(1)): `auto` where the kernel can, else warn once and run unconfined; `require` refuses to run unconfined; `off` (the default) runs unconfined. The workspace is --root, else the working directory. A blocked operation is named in the result ("blocked by the sandbox: write to `/etc/hosts`", `details.sandbox.denied`), also when ag-bash itself runs confined (by ag-loop or ag-sandbox)' -r -f -a "auto\t'Confine where the kernel allows; elsewhere warn once and run unconfined'
require\t'Confine, or refuse to run'
off\t'Run unconfined'"
complete -c ag-bash -l sandbox-mode -d 'With --sandbox: `workspace-write` (default) or `read-only`' -r -f -a "read-only\t'Nothing, except `/dev/null`-style devices'
workspace-write\t'The workspace, the directories given to be writable (ag-loop adds those its tools keep their files in), a private `$TMPDIR` and devices such as `/dev/null`'"
complete -c ag-bash -l write -d 'With --sandbox: also allow writes beneath DIR (repeatable)' -r -F
complete -c ag-bash -l deny-read -d 'With --sandbox: also deny reading PATH (repeatable), on top of the default deny list (ag-sandbox(1))' -r -F
complete -c ag-bash -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-bash -l raw -d 'Keep the output exactly as written: ANSI escape sequences (colours) and carriage-return progress lines. By default they are removed'
complete -c ag-bash -l background -d 'Start the command as a background job (servers, watchers) and return its job id at once; its output goes to a log file. See `job`'
complete -c ag-bash -l keep -d 'With `background`: let the job outlive the agent session'
complete -c ag-bash -l list-jobs -d 'List the background jobs and their state'
complete -c ag-bash -l stop -d 'With `job`: stop the job and everything it started'
complete -c ag-bash -l allow-net -d 'With --sandbox: allow the network'
complete -c ag-bash -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-bash -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-bash -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-bash -s V -l version -d 'Print version'
