"""``openmolt completion bash|zsh|fish``: a completion script for the user's shell.

The script completes the subcommands (plugins' included), each subcommand's own options (the run
options after ``run`` or an agent file) and each action's (``keys set --value``, ``sessions prune
--idle``, ``auth list --json``), the words its first argument takes (``keys set``, ``sessions
show``, ``completion zsh``: `words_of`; ``logs search``), the values of options that have choices (``logs --status su``:
`values_of`) and, after ``-m``/``--model``, the installed providers' models (asked from
``openmolt`` at completion time, as `openmolt_core.cli._models.rows` lists them), agent files (``*.json``, ``*.py``; after ``tools`` too) and, after ``tools``
and ``--integration``, the installed integration ids (asked from ``openmolt`` at completion time,
so new plugins appear without regenerating the script), then that integration's tool handles. A subcommand's options are read from its
argument parser when the script is made: the command is started with ``--help`` and stopped as
its parser is about to parse (`options_of`), so it does nothing and prints nothing; only the core's
and OpenMolt's own distributions' commands are read so (another distribution's command might not
parse with argparse, and would run: its name is completed, not its options). Install it with
``openmolt completion bash >> ~/.bashrc`` (or the zsh/fish equivalents in docs/cli.md).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import io
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from openmolt_core._support.docs import docs_url
from openmolt_core.cli._argparse import CommandParser

__all__ = ["MODELS_FOR", "main", "models", "options_of", "script", "values_of", "words_of"]

MODELS: None = None
"""The value list of an option that takes a model id: asked at completion time."""

_BASH = """# openmolt completion for bash (openmolt completion bash)
_openmolt() {
	local cur prev
	cur="${COMP_WORDS[COMP_CWORD]}"
	prev="${COMP_WORDS[COMP_CWORD-1]}"
	# bash-completion, when loaded, keeps openai:gpt-5 one word (bash splits at the colon)
	type _get_comp_words_by_ref &>/dev/null && _get_comp_words_by_ref -n : cur prev
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=( $(compgen -W "%(commands)s %(options)s" -- "$cur") $(compgen -f -X '!*.@(json|py)' -- "$cur") )
		return
	fi
	case "$prev" in
		tools)  # an integration, or an agent file (the tools its runs get)
			COMPREPLY=( $(compgen -W "$(openmolt completion --integrations 2>/dev/null)" -- "$cur") $(compgen -f -X '!*.@(json|py)' -- "$cur") )
			return;;
		integrations|--integration|auth)
			COMPREPLY=( $(compgen -W "$(openmolt completion --integrations 2>/dev/null)" -- "$cur") )
			return;;
	esac
	case "${COMP_WORDS[1]}:$prev" in
		keys:set|keys:remove)  # a provider or an integration; an option (--value) below
			if [[ "$cur" != -* ]]; then
				COMPREPLY=( $(compgen -W "$(openmolt completion --key-owners 2>/dev/null)" -- "$cur") )
				return
			fi;;
%(bash_values)s
	esac
	if [[ "$cur" == -* ]]; then
		case "${COMP_WORDS[1]} ${COMP_WORDS[2]}" in  # an action's own (keys set, sessions prune)
%(bash_action_cases)s
		esac
		case "${COMP_WORDS[1]}" in
%(bash_cases)s
			*) COMPREPLY=( $(compgen -W "%(options)s" -- "$cur") );;
		esac
	else
		case "$COMP_CWORD:${COMP_WORDS[1]}" in
%(bash_words)s
			3:tools|3:integrations)  # one tool of the integration: its handle
				COMPREPLY=( $(compgen -W "$(openmolt completion --tools "${COMP_WORDS[2]}" 2>/dev/null)" -- "$cur") );;
		esac
		[ -n "${COMPREPLY[*]}" ] || COMPREPLY=( $(compgen -f -- "$cur") )
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
		tools)  # an integration, or an agent file (the tools its runs get)
			_alternative "integrations:integration:(${(f)"$(openmolt completion --integrations 2>/dev/null)"})" 'files:agent file:_files -g "*.(json|py)"'
			return;;
		integrations|--integration|auth)
			_values 'integration' ${(f)"$(openmolt completion --integrations 2>/dev/null)"}
			return;;
	esac
	case "${words[2]}:${words[CURRENT-1]}" in
		keys:set|keys:remove)  # a provider or an integration; an option (--value) below
			if [[ "${words[CURRENT]}" != -* ]]; then
				_values 'provider or integration' ${(f)"$(openmolt completion --key-owners 2>/dev/null)"}
				return
			fi;;
%(zsh_values)s
	esac
	if (( CURRENT == 3 )); then
		case "${words[2]}" in
%(zsh_words)s
		esac
	fi
	if (( CURRENT == 4 )) && [[ "${words[2]}" == (tools|integrations) ]]; then
		_values 'tool' ${(f)"$(openmolt completion --tools "${words[3]}" 2>/dev/null)"}
		return
	fi
	if (( CURRENT > 3 )); then
		case "${words[2]} ${words[3]}" in  # an action's own (keys set, sessions prune)
%(zsh_action_cases)s
		esac
	fi
	case "${words[2]}" in
%(zsh_cases)s
		*) _arguments '*:file:_files' %(zsh_options)s;;
	esac
}
compdef _openmolt openmolt
"""

_FISH = """# openmolt completion for fish (openmolt completion fish > ~/.config/fish/completions/openmolt.fish)
complete -c openmolt -f -n '__fish_use_subcommand' -a '%(commands)s'
complete -c openmolt -n '__fish_use_subcommand' -k -a '(__fish_complete_suffix .json; __fish_complete_suffix .py)'
complete -c openmolt -f -n '__fish_seen_subcommand_from tools integrations auth' -a '(openmolt completion --integrations 2>/dev/null)'
complete -c openmolt -n '__fish_seen_subcommand_from tools' -k -a '(__fish_complete_suffix .json; __fish_complete_suffix .py)'
complete -c openmolt -f -n '__fish_seen_subcommand_from tools integrations; and test (count (commandline -opc)) -eq 3' -a '(openmolt completion --tools (commandline -opc)[3] 2>/dev/null)'
complete -c openmolt -f -n '__fish_seen_subcommand_from keys; and __fish_seen_subcommand_from set remove' -a '(openmolt completion --key-owners 2>/dev/null)'
%(fish_options)s
%(fish_cases)s
%(fish_action_cases)s
%(fish_words)s
"""


class _Parsed(BaseException):  # not Exception: a command's own handlers let it through
	"""Stops a command as its parser is about to parse: its long options and first words."""

	def __init__(
		self, options: list[str], words: list[str], values: dict[str, list[str] | None]
	) -> None:
		super().__init__()
		self.options = options
		self.words = words
		self.values = values


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
	found = {
		o
		for action in parser._actions
		if action.help != argparse.SUPPRESS
		for o in action.option_strings
		if o.startswith("--")
	}
	return sorted(found - {"--help"})


def _option_values(parser: argparse.ArgumentParser) -> dict[str, list[str] | None]:
	"""The values each option takes: its choices, or `MODELS` for a model id (dest ``model``).

	Keyed by every spelling of the option (``-m`` and ``--model``).
	"""
	found: dict[str, list[str] | None] = {}
	for action in parser._actions:
		if not action.option_strings or action.help == argparse.SUPPRESS:
			continue
		if action.choices:
			values: list[str] | None = [str(c) for c in action.choices]
		elif action.dest == "model" and action.nargs != 0:
			values = MODELS
		else:
			continue
		for option in action.option_strings:
			found[option] = values
	return found


def _first_words(parser: argparse.ArgumentParser) -> list[str]:
	"""The words its first argument takes: actions (``keys set``) or choices (``bash``)."""
	for action in parser._actions:
		if action.option_strings:
			continue
		return [str(c) for c in action.choices or ()]
	return []


def options_of(command: Callable[[list[str]], object]) -> list[str]:
	"""The long options of a command that parses its arguments with argparse (else none).

	The command is called with ``["--help"]``; its first argparse parser stops it before it
	parses, so it neither prints nor does anything.

	Args:
		command: Runs the command with the arguments after its name.
	"""
	return _probe(command)[0]


def words_of(command: Callable[[list[str]], object]) -> list[str]:
	"""The words a command's first argument takes (``set list path remove``), read as `options_of`.

	Args:
		command: Runs the command with the arguments after its name.
	"""
	return _probe(command)[1]


def values_of(command: Callable[[list[str]], object]) -> dict[str, list[str] | None]:
	"""The values of a command's options that have choices (``--status``), read as `options_of`.

	`MODELS` (None) for an option that takes a model id.

	Args:
		command: Runs the command with the arguments after its name.
	"""
	return _probe(command)[2]


_Probed = tuple[list[str], list[str], dict[str, "list[str] | None"]]


def _subparser(parser: argparse.ArgumentParser, word: str) -> argparse.ArgumentParser | None:
	"""The subparser ``word`` names (``set`` of ``keys``), if the parser has subcommands."""
	for found in parser._actions:
		if isinstance(found, argparse._SubParsersAction) and word in (found.choices or {}):
			chosen = found.choices[word]
			return chosen if isinstance(chosen, argparse.ArgumentParser) else None
	return None


def _probe(command: Callable[[list[str]], object], action: Sequence[str] = ()) -> _Probed:
	"""What the command's parser takes: its long options, first words and options' values.

	Args:
		command: Runs the command with the arguments after its name.
		action: The words of an action (``set`` of ``keys set``): that action's parser is read.
	"""
	original = argparse.ArgumentParser.parse_known_args

	def stop(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
		parser = self
		for word in action:  # `keys set`: the subparser the words choose, not `keys`'s own
			chosen = _subparser(parser, word)
			if chosen is None:
				break
			parser = chosen
		raise _Parsed(_long_options(parser), _first_words(parser), _option_values(parser))

	argparse.ArgumentParser.parse_known_args = stop  # type: ignore[method-assign]  # a probe
	try:
		with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
			command([*action, "--help"])
	except _Parsed as parsed:
		return parsed.options, parsed.words, parsed.values
	except (Exception, SystemExit):
		return [], [], {}  # not installed, or not argparse: the run options are not its
	finally:
		argparse.ArgumentParser.parse_known_args = original  # type: ignore[method-assign]
	return [], [], {}


def _zsh(options: Sequence[str]) -> str:
	return " ".join(f"'{o}[]'" for o in options)


def _run_parser() -> argparse.ArgumentParser:
	from openmolt_core.cli import _run_parser

	return _run_parser("openmolt")


_ASK_MODELS = '"$(openmolt completion --models 2>/dev/null)"'


def _bash_value(pattern: str, values: list[str] | None) -> str:
	if values is MODELS:
		return (
			f'\t\t{pattern}) COMPREPLY=( $(compgen -W {_ASK_MODELS} -- "$cur") ); '
			'type __ltrim_colon_completions &>/dev/null && __ltrim_colon_completions "$cur"; '
			# `ollama:` alone: the model's name follows it, not a space
			"[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *: ]] && compopt -o nospace 2>/dev/null; "
			"return;;"
		)
	return f'\t\t{pattern}) COMPREPLY=( $(compgen -W "{" ".join(values)}" -- "$cur") ); return;;'


def _zsh_value(pattern: str, values: list[str] | None) -> str:
	if values is MODELS:
		# `ollama:` alone (a prefix: the model's name follows it) takes no space after it
		return (
			f"\t\t{pattern}) local -a _models; _models=(${{(f){_ASK_MODELS}}}); "
			"compadd -S '' -- ${(M)_models:#*:}; compadd -- ${_models:#*:}; return;;"
		)
	return f"\t\t{pattern}) compadd -- {' '.join(values)}; return;;"


def _fish_value(values: list[str] | None) -> str:
	if values is MODELS:
		# fish adds no space after a completion that ends with one of @=/:., (`ollama:`)
		return " -xa '(openmolt completion --models 2>/dev/null)'"
	return f" -xa '{' '.join(values)}'"


def _value_cases(
	run: Mapping[str, list[str] | None], own: Mapping[str, Mapping[str, list[str] | None]]
) -> list[tuple[str, str, list[str] | None]]:
	"""(subcommand or ``*``, option, values): each subcommand's own first, then the run options'."""
	cases = [(name, o, v) for name, found in own.items() for o, v in found.items()]
	return cases + [("*", o, v) for o, v in run.items()]


def script(
	shell: str,
	commands: Sequence[str],
	options: Mapping[str, Sequence[str]] | None = None,
	words: Mapping[str, Sequence[str]] | None = None,
	values: Mapping[str, Mapping[str, list[str] | None]] | None = None,
	actions: Mapping[tuple[str, str], Sequence[str]] | None = None,
) -> str:
	"""The completion script for one shell.

	Args:
		shell: ``bash``, ``zsh`` or ``fish``.
		commands: The subcommand names, or what gives them (called once the arguments parse and
			name a shell: ``--help`` or a mistyped shell loads no plugin command).
		options: Each subcommand's long options (``run`` and agent files get the run options).
		words: The words each subcommand's first argument takes (``keys``: set, list...).
		values: Each subcommand's options' values (`values_of`; the run options' are read here).
		actions: The long options of each (subcommand, action) that has its own
			(``("keys", "set")``: ``--value``).
	"""
	first = {name: " ".join(found) for name, found in (words or {}).items() if found}
	parser = _run_parser()
	run = _long_options(parser)
	run_values = _option_values(parser)
	own = {name: list(found) for name, found in (options or {}).items() if name != "run"}
	own_values = {n: dict(v) for n, v in (values or {}).items() if n != "run" and v}
	cases = _value_cases(run_values, own_values)
	others = " ".join(name for name in commands if name != "run")
	fields = {
		"commands": " ".join(commands),
		"options": " ".join(run),
		"zsh_options": _zsh(run),
		"fish_options": "\n".join(
			f"complete -c openmolt -n 'not __fish_seen_subcommand_from {others}' -l {o[2:]}"
			+ (_fish_value(run_values[o]) if o in run_values else "")
			for o in run
		),
		"bash_values": "\n".join(_bash_value(f"{name}:{o}", v) for name, o, v in cases),
		"zsh_values": "\n".join(_zsh_value(f"{name}:{o}", v) for name, o, v in cases),
		"bash_cases": "\n".join(
			f'\t\t\t{name}) COMPREPLY=( $(compgen -W "{" ".join(found)}" -- "$cur") );;'
			for name, found in own.items()
		),
		"zsh_cases": "\n".join(
			f"\t\t{name}) _arguments '*:file:_files' {_zsh(found)};;" for name, found in own.items()
		),
		"bash_words": "\n".join(
			f'\t\t\t2:{name}) COMPREPLY=( $(compgen -W "{found}" -- "$cur") );;'
			for name, found in first.items()
		),
		"zsh_words": "\n".join(
			f"\t\t\t{name}) _values '{name}' {found}; return;;" for name, found in first.items()
		),
		"fish_words": "\n".join(
			f"complete -c openmolt -f -n '__fish_seen_subcommand_from {name}; and not "
			f"__fish_seen_subcommand_from {found}' -a '{found}'"
			for name, found in first.items()
		),
		"bash_action_cases": "\n".join(
			f'\t\t\t"{name} {word}") COMPREPLY=( $(compgen -W "{" ".join(found)}" -- "$cur") ); '
			"return;;"
			for (name, word), found in (actions or {}).items()
		),
		"zsh_action_cases": "\n".join(
			f"\t\t\t'{name} {word}') _arguments '*:file:_files' {_zsh(found)}; return;;"
			for (name, word), found in (actions or {}).items()
		),
		"fish_action_cases": "\n".join(
			f"complete -c openmolt -n '__fish_seen_subcommand_from {name}; and "
			f"__fish_seen_subcommand_from {word}' -l {o[2:]}"
			for (name, word), found in (actions or {}).items()
			for o in found
		),
		"fish_cases": "\n".join(
			f"complete -c openmolt -n '__fish_seen_subcommand_from {name}' -l {o[2:]}"
			+ (_fish_value(own_values[name][o]) if o in own_values.get(name, {}) else "")
			for name, found in own.items()
			for o in found
		),
	}
	template = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}[shell]
	return template % fields


MODELS_FOR = 24 * 3600
"""How long (seconds) the models a Tab offers are read from the cache before being asked again."""


def models() -> list[str]:
	"""The ``provider:model`` ids a Tab after ``-m`` offers (`openmolt_core.cli._models.rows`).

	A provider that lists no models (a local server) is offered as its prefix, ``ollama:``.
	Listing them loads every provider, which takes a second or more: the list is kept in
	``$XDG_CACHE_HOME/openmolt/completion-models.json`` (else ``~/.cache``) for `MODELS_FOR`
	seconds, and read again at once when the installed providers (their distributions'
	versions, their sources' times), a ``OPENMOLT_*_BASE_URL`` variable, which ``OPENMOLT_*``
	keys are set or the credential store changed (a provider that failed without its key
	lists its models once it has one).
	"""
	key = _models_key()
	path = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
	path = path / "openmolt" / "completion-models.json"
	try:
		held = json.loads(path.read_text(encoding="utf-8"))
		fresh = time.time() - path.stat().st_mtime < MODELS_FOR
		if fresh and held["key"] == key and isinstance(held["models"], list):
			return [str(m) for m in held["models"]]
	except (OSError, ValueError, TypeError, KeyError):
		pass  # none yet, or unreadable: ask the providers
	from openmolt_core.cli._models import rows

	ids = [str(r["model"]) for r in rows() if "error" not in r]
	with contextlib.suppress(OSError):
		path.parent.mkdir(parents=True, exist_ok=True)
		partial = path.with_name(f"{path.name}.{os.getpid()}")
		partial.write_text(json.dumps({"key": key, "models": ids}), encoding="utf-8")
		partial.replace(path)
	return ids


def _models_key() -> str:
	"""What the models offered depend on, hashed: the installed providers and their base URLs.

	Every ``openmolt.*`` entry point (a plugin may add a provider) with its distribution's name
	and version, the newest time of its package's top files (an editable install keeps its
	version), the credential store's time, the names of the ``OPENMOLT_*_KEY`` variables set,
	and each ``OPENMOLT_*_BASE_URL`` without its user, password and query (a model list depends
	on whether the calls go to the vendor).
	"""
	from importlib import metadata
	from importlib.util import find_spec
	from urllib.parse import urlsplit

	parts = [sys.prefix]
	tops: set[str] = set()
	found = []
	for dist in metadata.distributions():
		for entry in dist.entry_points:
			if entry.group.startswith("openmolt."):
				where = f"{dist.name}=={dist.version}"
				found.append(f"{entry.group}:{entry.name}={entry.value} {where}")
				tops.add(entry.value.split(":")[0].split(".")[0])
	parts += sorted(found)
	for top in sorted(tops):
		with contextlib.suppress(ImportError, ValueError, OSError):
			spec = find_spec(top)
			origin = spec.origin if spec is not None else None
			if origin:
				folder = Path(origin).parent
				newest = max((f.stat().st_mtime for f in folder.glob("*.py")), default=0.0)
				parts.append(f"{top} {newest}")
	store = os.environ.get("OPENMOLT_CREDENTIALS_FILE") or str(
		Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
		/ "openmolt"
		/ "credentials.enc"
	)
	with contextlib.suppress(OSError):
		parts.append(f"store {Path(store).stat().st_mtime}")
	for name in sorted(os.environ):
		if name.startswith("OPENMOLT_") and os.environ[name] and name.endswith("_KEY"):
			parts.append(name)  # set or not: its value is never read here
		if name.startswith("OPENMOLT_") and name.endswith("_BASE_URL"):
			with contextlib.suppress(ValueError):
				url = urlsplit(os.environ[name])
				host = url.hostname or ""
				parts.append(f"{name}={url.scheme}://{host}:{url.port}{url.path}")
	return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def main(
	args: list[str],
	commands: Sequence[str] | Callable[[], Sequence[str]],
	run: Callable[[str, list[str]], object] | None = None,
	actions: Mapping[str, Sequence[str]] | None = None,
	first_words: Mapping[str, Sequence[str]] | None = None,
) -> int:
	"""Print a completion script, or (``--integrations``) the installed integration ids.

	``--models`` prints the models, ``--key-owners`` what ``openmolt keys set`` takes, ``--tools
	ID`` an integration's tool handles (what ``openmolt tools ID TOOL`` takes).

	Args:
		args: The arguments after ``completion``.
		commands: The subcommand names, or what gives them (called once the arguments parse and
			name a shell: ``--help`` or a mistyped shell loads no plugin command).
		run: Runs a subcommand with its arguments (to read its options; None: none read).
		actions: A command's action words that its parser does not list as choices (``auth``:
			list, revoke); each one's options are read, as those of ``keys set``.
		first_words: Words a command's first argument takes besides its parser's choices,
			offered with them (``logs``: ``search``, which its run id argument also takes).
	"""
	parser = CommandParser(
		prog="openmolt completion",
		description="Print a shell completion script: eval it, or save it where your shell "
		f"loads completions ({docs_url('cli.md')}).",
	)
	parser.add_argument("shell", nargs="?", choices=("bash", "zsh", "fish"))
	parser.add_argument("--integrations", action="store_true", help=argparse.SUPPRESS)
	parser.add_argument("--models", action="store_true", help=argparse.SUPPRESS)
	parser.add_argument("--key-owners", action="store_true", help=argparse.SUPPRESS)
	parser.add_argument("--tools", metavar="ID", help=argparse.SUPPRESS)
	ns = parser.parse_args(args)
	if ns.tools is not None:  # `openmolt tools slack post<TAB>`: the integration's tool handles
		from openmolt_core.errors import OpenMoltError
		from openmolt_core.openmolt import OpenMolt

		try:
			spec = OpenMolt().plugins.integration(ns.tools)
		except OpenMoltError:  # not an integration (an agent file, a typo): nothing to offer
			return 0
		sys.stdout.write("".join(f"{t.handle}\n" for t in spec.tools))
		return 0
	if ns.key_owners:  # what `openmolt keys set` takes: the providers, then the integrations
		from openmolt_core.openmolt import OpenMolt

		plugins = OpenMolt().plugins
		ids = [*plugins.provider_names(), *sorted(plugins.integration_ids())]
		sys.stdout.write("\n".join(ids) + "\n")
		return 0
	if ns.models:
		sys.stdout.write("\n".join(models()) + "\n")
		return 0
	if ns.integrations:
		from openmolt_core.openmolt import OpenMolt

		ids = sorted(p.name for p in OpenMolt().plugins.installed() if p.group == "integrations")
		sys.stdout.write("\n".join(ids) + "\n")
		return 0
	if ns.shell is None:
		parser.error("name the shell: bash, zsh or fish")
	if callable(commands):
		commands = commands()
	options: dict[str, list[str]] = {}
	words: dict[str, list[str]] = {}
	values: dict[str, dict[str, list[str] | None]] = {}
	own: dict[tuple[str, str], list[str]] = {}
	if run is not None:
		for name in commands:
			options[name], words[name], values[name] = _probe(functools.partial(run, name))
			words[name] += [w for w in (first_words or {}).get(name, ()) if w not in words[name]]
			for word in dict.fromkeys([*words[name], *(actions or {}).get(name, ())]):
				found = _probe(functools.partial(run, name), [word])[0]
				if found:
					own[(name, word)] = found
	sys.stdout.write(script(ns.shell, commands, options, words, values, own))
	return 0
