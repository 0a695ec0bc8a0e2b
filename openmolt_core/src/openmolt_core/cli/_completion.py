"""``openmolt completion bash|zsh|fish``: a completion script for the user's shell.

The script completes the subcommands, the run options, agent files (``*.json``, ``*.py``) and,
after ``tools`` and ``--integration``, the installed integration ids (asked from ``openmolt`` at
completion time, so new plugins appear without regenerating the script). Install it with
``openmolt completion bash >> ~/.bashrc`` (or the zsh/fish equivalents in docs/cli.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from openmolt_core.cli._argparse import CommandParser

__all__ = ["main", "script"]

_BASH = """# openmolt completion for bash (openmolt completion bash)
_openmolt() {
	local cur prev
	cur="${COMP_WORDS[COMP_CWORD]}"
	prev="${COMP_WORDS[COMP_CWORD-1]}"
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=( $(compgen -W "%(commands)s %(options)s" -- "$cur") $(compgen -f -X '!*.@(json|py)' -- "$cur") )
		return
	fi
	case "$prev" in
		tools|--integration)
			COMPREPLY=( $(compgen -W "$(openmolt completion --integrations 2>/dev/null)" -- "$cur") )
			return;;
	esac
	if [[ "$cur" == -* ]]; then
		COMPREPLY=( $(compgen -W "%(options)s" -- "$cur") )
	else
		COMPREPLY=( $(compgen -f -- "$cur") )
	fi
}
shopt -s extglob 2>/dev/null
complete -o filenames -F _openmolt openmolt
"""

_ZSH = """#compdef openmolt
# openmolt completion for zsh (openmolt completion zsh > "${fpath[1]}/_openmolt")
_openmolt() {
	if (( CURRENT == 2 )); then
		_alternative 'commands:command:(%(commands)s)' 'files:agent file:_files -g "*.(json|py)"'
		return
	fi
	case "${words[CURRENT-1]}" in
		tools|--integration)
			_values 'integration' ${(f)"$(openmolt completion --integrations 2>/dev/null)"}
			return;;
	esac
	_arguments '*:file:_files' %(zsh_options)s
}
compdef _openmolt openmolt
"""

_FISH = """# openmolt completion for fish (openmolt completion fish > ~/.config/fish/completions/openmolt.fish)
complete -c openmolt -f -n '__fish_use_subcommand' -a '%(commands)s'
complete -c openmolt -n '__fish_use_subcommand' -k -a '(__fish_complete_suffix .json; __fish_complete_suffix .py)'
complete -c openmolt -f -n '__fish_seen_subcommand_from tools' -a '(openmolt completion --integrations 2>/dev/null)'
%(fish_options)s
"""


def _run_options() -> list[str]:
	from openmolt_core.cli import _run_parser

	options: list[str] = []
	for action in _run_parser("openmolt")._actions:
		options += [o for o in action.option_strings if o.startswith("--")]
	return sorted(set(options))


def script(shell: str, commands: Sequence[str]) -> str:
	"""The completion script for one shell.

	Args:
		shell: ``bash``, ``zsh`` or ``fish``.
		commands: The subcommand names.
	"""
	options = _run_options()
	values = {
		"commands": " ".join(commands),
		"options": " ".join(options),
		"zsh_options": " ".join(f"'{o}[]'" for o in options),
		"fish_options": "\n".join(f"complete -c openmolt -l {o[2:]}" for o in options),
	}
	template = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}[shell]
	return template % values


def main(args: list[str], commands: Sequence[str]) -> int:
	"""Print a completion script, or (``--integrations``) the installed integration ids.

	Args:
		args: The arguments after ``completion``.
		commands: The subcommand names.
	"""
	parser = CommandParser(
		prog="openmolt completion",
		description="Print a shell completion script: eval it, or save it where your shell "
		"loads completions (docs/cli.md).",
	)
	parser.add_argument("shell", nargs="?", choices=("bash", "zsh", "fish"))
	parser.add_argument("--integrations", action="store_true", help=argparse.SUPPRESS)
	ns = parser.parse_args(args)
	if ns.integrations:
		from openmolt_core.openmolt import OpenMolt

		ids = sorted(p.name for p in OpenMolt().plugins.installed() if p.group == "integrations")
		sys.stdout.write("\n".join(ids) + "\n")
		return 0
	if ns.shell is None:
		parser.error("name the shell: bash, zsh or fish")
	sys.stdout.write(script(ns.shell, commands))
	return 0
