"""The replay guard's memory in the durable store's database, for servers on several machines.

``openmolt serve`` keeps what its replay guards have seen (webhook signatures and delivery ids,
chat message ids: `openmolt_serve.signatures.SeenStore`) in a SQLite file of its own. Servers on
several machines that share a PostgreSQL durable store share nothing else: each kept its own file,
so a delivery (a chat message) retried to the other machine was taken there too, and answered
twice. On PostgreSQL the guard keeps its entries in the store's database instead
(`DBOSBackend.seen_store <openmolt_dbos._backend.DBOSBackend.seen_store>`), in the table
``openmolt_seen``; every server on the store takes a key there, and of two taking one key at once,
one gets it (its primary key, `StoreSeen.take`).

The calls are one short transaction each, made where the guard asks (the event loop), as the
SQLite file's are.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence

import sqlalchemy as sa

from openmolt_dbos._tables import ready

__all__ = ["CLOCKS_APART", "SEEN", "StoreSeen"]

CLOCKS_APART = 3600.0
"""Seconds an entry is kept past its end before a server drops it while taking other keys: the
servers' clocks may differ, and one whose clock is ahead would drop an entry the others still
refuse by (a replay of a signed delivery inside its window, let through on them). As
`openmolt_serve._seen.CLOCKS_APART`."""

_META = sa.MetaData()

SEEN = sa.Table(
	"openmolt_seen",
	_META,
	sa.Column("scope", sa.String(400), primary_key=True),
	sa.Column("key", sa.String(400), primary_key=True),
	sa.Column("until", sa.Float),
	sa.Index("openmolt_seen_until", "scope", "until"),
)
"""What each replay guard took: its scope (route or channel, and agent), the key, until when
(None: for good)."""


_TRIES = 3
"""How often a take is tried when its key was given back (or expired) between its two looks."""

_LONGEST = 200
"""The longest key kept as it is; a longer one (a sender's delivery id: its header is not always
signed) is kept as its digest, which the ``key`` column holds (`_stored`)."""


def _stored(key: str) -> str:
	"""A key as the table keeps it: itself, or its digest when too long or holding a NUL."""
	if len(key) <= _LONGEST and "\x00" not in key:
		return key
	return "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class StoreSeen:
	"""A `SeenStore <openmolt_serve.signatures.SeenStore>` in the durable store's database.

	Args:
		engine: The engine on OpenMolt's tables (`openmolt_dbos._engine.Engine.tables`).
		scope: Whose entries these are (``hook:<agent>``, ``chat:telegram:<agent>``...).
	"""

	def __init__(self, engine: sa.Engine, scope: str) -> None:
		self.engine = engine
		self.scope = scope

	def __repr__(self) -> str:
		return f"StoreSeen({self.engine.url.render_as_string()!r}, scope={self.scope!r})"

	def _ready(self) -> sa.Engine:
		return ready(_META, self.engine)

	def _kept(self, keys: Sequence[str]) -> sa.ColumnElement[bool]:
		return sa.and_(SEEN.c.scope == self.scope, SEEN.c.key.in_([_stored(k) for k in keys]))

	def seen(self, keys: Sequence[str], now: float) -> bool:
		"""Whether one of ``keys`` is kept and not expired at ``now``."""
		with self._ready().connect() as conn:
			found = conn.execute(
				sa.select(SEEN.c.key)
				.where(self._kept(keys))
				.where(sa.or_(SEEN.c.until.is_(None), SEEN.c.until >= now))
				.limit(1)
			).first()
		return found is not None

	def add(self, keys: Sequence[str], until: float | None) -> None:
		"""Keep ``keys`` until ``until`` (None: for good); expired entries are dropped."""
		with self._ready().begin() as conn:
			conn.execute(sa.delete(SEEN).where(self._kept(keys)))
			conn.execute(
				sa.insert(SEEN),
				[{"scope": self.scope, "key": _stored(k), "until": until} for k in keys],
			)
			conn.execute(
				sa.delete(SEEN)
				.where(SEEN.c.scope == self.scope)
				.where(SEEN.c.until < time.time() - CLOCKS_APART)
			)

	def take(self, entries: Mapping[str, float | None], now: float) -> str | None:
		"""Keep every key of ``entries`` unless one is kept and not expired: that key, else None.

		One transaction drops the scope's expired entries and inserts the keys; the primary key
		refuses a key another server holds (a transaction taking it at the same moment waits for
		the other's, then is refused), so of several servers taking one key, one gets it. A
		refused take looks up which key is held; one given back meanwhile is taken again.
		"""
		keys = list(entries)
		rows = [{"scope": self.scope, "key": _stored(k), "until": u} for k, u in entries.items()]
		engine = self._ready()
		for _ in range(_TRIES):
			try:
				with engine.begin() as conn:
					# Another server's entries only once they ended on any clock near this one
					# (`CLOCKS_APART`); the keys taken now, once they ended on this clock.
					conn.execute(
						sa.delete(SEEN)
						.where(SEEN.c.scope == self.scope)
						.where(
							sa.or_(
								SEEN.c.until < now - CLOCKS_APART,
								sa.and_(self._kept(keys), SEEN.c.until < now),
							)
						)
					)
					conn.execute(sa.insert(SEEN), rows)
				return None
			except sa.exc.IntegrityError:
				pass
			with engine.connect() as conn:
				held = {
					str(row[0])
					for row in conn.execute(
						sa.select(SEEN.c.key)
						.where(self._kept(keys))
						.where(sa.or_(SEEN.c.until.is_(None), SEEN.c.until >= now))
					)
				}
			for key in keys:
				if _stored(key) in held:
					return key
		return keys[0]  # refused each time, held each time by no one we could see: taken

	def claim(self, key: str, until: float) -> bool:
		"""Keep ``key`` until ``until`` unless it is kept already: whether this call kept it (`take`)."""
		return self.take({key: until}, time.time()) is None

	def discard(self, keys: Sequence[str]) -> None:
		"""Drop ``keys``."""
		with self._ready().begin() as conn:
			conn.execute(sa.delete(SEEN).where(self._kept(keys)))
