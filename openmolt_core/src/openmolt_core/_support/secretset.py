"""The secrets a process knows: an owner's set, the keys given in code, the redactors.

A `SecretSet` holds the secrets of one owner (an OpenMolt instance): values added as they become
known, sources asked at every use (the tokens a refresh brings later), and sources read once, at
the set's first use (what is costly to read). `register_key` records keys given in code (a
signing key, a bearer token) while their owner lives. A `Redactor` masks what it knows in every
spelling (`openmolt_core._support.masking`), in text, in JSON-like values and in an exception's
chain; `redactor_for` makes one for tool contexts.

Every live set, every redactor that holds secrets (`watch`) and every registered key feeds the
logging filter (`openmolt_core._support.masking.read_log_secrets`): a record of any logger is
masked with what the process knows.

A library with no agent concept: `openmolt_core.secrets` says which secrets an instance knows,
and re-exports these names.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from openmolt_core._support.masking import (
	MIN_KEY,
	install_log_redaction,
	mask,
	mask_deep,
	mask_exception,
	read_log_secrets,
)

__all__ = [
	"Redactor",
	"SecretSet",
	"default_credentials_path",
	"redactor_for",
	"register_key",
	"registered_keys",
	"watch",
]


def default_credentials_path() -> Path:
	"""``$OPENMOLT_CREDENTIALS_FILE``, else ``$XDG_CONFIG_HOME/openmolt/credentials.enc``.

	The default credential store's file (`openmolt_core.credstore.default_path`): its stored
	secrets join an instance's set when it exists, so an instance looks for it here, without
	loading the store.
	"""
	explicit = os.environ.get("OPENMOLT_CREDENTIALS_FILE")
	if explicit:
		return Path(explicit)
	base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
	return Path(base) / "openmolt" / "credentials.enc"


_LIVE: weakref.WeakSet[SecretSet] = weakref.WeakSet()
_LOCK = threading.RLock()  # re-entered by code a collection runs inside it: a finalizer that logs


class SecretSet:
	"""The secrets one OpenMolt instance knows; every redactor of the instance reads it.

	Values are added as they become known (``add``); values learned later, such as the tokens
	an OAuth2 refresh brings, come from sources asked at every use (``add_source``). The set is
	also read by the logging filter (`RedactingFilter`) while it lives.
	"""

	__slots__ = ("__weakref__", "_last", "_later", "_live", "_sources", "_values")

	def __init__(self) -> None:
		self._values: frozenset[str] = frozenset()
		self._last: frozenset[str] = frozenset()  # what the sources gave last: reused when equal
		self._sources: tuple[Callable[[], Iterable[str]], ...] = ()
		self._later: list[Callable[[], Iterable[str]]] = []
		self._live = False  # in _LIVE, read by the logging filter (once: every instance has one)

	def _go_live(self) -> None:
		if not self._live:
			with _LOCK:
				_LIVE.add(self)
			self._live = True
			# The filter reads the set from now on, so it must be in place now: the values of a
			# source read at first use (the environment's keys) are not added one by one, and a
			# URL's password is masked in a log though no source knows it.
			install_log_redaction()

	def add_once(self, source: Callable[[], Iterable[str]]) -> None:
		"""Register a callable whose secrets are read once, at the first use of the set.

		For what is costly to read and known from the start (the environment): making an
		instance stays cheap, and the values are known before anything is masked or logged.

		Args:
			source: Returns the secrets.
		"""
		self._later.append(source)
		self._go_live()

	def add(self, *values: object) -> None:
		"""Register secret values (``None`` and empty strings are ignored).

		Args:
			*values: The secrets: API keys, tokens, passwords, signing secrets; as strings,
				UTF-8 bytes, or objects that hold one (a pydantic ``SecretStr``).
		"""
		new = frozenset(v for v in map(_text_of, values) if v is not None and v.strip())
		if new - self._values:
			with _LOCK:
				self._values = self._values | new
			self._go_live()
			install_log_redaction()

	def add_source(self, source: Callable[[], Iterable[str]]) -> None:
		"""Register a callable giving secrets learned later; asked at every use.

		Args:
			source: Returns the current secrets (an OAuth2 auth's refreshed tokens). Registering
				the same callable twice has no effect.
		"""
		if any(s is source or s == source for s in self._sources):
			return
		with _LOCK:
			self._sources = (*self._sources, source)
		self._go_live()

	def values(self) -> frozenset[str]:
		"""Every secret known now (a source that fails adds nothing rather than raising)."""
		while self._later:
			once = self._later.pop()
			try:
				self.add(*once())
			except Exception:  # a broken source must not break redaction or logging
				continue
		known = self._values
		if not self._sources:
			return known
		found: set[str] = set()
		for source in self._sources:
			try:
				given = source()
				if isinstance(given, set | frozenset) and given <= known:
					continue  # the common case: nothing beyond the values (each one a secret)
				found.update(v for v in given if isinstance(v, str) and v.strip())
			except Exception:  # a broken source must not break redaction or logging
				continue
		if found <= known:  # the sources hold no secret beyond the values
			return known
		found |= known
		last = self._last
		if found != last:  # the same set object each time: its hash and the masks' caches hold
			last = self._last = frozenset(found)
		return last

	def mask(self, text: str) -> str:
		"""Return the text with every spelling of every secret masked.

		Args:
			text: The text.
		"""
		return mask(text, self.values())

	def __bool__(self) -> bool:
		return bool(self._values or self._sources or self._later)

	def __len__(self) -> int:
		return len(self.values())

	def __contains__(self, value: object) -> bool:
		return value in self.values()

	def __repr__(self) -> str:
		return f"SecretSet({len(self._values)} values, {len(self._sources)} sources)"


def _text_of(value: object) -> str | None:
	"""A secret as text: a string, UTF-8 bytes, or what a ``SecretStr`` holds (else None)."""
	if isinstance(value, str):
		return value
	if isinstance(value, bytes | bytearray):
		return bytes(value).decode("utf-8", "replace")
	held = getattr(value, "get_secret_value", None)
	if callable(held):
		return _text_of(held())
	return None


_KEYS: dict[int, frozenset[str]] = {}  # by the id of a live owner (a dataclass is unhashable)
_DEAD: list[int] = []
"""Ids of owners that died, dropped from `_KEYS` under the lock at the next use: a finalizer may
run inside any allocation, also one made while the lock is held, so it must not take it."""


def register_key(owner: object, *keys: object) -> None:
	"""Make signing or encryption keys given in code secrets of every instance and of the logs.

	The one place such a key is registered, whatever feature took it: ``Approvals(key=...)``,
	``OpenMolt(accounts={"key": ...})``, ``EncryptedFileStore(key=...)``, the run viewer's
	token, a webhook's or a bot's secrets, an A2A or AG-UI bearer token, a remote A2A agent's
	token. (A key read from a ``*_KEY`` variable is found by `environment_secrets` too.) Every
	instance's `SecretSet` reads them (`registered_keys`), and so does the logging filter,
	while their owner lives: a process that makes many viewers or webhooks keeps no dead key.

	A key given as bytes that are not UTF-8 is masked as hex and base64, the ways such a key is
	written down. A key of fewer than 8 characters is left out, as for a variable
	(`environment_secrets`; a server refuses so short a secret outright:
	`openmolt_core.triggers.strong_enough`): no real key is that short, and masking it in every instance would
	turn ordinary words into noise.

	Args:
		owner: The object that holds the keys (held weakly).
		*keys: The keys: strings, bytes, a ``SecretStr``; ``None`` is ignored.
	"""
	texts = frozenset(t for key in keys for t in _key_texts(key) if len(t.strip()) >= MIN_KEY)
	if texts:
		with _LOCK:
			_drop_dead()  # an owner that died at this id before this one was made
			if id(owner) not in _KEYS:
				weakref.finalize(owner, _DEAD.append, id(owner))
			_KEYS[id(owner)] = _KEYS.get(id(owner), frozenset()) | texts
			_UNION[0] = None
		install_log_redaction()


_UNION: list[frozenset[str] | None] = [frozenset()]
"""`registered_keys`' answer while no key is registered and no owner died (None: to compute).

Every instance's secret set asks for the keys at each use, several times a step: the same set
object each time, so the set's own subset check and the masks' caches hold."""


def _drop_dead() -> None:
	# Under _LOCK. ``list.pop`` and ``list.append`` are atomic: a finalizer may append meanwhile.
	while _DEAD:
		_KEYS.pop(_DEAD.pop(), None)
		_UNION[0] = None


def registered_keys() -> frozenset[str]:
	"""The keys given in code whose owners live (`register_key`)."""
	union = _UNION[0]
	if union is not None and not _DEAD:  # nothing registered or died since it was computed
		return union
	with _LOCK:
		_drop_dead()
		union = _UNION[0]
		if union is None:
			held = list(_KEYS.values())
			union = _UNION[0] = frozenset().union(*held) if held else frozenset()
	return union


def _key_texts(key: object) -> tuple[str, ...]:
	"""A key's spellings as text: itself, or (binary bytes) its hex and base64."""
	if not isinstance(key, bytes | bytearray):
		text = _text_of(key)
		return (text,) if text else ()
	data = bytes(key)
	try:
		return (data.decode("utf-8"),)
	except UnicodeDecodeError:
		pass
	import base64

	std, url = base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode()
	return (data.hex(), data.hex().upper(), std, url, std.rstrip("="), url.rstrip("="))


# Redactors ------------------------------------------------------------------------------


class Redactor:
	"""Replaces every known secret, in every spelling, with ``[redacted]``.

	Args:
		secrets: The secret strings known up front (API keys, client secrets).
		sources: Callables returning secrets learned later (OAuth2 tokens obtained by a refresh);
			asked at every use, so a new token is masked as soon as it exists.
		known: The instance's secret set (``OpenMolt.secrets``), read at every use.
	"""

	__slots__ = ("__weakref__", "_clean", "_known", "_objects", "_sources", "_static")

	def __init__(
		self,
		secrets: frozenset[str] = frozenset(),
		sources: Sequence[Callable[[], Iterable[str]]] = (),
		known: SecretSet | None = None,
	) -> None:
		# A key pasted with a newline is sent stripped: mask both spellings.
		stripped = {s.strip() for s in secrets}
		self._static = frozenset({*secrets, *(s for s in stripped if len(s) >= 6)} - {""})
		self._sources = tuple(sources)
		self._known = known
		self._objects: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}  # `json_object`
		# The last text found to show none of the secrets then known: a step masks the reply, then
		# the same text as the history keeps it (a reply written as compact JSON).
		self._clean: tuple[frozenset[str], str] | None = None
		if self._static or self._sources:
			watch(self)

	def __repr__(self) -> str:
		return f"Redactor({len(self._static)} secrets, {len(self._sources)} sources)"

	def _current(self) -> frozenset[str]:
		if not self._sources:
			if self._known is None:
				return self._static
			known = self._known.values()
			return self._static | known if self._static else known
		current = set(self._static)
		for source in self._sources:
			current.update(v for v in source() if v)
		if self._known is not None:
			current |= self._known.values()
		return frozenset(current)

	@property
	def secrets(self) -> tuple[str, ...]:
		"""Every secret known now, longest first (so a secret containing another is masked whole)."""
		return tuple(sorted(self._current(), key=len, reverse=True))

	def __bool__(self) -> bool:
		return bool(self._static or self._sources or self._known)

	def __call__(self, text: str) -> str:
		"""Return the text with every secret masked."""
		if not self:
			return text
		secrets = self._current()
		clean = self._clean
		if clean is not None and clean[1] == text and (clean[0] is secrets or clean[0] == secrets):
			return text  # masked with these very secrets a moment ago, and none was there
		masked = mask(text, secrets)
		if masked == text:
			self._clean = (secrets, text)
		return masked

	def exception(self, error: BaseException) -> None:
		"""Mask every secret an exception and its chain show, in place (`mask_exception`).

		Args:
			error: The exception (a failed run's error: its cause is the provider's or tool's).
		"""
		if self:
			secrets = self._current()
			if secrets:
				mask_exception(error, secrets)

	def json_object(self, value: dict[str, Any]) -> dict[str, Any]:
		"""A JSON object with every secret masked in its JSON text; itself when it shows none.

		Remembered per object (the last 8): one sent at every call (a reply schema) is masked
		once, and when it holds no secret it is that very dict (a provider writes its JSON once).

		Args:
			value: The object, JSON-like (its key order is kept).
		"""
		if not self:
			return value
		hit = self._objects.get(id(value))
		if hit is not None and hit[0] is value:
			return hit[1]
		from openmolt_core._support.jsonsafe import dumps

		text = dumps(value)
		masked = self(text)
		out = value if masked == text else json.loads(masked)
		if len(self._objects) >= 8:
			self._objects.clear()
		self._objects[id(value)] = (value, out)
		return out

	def deep(self, value: Any) -> Any:
		"""Return a copy of a JSON-like value with secrets masked in every string (and key).

		An object that is not JSON-like and holds a secret (a dataclass, a pydantic model, bytes)
		becomes its data masked (`openmolt_core._support.masking.mask_deep`).

		A value nested deeper than the copy can recurse (a tool's result thousands of levels
		deep) is cut first (`openmolt_core._support.jsonsafe.shallow`).
		"""
		if not self:
			return value
		secrets = self._current()
		if not secrets:
			return value
		try:
			return mask_deep(value, secrets)
		except RecursionError:
			from openmolt_core._support.jsonsafe import shallow

			return mask_deep(shallow(value), secrets)


def redactor_for(contexts: Iterable[Any], known: SecretSet | None = None) -> Redactor:
	"""The redactor for tool contexts: their config secrets, and what their auths learn later.

	A context (`openmolt_core.tools.ToolContext`) holds its secrets in ``redact``; its ``auth``
	may learn more later (an OAuth2 refresh's tokens), given by its ``secrets()``.

	Args:
		contexts: The contexts whose secrets must never show (one tool's, or all of an agent's).
		known: The instance's secret set (``OpenMolt.secrets``), read at every use.
	"""
	unique = {id(c): c for c in contexts}.values()
	sources = []
	for context in unique:
		learned = getattr(context.auth, "secrets", None)  # OAuth2 tokens obtained by a refresh
		if callable(learned):
			sources.append(learned)
	return Redactor(frozenset().union(*(c.redact for c in unique)), sources, known)


# The logging filter's secrets ------------------------------------------------------------

_WATCHED: weakref.WeakSet[Any] = weakref.WeakSet()  # the live redactors (`watch`)


def watch(holder: Any) -> None:
	"""Have the logging filter mask what ``holder.secrets`` holds too, while the holder lives.

	Args:
		holder: An object whose ``secrets`` property gives the secrets it knows now (a
			`Redactor`); held weakly.
	"""
	with _LOCK:
		_WATCHED.add(holder)
	install_log_redaction()


def _live_secrets() -> frozenset[str]:
	with _LOCK:
		holders, sets = list(_WATCHED), list(_LIVE)
	found: set[str] = set()
	for holder in holders:
		try:
			found.update(holder.secrets)
		except Exception:  # a broken source must not break logging
			continue
	for known in sets:
		found |= known.values()
	return frozenset(found | registered_keys())


read_log_secrets(_live_secrets)  # the filter masks what the live sets and redactors know
