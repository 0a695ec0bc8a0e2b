"""``openmolt models``: the models each installed provider knows, with their list prices.

A provider lists its models through an optional ``models()`` method and prices them through
``price(model)`` (`openmolt_providers` reads both from its price table); a provider without them
is listed by name only. The models an agent cannot converse with, those its optional
``media_models()`` names (realtime, audio, image, speech, legacy completion and computer-use
models), are left out
unless ``--all``. Prices are list prices in USD per million tokens (see docs/guides/budgets.md).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from openmolt_core.cli._argparse import CommandParser
from openmolt_core.errors import OpenMoltError

__all__ = ["main", "matches", "rows"]


def rows(provider_names: list[str] | None = None, *, every: bool = False) -> list[dict[str, Any]]:
	"""One row per model: ``{"model": "openai:gpt-5-mini", "input": ..., "cached": ..., "output": ...}``.

	Args:
		provider_names: The providers to list (default: every installed one, a broken one with
			its error in its row).
		every: Also the models a provider's ``media_models()`` names (realtime, audio, image, speech,
			legacy completion, computer use):
			by default they are left out, as no agent converses with them.

	Raises:
		OpenMoltError: A provider named in ``provider_names`` is not installed or is broken.
	"""
	from openmolt_core.openmolt import OpenMolt

	om = OpenMolt()
	out: list[dict[str, Any]] = []
	for name in provider_names or om.plugins.provider_names():
		try:
			provider = om.provider(name)
		except OpenMoltError as exc:
			if provider_names:
				raise  # asked for by name: a mistyped id is an error, not a row
			out.append({"model": f"{name}:", "error": str(exc)})
			continue
		listed = getattr(provider, "models", None)
		priced = getattr(provider, "price", None)
		models = listed() if callable(listed) else []
		media = getattr(provider, "media_models", None)
		if not every and callable(media):
			left_out = media()
			models = [m for m in models if m not in left_out]
		if not models:
			note = "lists no models; any model id it serves"
			where = getattr(provider, "base_url", "")
			if getattr(provider, "vendor", name) != name:  # ollama: a local server, never listed
				note += f" (the local server at {where})"
			elif getattr(provider, "official", True) is False:  # the vendor's, pointed elsewhere
				note += f" (its calls go to {where}, not the vendor's)"
			out.append({"model": f"{name}:", "note": note})
		for model in models:
			price = priced(model) if callable(priced) else None
			row: dict[str, Any] = {"model": f"{name}:{model}"}
			if price is not None:
				row.update(input=price[0], cached=price[1], output=price[2], cacheWrite=price[3])
			out.append(row)
	return out


def matches(word: str, model: str) -> bool:
	"""Whether ``word`` starts a word of the model id (case-insensitive).

	``mini`` matches ``openai:gpt-5-mini`` and ``openai:o4-mini``, not ``google:gemini-2.5-pro``
	(its ``mini`` is inside a word); ``5-mini`` and ``openai:gpt`` match too.

	Args:
		word: What the person typed.
		model: A ``provider:model`` id.
	"""
	word, model = word.lower(), model.lower()
	at = model.find(word)
	while at != -1:
		if at == 0 or not model[at - 1].isalnum():
			return True
		at = model.find(word, at + 1)
	return False


def _money(value: float | None) -> str:
	return "-" if value is None else f"${value:g}"


def main(args: list[str]) -> int:
	"""Print the models (``--json`` for JSON; a word filters them, `matches`).

	Args:
		args: The arguments after ``models``.
	"""
	parser = CommandParser(
		prog="openmolt models",
		description="The models of the installed providers with their list prices (USD per "
		"million tokens: input, cached input, output).",
	)
	parser.add_argument(
		"filter",
		nargs="?",
		help="only models with a word of their id starting so (mini: gpt-5-mini, not gemini)",
	)
	parser.add_argument("--provider", action="append", help="only this provider (repeatable)")
	parser.add_argument(
		"--all",
		action="store_true",
		help="also the models that speak, listen or draw (realtime, text-to-speech, transcription, "
		"image generation) and the legacy completion and computer-use models, which no agent "
		"converses with",
	)
	parser.add_argument("--json", action="store_true", help="print JSON")
	ns = parser.parse_args(args)
	listed = rows(ns.provider, every=ns.all)
	found = [r for r in listed if not ns.filter or matches(ns.filter, r["model"])]
	if ns.json:  # a filter that matches nothing fails here too: a script tells it by the code
		sys.stdout.write(json.dumps(found, indent=2, ensure_ascii=False) + "\n")
		if found:
			return 0
	if not found:  # why, on stderr (with --json too: its stdout stays the list)
		asked = " and ".join(repr(w) for w in [ns.filter, *(ns.provider or [])] if w)
		hidden = not ns.all and any(
			matches(ns.filter, r["model"]) for r in rows(ns.provider, every=True) if ns.filter
		)
		where = (
			"`openmolt models --all` lists the realtime, speech, image, completion and computer-use "
			"models too"
			if hidden
			else "`openmolt models` lists them all"
		)
		print(f"openmolt: no model matches {asked} ({where})", file=sys.stderr)
		for r in listed:  # a provider pointed at another server lists none: say why
			if "(its calls go to " in r.get("note", ""):
				where = r["note"].split("(its calls go to ", 1)[1].rstrip(")")
				print(
					f"openmolt: {r['model'].rstrip(':')} lists no models: its calls go to {where}",
					file=sys.stderr,
				)
		return 1
	width = max((len(r["model"]) for r in found), default=5)
	sys.stdout.write(f"{'model'.ljust(width)}  {'input':>8}  {'cached':>8}  {'output':>8}\n")
	for r in found:
		if "input" in r:
			prices = f"{_money(r['input']):>8}  {_money(r['cached']):>8}  {_money(r['output']):>8}"
		else:
			prices = r.get("note") or r.get("error", "")
		sys.stdout.write(f"{r['model'].ljust(width)}  {prices}\n")
	sys.stdout.write(
		"\nList prices in USD per million tokens (base tier); a model id is provider:model."
		+ (
			"\n"
			if ns.all
			else "\nModels that speak, listen or draw (realtime, text-to-speech, transcription, image "
			"generation), and legacy completion and computer-use models, are left out: --all lists "
			"them.\n"
		)
	)
	return 0
