# SPDX-License-Identifier: MIT
# Bash completion for sa-record: its options (kept equal to `sa-record --help`
# by tests/cli/4020-man.t through the man page), file names after -o, cgroup
# directories after -G, and command names after `--`.
_sa_record()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} i
	local opts="-a --all-cpus -p --pid -t --tid -G --cgroup -F --freq -e --event -C --cpu
		-U --user-only -K --kernel-only --idle -g --call-graph --stack-size --whole-stack
		--off-cpu --off-cpu-min
		-o --output --duration --interval
		--max-size --rotate --keep --keep-size -q --quiet --stack-map-size --counts-map-size --ringbuf-size
		--no-embed-symbols --no-python
		-h --help -V --version"

	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = "--" ]; then
			# after --: complete the command and its arguments
			if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			return
		fi
	done
	case $prev in
	-o | --output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-G | --cgroup) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	-e | --event) COMPREPLY=($(compgen -W "cpu-clock cycles" -- "$cur")); return ;;
	--call-graph) COMPREPLY=($(compgen -W "fp dwarf auto" -- "$cur")); return ;;
	-p | --pid | -t | --tid | -F | --freq | -C | --cpu | --duration | --interval | \
		--max-size | --rotate | --keep | --keep-size | --stack-map-size | --counts-map-size | \
		--ringbuf-size | --stack-size | --off-cpu-min)
		return ;;
	esac
	COMPREPLY=($(compgen -W "$opts --" -- "$cur"))
}
complete -F _sa_record sa-record
