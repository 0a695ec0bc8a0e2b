"""Tables an OpenMolt store adds to a database, made once per engine (safe when concurrent)."""

from __future__ import annotations

import weakref

import sqlalchemy as sa

__all__ = ["create", "ready"]

_MADE: dict[int, weakref.WeakSet[sa.Engine]] = {}
"""By ``id`` of a module's `sa.MetaData` (made once, never freed): the engines whose tables are
known to exist. The engines are held weakly: a new engine at a freed one's address is another."""


def create(meta: sa.MetaData, engine: sa.Engine) -> None:
	"""Create ``meta``'s tables where they are missing, whoever else does it at the same time.

	Args:
		meta: The tables.
		engine: The database.
	"""
	try:
		meta.create_all(engine, checkfirst=True)
	except sa.exc.DBAPIError:  # another process made them between the look and the make
		meta.create_all(engine, checkfirst=True)


def ready(meta: sa.MetaData, engine: sa.Engine) -> sa.Engine:
	"""``engine``, once ``meta``'s tables exist there (made at its first use in this process).

	Args:
		meta: The tables.
		engine: The database.
	"""
	made = _MADE.setdefault(id(meta), weakref.WeakSet())
	if engine not in made:
		create(meta, engine)
		made.add(engine)
	return engine
