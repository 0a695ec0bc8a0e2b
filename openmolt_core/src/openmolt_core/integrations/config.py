"""The keys of an integration's config that the HTTP engine itself reads (`EngineConfig`).

An integration's credential config holds the values its templates read (API keys, tokens,
account ids) and, in either spelling, the few settings of the engine (``allowInternalHosts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ConfigDict

from openmolt_core.options import Options, options_config, parse_options

__all__ = ["ENGINE_KEYS", "EngineConfig"]


class EngineConfig(Options):
	"""The keys of an integration's config that the HTTP engine itself reads (either spelling).

	Every other key of the config is the integration's (its templates read them).

	Attributes:
		allow_internal_hosts: Internal hosts or networks the integration's tools may reach
			(``allowInternalHosts``; see `openmolt_core.integrations._ssrf`).
		allow_private: The retired switch that opened every internal address (refused).
	"""

	model_config: ClassVar[ConfigDict] = options_config(extra="ignore")

	allow_internal_hosts: Any = None
	allow_private: Any = None

	@classmethod
	def of(cls, config: Mapping[str, Any]) -> EngineConfig:
		"""The engine's keys of a config (other keys ignored).

		Args:
			config: The integration's credential config.

		Raises:
			ConfigurationError: A key is given in both spellings with different values.
		"""
		return parse_options(cls, config, "integration config")


ENGINE_KEYS: frozenset[str] = frozenset(
	{name for name in EngineConfig.model_fields}
	| {str(f.alias) for f in EngineConfig.model_fields.values() if f.alias}
)
"""The engine's own config keys, in both spellings: an operator's settings, never an end user's
(`openmolt_core.accounts` drops them from a user's stored record)."""
