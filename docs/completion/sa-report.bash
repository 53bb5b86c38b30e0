# SPDX-License-Identifier: MIT
# Bash completion for sa-report: its modes and options (kept equal to
# `sa-report --help` by tests/cli/4020-man.t through the man page), files as
# inputs, directories after --debug-dir and --symfs.
_sa_report()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local opts="--top --info --svg --pprof --speedscope --diff --off-cpu --wall --state
		-o --output -i --input
		--comm --pid --tid -U --user-only -K --kernel-only --time --since --until --focus --ignore
		--min-percent --percent-limit --show-pid --show-tid --annotate-frames --addrs
		--lines --no-demangle --debug-dir --symfs --no-cache --sort --rows --title --width
		--min-width --inverted --short-names --no-normalize --negate -v --verbose -q --quiet
		--version -h --help"

	case $prev in
	-o | --output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-i | --input) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--debug-dir | --symfs) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--sort) COMPREPLY=($(compgen -W "self total" -- "$cur")); return ;;
	--state) COMPREPLY=($(compgen -W "blocked runnable" -- "$cur")); return ;;
	--comm | --pid | --tid | --time | --since | --until | --focus | --ignore | --min-percent | \
		--percent-limit | --rows | --title | --width | --min-width)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	else
		# recordings, folded stacks and perf script text (found by content)
		COMPREPLY=($(compgen -f -X '!*.@(sa|folded|txt|collapsed|stacks|perf|script)' -- "$cur") $(compgen -d -- "$cur"))
	fi
}
complete -F _sa_report sa-report
