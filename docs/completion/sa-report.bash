# SPDX-License-Identifier: MIT
# Bash completion for sa-report: its modes and options (kept equal to
# `sa-report --help` by tests/cli/4020-man.t through the man page), .sa files
# as inputs, directories after --debug-dir and --symfs.
_sa_report()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local opts="--top --info --svg --pprof --speedscope --diff -o --output -i --input
		--comm --pid --tid -U --user-only -K --kernel-only --time --since --until --focus --ignore
		--min-percent --percent-limit --show-pid --show-tid --annotate-frames --addrs
		--lines --no-demangle --debug-dir --symfs --sort --rows --title --width
		--min-width --inverted --no-normalize --negate -v --verbose -q --quiet
		--version -h --help"

	case $prev in
	-o | --output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-i | --input) COMPREPLY=($(compgen -f -X '!*.sa' -- "$cur") $(compgen -d -- "$cur")); return ;;
	--debug-dir | --symfs) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--sort) COMPREPLY=($(compgen -W "self total" -- "$cur")); return ;;
	--comm | --pid | --tid | --time | --since | --until | --focus | --ignore | --min-percent | \
		--percent-limit | --rows | --title | --width | --min-width)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	else
		# recordings, and folded text for --diff
		COMPREPLY=($(compgen -f -X '!*.@(sa|folded|txt)' -- "$cur") $(compgen -d -- "$cur"))
	fi
}
complete -F _sa_report sa-report
