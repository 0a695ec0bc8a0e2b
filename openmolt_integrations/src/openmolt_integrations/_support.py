"""Helpers shared by the integrations whose tools are Python functions (images, fal)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ToolError

if TYPE_CHECKING:
	from openmolt_core.tools import ToolContext

__all__ = ["file_store", "require_config"]


def file_store(context: ToolContext, tool: str) -> Any:
	"""The instance's file store from the tool context.

	The store saves bytes (``await store.save(data, media_type=..., name=...)`` returns
	``{"file": "openmolt-file:<id>", ...}``) and resolves file references
	(``await store.open(reference)`` returns an object with ``data``, ``media_type`` and ``name``).

	Raises:
		ToolError: The context carries no file store (the tool ran outside an OpenMolt agent).
	"""
	store = getattr(context, "files", None)
	if store is None:
		raise ToolError(
			"no file store is available to this tool; run it through an OpenMolt agent",
			tool=tool,
		)
	return store


def require_config(context: ToolContext, key: str, *, integration: str, tool: str) -> str:
	"""Read a required string from the credential config.

	Raises:
		ToolError: The key is missing; the message says where to put it.
	"""
	value = context.config.get(key)
	if not isinstance(value, str) or not value:
		raise ToolError(
			f"the {integration} credential config has no {key!r}; pass it in "
			f'OpenMolt(integrations={{"{integration}": {{"{key}": "..."}}}}) or in the '
			"agent's credential config",
			tool=tool,
		)
	return value
