"""What ``OpenMolt(durability=...)`` means: the store's URL and the options of this process."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from openmolt_core._support.masking import shown_url
from openmolt_core.errors import ConfigurationError
from openmolt_core.options import snake_options

__all__ = ["ENV_URL", "ENV_WORKER_ID", "Settings", "parse_settings"]

ENV_URL = "OPENMOLT_DURABILITY"
"""The environment variable the CLI reads the store from when ``--durability`` is not given."""

ENV_WORKER_ID = "OPENMOLT_WORKER_ID"
"""The environment variable a process reads its worker id from (default: see `Settings`)."""


@dataclass(frozen=True, slots=True)
class Settings:
	"""The durable store and how this process takes part.

	Args:
		url: The store as a SQLAlchemy URL: ``sqlite:///abs/path.sqlite`` or
			``postgresql://user@host:5432/db``.
		worker_id: This process's executor id. Give each worker a stable one (``--id``): a
			worker that starts again under its id resumes its unfinished runs at once. Default:
			``OPENMOLT_WORKER_ID``, else ``<host>:<pid>`` (its runs are then taken over by the
			next live process once its heartbeat lapses).
		heartbeat: Seconds between heartbeats (and between looks for dead workers).
		lapse: Seconds without a heartbeat after which a worker counts as dead and a live one
			takes over its unfinished runs.
		files_dir: Where the file store keeps binary tool results: persistent, and shared by
			every worker (default: beside the SQLite file, else ``./openmolt-files``).
		replay_events: Deliver events emitted while a recovered run catches up with its journal
			(they carry ``replayed=True``); by default they are not delivered again.
		poll: Seconds between looks at the store when waiting on another process (an answer
			on SQLite, a run's end); PostgreSQL wakes waiters by notification.
		app_version: Overrides the application version (default: from the agents' definitions).
		log_level: The engine's own log level (DBOS logs little at ``WARNING``).
	"""

	url: str
	worker_id: str | None = None
	heartbeat: float = 2.0
	lapse: float = 10.0
	files_dir: Path | None = None
	replay_events: bool = False
	poll: float = 0.5
	app_version: str | None = None
	log_level: str = "WARNING"

	@property
	def is_sqlite(self) -> bool:
		"""Whether the store is a SQLite file."""
		return self.url.startswith("sqlite")

	@property
	def store_files_dir(self) -> Path:
		"""The file store's directory (see ``files_dir``)."""
		if self.files_dir is not None:
			return self.files_dir
		if self.is_sqlite:
			db = Path(self.url.split("///", 1)[1])
			return db.with_name(db.name + ".files")
		return Path("openmolt-files").resolve()

	def executor_id(self) -> str:
		"""This process's executor id (see ``worker_id``)."""
		return (
			self.worker_id
			or os.environ.get(ENV_WORKER_ID)
			or f"{socket.gethostname()}:{os.getpid()}"
		)

	def describe(self) -> str:
		"""The store, without a password (`openmolt_core._support.masking.shown_url`)."""
		return shown_url(self.url)


def _url(value: str) -> str:
	text = value.strip()
	if not text:
		raise ConfigurationError(
			"durability: give a SQLite file ('runs.sqlite') or a postgresql:// URL"
		)
	scheme = text.split("://", 1)[0].lower() if "://" in text else ""
	if scheme.startswith(("postgresql", "postgres")):
		if scheme == "postgres":
			text = "postgresql" + text[len("postgres") :]
		return text
	if scheme.startswith("sqlite"):
		path = text.split(":///", 1)[1] if ":///" in text else ""
		if not path:
			raise ConfigurationError(
				f"durability: {value!r} names no file; write sqlite:///runs.sqlite"
			)
		return f"sqlite:///{Path(path).resolve()}"
	if scheme:
		raise ConfigurationError(
			f"durability: {scheme}:// stores are not supported; use a SQLite file or a "
			"postgresql:// URL"
		)
	return f"sqlite:///{Path(text).expanduser().resolve()}"


_STORE = "a SQLite file's path or a postgresql:// URL"


def _path(where: str, value: Any, what: str = _STORE) -> str:
	"""The text of a path (``what``: the store's, by default), or the error naming ``where``."""
	from openmolt_core.options import path_problem

	problem = path_problem(value)
	if problem is not None:
		raise ConfigurationError(f"{where} must be {what} {problem}")
	text: str = os.fspath(value)  # text: path_problem refused bytes
	return text


def _number(key: str, value: Any) -> float:
	if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
		raise ConfigurationError(f"durability[{key!r}] must be seconds > 0, got {value!r}")
	return float(value)


def parse_settings(config: str | os.PathLike[str] | Mapping[str, Any]) -> Settings:
	"""Read ``OpenMolt(durability=...)``: a path, a URL, or a dict with ``url`` and options.

	Raises:
		ConfigurationError: A value is wrong; the message names the key and the fix.
	"""
	if isinstance(config, str | os.PathLike):
		return Settings(url=_url(_path("durability", config)))
	if not isinstance(config, Mapping):
		raise ConfigurationError(
			f"durability must be a path, a URL or a dict, not {type(config).__name__}"
		)
	names = [f.name for f in fields(Settings)]
	values = snake_options(config, "durability")  # workerId and worker_id alike
	for key in values:
		if key not in names:
			import difflib

			close = difflib.get_close_matches(key, names, n=1)
			hint = f"; did you mean {close[0]!r}?" if close else ""
			raise ConfigurationError(
				f"durability: unknown option {key!r}{hint} (options: {', '.join(sorted(names))})"
			)
	if "url" not in values:
		raise ConfigurationError(
			"durability: the dict needs 'url' (a SQLite file or postgresql://)"
		)
	values["url"] = _url(_path("durability['url']", values["url"]))
	for key in ("heartbeat", "lapse", "poll"):
		if key in values:
			values[key] = _number(key, values[key])
	if "files_dir" in values and values["files_dir"] is not None:
		values["files_dir"] = Path(
			_path("durability['filesDir']", values["files_dir"], "a folder's path")
		)
		values["files_dir"] = values["files_dir"].expanduser().resolve()
	for key in ("worker_id", "app_version", "log_level"):
		if key in values and not (isinstance(values[key], str) and values[key]):
			raise ConfigurationError(f"durability[{key!r}] must be a non-empty string")
	if "replay_events" in values and not isinstance(values["replay_events"], bool):
		raise ConfigurationError("durability['replay_events'] must be true or false")
	settings = Settings(**values)
	if settings.lapse <= settings.heartbeat:
		raise ConfigurationError(
			f"durability: lapse ({settings.lapse:g} s) must be longer than heartbeat "
			f"({settings.heartbeat:g} s), or live workers would count as dead"
		)
	return settings
