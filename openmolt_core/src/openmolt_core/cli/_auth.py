"""``openmolt auth``: sign in to an integration with OAuth2 and keep its tokens in the credential store.

```
openmolt auth ID [--scopes read,send | --agent FILE] [--client-id ID] [--no-browser] [--port N]
                 [--redirect-uri URI] [--set KEY=VALUE]... [--device] [--user ID]
openmolt auth list [--json]
openmolt auth revoke ID [--user ID]
```

``openmolt auth gmail`` opens Google's consent page asking only for the OAuth scopes of the tool
scopes given (``--scopes``, or the agent file's, else every tool's), listens on
``http://127.0.0.1:<port>/callback``, checks ``state``, exchanges the code with PKCE, and saves
the tokens, encrypted, in the credential store (`openmolt_core.credstore`) that agents read after
their config and the environment. ``--no-browser`` prints the URL and reads the address the
browser was sent to, for a remote machine; ``--device`` uses the service's device flow (GitHub,
Microsoft: a code to enter on any device). The client id and secret come from ``--client-id``,
``OPENMOLT_<ID>_CLIENT_ID`` / ``OPENMOLT_<ID>_CLIENT_SECRET`` (the environment or ``openmolt keys
set``), or a prompt that does not echo; a secret is never taken on the command line. No token is
ever printed. ``--user ID`` keeps the tokens for that end user instead of the operator, for
integrations an agent binds per user (`openmolt_core.accounts`); applications usually let
their users connect through the consent URL a run parks with.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from openmolt_core._envvars import env_var
from openmolt_core.cli._argparse import CommandParser
from openmolt_core.cli._exit import ExitCode
from openmolt_core.cli._terminal import printable
from openmolt_core.errors import ConfigurationError

__all__ = ["ACTIONS", "main"]

ACTIONS = ("list", "revoke")
"""The words after ``auth`` that are not an integration to sign in to (shell completion reads them)."""

_FORMS = ("openmolt auth ID [options]", "openmolt auth list [--json]", "openmolt auth revoke ID")
_USAGE = " | ".join(_FORMS)
"""The command's three forms on one line, as an error message quotes them."""


def _parser() -> argparse.ArgumentParser:
	parser = CommandParser(
		prog="openmolt auth",
		usage="\n   or: ".join(_FORMS),  # one form a line: the three do not fit 80 columns
		description="Sign in to an integration with OAuth2 (authorization code with PKCE) and "
		"keep its tokens, encrypted, in the credential store.",
	)
	parser.add_argument("integration", help="the integration id (gmail, slack, github...)")
	parser.add_argument(
		"--scopes",
		help="the tool scopes the agent needs, comma-separated (read,send); default: the "
		"agent file's (--agent), else every tool's",
	)
	parser.add_argument("--agent", help="an agent.json whose integration entry gives the scopes")
	parser.add_argument("--client-id", help="the OAuth app's client id")
	parser.add_argument(
		"--no-browser",
		action="store_true",
		help="print the URL and read the address the browser was sent to (remote machines)",
	)
	parser.add_argument(
		"--device",
		action="store_true",
		help="the device flow (GitHub, Microsoft): enter a code on another device",
	)
	parser.add_argument(
		"--port", type=int, default=0, help="the loopback redirect's port (default: any free one)"
	)
	parser.add_argument(
		"--redirect-uri",
		help="with --no-browser: the redirect registered with the app (default: "
		"http://127.0.0.1:<port>/callback)",
	)
	parser.add_argument(
		"--set",
		action="append",
		default=[],
		metavar="KEY=VALUE",
		help="another config key the URLs read (shop=acme, tenant=contoso.com)",
	)
	parser.add_argument(
		"--timeout", type=float, default=300.0, help="seconds to wait for the browser"
	)
	parser.add_argument(
		"--user",
		metavar="ID",
		help="keep the tokens for this end user (agents binding the integration per user)",
	)
	return parser


def _agent_scopes(path: str, integration: str) -> list[str] | None:
	from openmolt_core.cli._agentfile import load_json_file

	agent = load_json_file(Path(path))
	entries = agent.integrations
	if isinstance(entries, dict):
		if integration in entries:
			return None
	else:
		for entry in entries:
			if entry == integration:
				return None
			if getattr(entry, "integration", None) == integration:
				scopes = getattr(entry, "scopes", None)
				return None if scopes is None else list(scopes)
	raise ConfigurationError(f"--agent: {path} does not use the integration {integration!r}")


def _config(spec: Any, integration: str, ns: argparse.Namespace) -> dict[str, Any]:
	from openmolt_core._support.masking import secret_name
	from openmolt_core.cli import _keystore
	from openmolt_core.cli._said import said
	from openmolt_core.integrations.connect import with_environment

	given: dict[str, Any] = {}
	for item in ns.set:
		key, sep, value = item.partition("=")
		if not sep or not key.strip():  # perhaps the value alone: said only if it reads as a name
			raise ConfigurationError(f"--set {said(key)}: write KEY=VALUE (--set shop=acme)")
		key = key.strip()
		if secret_name(key):  # the one rule for secrets' names
			raise ConfigurationError(
				f"--set {key}: a secret is never taken on the command line (shell history, ps); "
				f"set {env_var(integration, key)} or `openmolt keys set {integration} {key}`"
			)
		given[key] = value.strip()
	if ns.client_id:
		given["clientId"] = ns.client_id
	# The environment wins over the key store, as for `openmolt run`; an empty variable
	# hides nothing.
	set_here = {k: v for k, v in os.environ.items() if v.strip()}
	environ = {**_keystore.load(), **set_here}
	return with_environment(spec, integration, given, environ)


def _sign_in(ns: argparse.Namespace) -> int:
	if not 0 <= ns.port <= 65535:
		raise ConfigurationError(f"--port: {ns.port} is not a port; give 1-65535, or 0 for any")
	if not ns.timeout > 0:
		raise ConfigurationError(f"--timeout: {ns.timeout} seconds; give a positive number")
	import anyio
	import httpx

	from openmolt_core.credstore import EncryptedFileStore
	from openmolt_core.integrations.oauth import authorize, device_authorize, oauth2_credential
	from openmolt_core.openmolt import OpenMolt

	om = OpenMolt(credential_store=False)
	spec = om.plugins.integration(ns.integration)
	iid = spec.id or ns.integration
	credential = oauth2_credential(spec, iid)
	store = EncryptedFileStore()
	store.check()  # no key, or the wrong one: say so before the user signs in
	config = _config(spec, iid, ns)
	if not config.get("clientId") and not config.get("client_id"):
		config["clientId"] = _ask(
			f"{iid} OAuth client id: ",
			secret=False,
			instead=f"--client-id or {env_var(iid, 'clientId')}",
		)
	if (
		credential.client_secret_required
		and not ns.device
		and not (config.get("clientSecret") or config.get("client_secret"))
	):
		config["clientSecret"] = _ask(
			f"{iid} OAuth client secret (not shown): ",
			secret=True,
			instead=f"{env_var(iid, 'clientSecret')} (or `openmolt keys set {iid} clientSecret`)",
		)
	if ns.scopes:
		tool_scopes: list[str] | None = [s.strip() for s in ns.scopes.split(",") if s.strip()]
	elif ns.agent:
		tool_scopes = _agent_scopes(ns.agent, iid)
	else:
		tool_scopes = None

	def show(url: str) -> None:
		if ns.no_browser:
			print(f"Open this address in a browser and sign in:\n\n  {url}\n", file=sys.stderr)
			return
		print(f"Opening the browser to sign in to {iid}. If it does not open, visit:\n\n  {url}\n")
		import webbrowser

		webbrowser.open(url)

	def paste() -> str:
		print("Then paste the whole address the browser was sent to:", file=sys.stderr)
		return sys.stdin.readline()

	def show_code(uri: str, code: str) -> None:
		# the service's words: printed as they are, a control sequence would be obeyed
		print(printable(f"On any device, open {uri} and enter the code {code}"), file=sys.stderr)

	scopes: list[tuple[str, ...]] = []  # what was granted, as a consent records it

	def granted(asked: tuple[str, ...], reported: str | None) -> None:
		from openmolt_core.accounts import _granted

		scopes.append(_granted(asked, reported, credential))

	async def flow() -> dict[str, Any]:
		async with httpx.AsyncClient(timeout=30.0, trust_env=False) as client:
			if ns.device:
				return await device_authorize(
					spec,
					iid,
					config,
					client=client,
					tool_scopes=tool_scopes,
					show=show_code,
					granted=granted,
				)
			return await authorize(
				spec,
				iid,
				config,
				client=client,
				tool_scopes=tool_scopes,
				show=show,
				paste=paste if ns.no_browser else None,
				redirect_uri=ns.redirect_uri,
				port=ns.port,
				wait_seconds=ns.timeout,
				granted=granted,
			)

	tokens = anyio.run(flow)
	if ns.user is not None:  # the operator's client stays the operator's
		tokens = {k: v for k, v in tokens.items() if k not in ("clientId", "clientSecret")}
	from openmolt_core.accounts import save_sign_in

	# An end user's record lists the scopes granted, as a consent's does: a tool needing one
	# the user left out then parks for it (the operator's record keeps no bookkeeping).
	kept = scopes[-1] if ns.user is not None and scopes else None
	save_sign_in(store, iid, tokens, ns.user, scopes=kept)  # under the credential's lock
	refresh = "with a refresh token" if tokens.get("refreshToken") else "without a refresh token"
	print(f"Signed in to {iid} ({refresh}); saved in {store.path}", file=sys.stderr)
	return ExitCode.SUCCESS


def _ask(prompt: str, *, secret: bool, instead: str = "") -> str:
	if not sys.stdin.isatty():
		value = sys.stdin.readline().strip()
	else:
		import getpass

		try:
			value = (getpass.getpass(prompt) if secret else input(prompt)).strip()
		except KeyboardInterrupt:  # "openmolt: interrupted" on its own line, not after the prompt
			print(file=sys.stderr)
			raise
	if not value:
		also = f"; give it with {instead}" if instead else ""
		raise ConfigurationError(f"{prompt.strip(' :')}: nothing given{also}")
	return value


def _list(args: list[str]) -> int:
	from openmolt_core.credstore import EncryptedFileStore, is_reserved

	parser = CommandParser(prog="openmolt auth list", description="The stored sign-ins.")
	parser.add_argument("--json", action="store_true", help="print JSON")
	ns = parser.parse_args(args)
	store = EncryptedFileStore()
	rows = []
	for integration, user in store.entries():
		if is_reserved(integration):  # OpenMolt's own records (a held sign-in): no account
			continue
		config = store.load(integration, user) or {}
		rows.append(
			{
				"integration": integration,
				"user": user,
				"refreshToken": bool(config.get("refreshToken")),
				"expiryDate": config.get("expiryDate"),
				"updated": store.updated(integration, user),
			}
		)
	if ns.json:
		json.dump(rows, sys.stdout, indent=2, ensure_ascii=False)
		sys.stdout.write("\n")
	elif not rows:
		print(f"no sign-ins in {store.path}; run `openmolt auth ID`")
	else:
		for row in rows:
			who = "" if row["user"] is None else f" (user {row['user']})"
			refresh = "refresh token" if row["refreshToken"] else "no refresh token"
			print(f"{row['integration']}{who}: {refresh}, saved {row['updated']}")
	return ExitCode.SUCCESS


def _revoke(args: list[str]) -> int:
	from openmolt_core.credstore import EncryptedFileStore, is_reserved

	parser = CommandParser(
		prog="openmolt auth revoke", description="Forget an integration's stored sign-in."
	)
	parser.add_argument("integration", help="the integration id")
	parser.add_argument("--user", metavar="ID", help="an end user's sign-in (default: yours)")
	ns = parser.parse_args(args)
	from openmolt_core.accounts import forget_sign_in

	store = EncryptedFileStore()
	if is_reserved(ns.integration) or not forget_sign_in(store, ns.integration, ns.user):
		from openmolt_core._support.suggest import typo_of

		ids = {i for i, u in store.entries() if u == ns.user and not is_reserved(i)}
		near = typo_of(ns.integration, sorted(ids))
		hint = f" (did you mean {near!r}?)" if near else ""
		raise ConfigurationError(
			f"{ns.integration}: no stored sign-in{hint}; `openmolt auth list` shows them"
		)
	print(
		f"Forgot the {ns.integration} sign-in. To revoke the grant itself, remove the app in "
		"the service's account settings.",
		file=sys.stderr,
	)
	return ExitCode.SUCCESS


def main(args: list[str]) -> int:
	"""Run ``openmolt auth``.

	Args:
		args: The arguments after ``auth``.

	Returns:
		The exit code.
	"""
	if args and args[0] == "list":
		return _list(args[1:])
	if args and args[0] == "revoke":
		return _revoke(args[1:])
	if args and not args[0].startswith("-"):
		_check_action(args[0], args[1:])
	return _sign_in(_parser().parse_args(args))


_OTHER_TOOLS_WORDS = {
	**dict.fromkeys(("login", "signin", "sign-in", "connect", "add"), "openmolt auth {id}"),
	**dict.fromkeys(
		("logout", "signout", "sign-out", "remove", "rm", "delete"), "openmolt auth revoke {id}"
	),
	**dict.fromkeys(("ls", "status"), "openmolt auth list"),
}
"""What ``gh auth login`` and the like taught people to type, and the command here."""


def _check_action(word: str, rest: list[str]) -> None:
	"""``openmolt auth lst``, ``openmolt auth login slack``: an action, not an integration.

	Args:
		word: The first word after ``auth``.
		rest: The words after it.
	"""
	import difflib

	from openmolt_core.openmolt import OpenMolt

	ids = OpenMolt().plugins.integration_ids()
	if word in ids:
		return
	said = _OTHER_TOOLS_WORDS.get(word.lower())
	if said is not None:
		iid = next((w for w in rest if not w.startswith("-")), "ID")
		raise ConfigurationError(f"auth: no action {word!r}; `{said.format(id=iid)}` does that")
	close = difflib.get_close_matches(word, ("list", "revoke"), n=1, cutoff=0.6)
	if close:
		raise ConfigurationError(
			f"auth: no such action or integration {word!r}; did you mean {close[0]!r}? "
			f"(usage: {_USAGE})"
		)
	named = next((w for w in rest if w in ids), None)
	if named is not None:  # `openmolt auth logn slack`: the integration is the word after
		raise ConfigurationError(
			f"auth: no action {word!r}; `openmolt auth {named}` signs in to {named} "
			f"(usage: {_USAGE})"
		)
