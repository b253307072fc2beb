complete -c ag-patch -l patch -d 'The patch text: a unified diff as `git diff` writes it (`--- a/path`, `+++ b/path`, `@@ -N,M +N,M @@` hunks; `/dev/null` to add or delete a file), or the begin/end format (`*** Begin Patch`, `*** Add File: path` / `*** Update File: path` / `*** Delete File: path`, `*** End Patch`). It may change several files' -r
complete -c ag-patch -s p -l strip -d 'For a unified diff: remove this many leading components from its paths (as `patch -pN`). By default git\'s `a/` and `b/` prefixes are removed and other paths are kept' -r
complete -c ag-patch -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-patch -l check -l dry-run -d 'Only check that the patch applies and show its diff; change nothing'
complete -c ag-patch -l recover -d 'Command line only: finish the patches that a stopped ag-patch left half done (their journal, `.ag-patch.journal`, in the working directory, the directories above it or below it), then exit. The next ag-patch touching a file below such a directory finishes it too'
complete -c ag-patch -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-patch -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-patch -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-patch -s V -l version -d 'Print version'
