"""The hooks a plugin can implement. They run while an OpenMolt instance loads its plugins.

A plugin is a module (or object) with functions marked ``@hookimpl``, found through the
``openmolt.providers``, ``openmolt.integrations``, ``openmolt.skills`` or ``openmolt.capabilities``
entry-point group (the
entry-point name is the id users type: ``openai``, ``notion``, ``pdf-forms``) or passed as
``OpenMolt(plugins=[...])``.

Registration hooks are synchronous and do no I/O: they hand factories or declarative specs to
``register``. Network work happens later, in the provider's ``generate`` and the tools' ``execute``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

from openmolt_core._markers import hookimpl, hookspec

if TYPE_CHECKING:
	import httpx

	from openmolt_core.hooks import Capability
	from openmolt_core.integrations.model import Integration
	from openmolt_core.llm import LLMProvider
	from openmolt_core.skills import Skill

__all__ = [
	"CapabilityFactory",
	"CapabilityRegistrar",
	"CommandRegistrar",
	"IntegrationRegistrar",
	"ProviderFactory",
	"ProviderRegistrar",
	"SkillRegistrar",
	"hookimpl",
	"hookspec",
	"register_capabilities",
	"register_commands",
	"register_integrations",
	"register_providers",
	"register_skills",
]


Group = Literal["providers", "integrations", "skills", "capabilities"]
"""The kinds of plugin entry point: the ``openmolt.<group>`` entry-point groups."""


# What each hook is handed: the registrars (`openmolt_core.plugins` implements them).

ProviderFactory = Callable[[Mapping[str, Any], "Callable[[], httpx.AsyncClient]"], "LLMProvider"]
"""Builds a provider from the user's settings for it and a getter for the shared HTTP client."""


class ProviderRegistrar(Protocol):
	"""The ``register`` callable handed to ``register_providers``."""

	def __call__(self, factory: ProviderFactory, *, name: str) -> None:
		"""Register a provider factory under the prefix users write in model ids."""
		...


class IntegrationRegistrar(Protocol):
	"""The ``register`` callable handed to ``register_integrations``."""

	def __call__(
		self, integration: Integration | Mapping[str, Any], *, id: str | None = None
	) -> None:
		"""Register an integration; ``id`` defaults to its own id, then the entry-point name."""
		...


CapabilityFactory = Callable[..., "Capability"]
"""Builds one agent's `openmolt_core.hooks.Capability` from the options the agent gives."""


class CapabilityRegistrar(Protocol):
	"""The ``register`` callable handed to ``register_capabilities``."""

	def __call__(self, factory: CapabilityFactory, *, name: str) -> None:
		"""Register a capability factory under the name agents give."""
		...


class CommandRegistrar(Protocol):
	"""The ``register`` callable handed to ``register_commands``."""

	def __call__(self, name: str, main: Callable[[list[str]], int], *, summary: str) -> None:
		"""Register ``openmolt NAME``: ``main(args)`` gets the arguments after the name."""
		...


class SkillRegistrar(Protocol):
	"""The ``register`` callable handed to ``register_skills``."""

	def __call__(self, skill: Skill | str | os.PathLike[str] | Mapping[str, Any]) -> None:
		"""Register a `Skill`, a skill folder (or a folder of them), or a skill's fields."""
		...


@hookspec
def register_providers(register: ProviderRegistrar) -> None:
	"""Register model providers.

	Called once per plugin per OpenMolt instance, when a model id first names one of the plugin's
	providers. Call ``register(factory, name="openai")`` once per provider: ``name`` is the prefix
	users write in model ids (``openai:gpt-5``), and ``factory(settings, http)`` builds the provider
	from the user's ``llm_providers[name]`` dict and a getter for the shared ``httpx.AsyncClient``.

	A user may name instances of a provider: ``llm_providers={"ollama": {"provider": "openai",
	...}}`` builds ``ollama:`` models with the ``openai`` factory and that dict (``provider``
	removed). A factory that accepts a ``name`` keyword gets the instance's name (``ollama``), for
	its messages and its ``OPENMOLT_<NAME>_...`` environment variables.
	"""


@hookspec
def register_integrations(register: IntegrationRegistrar) -> None:
	"""Register integrations.

	Called once per plugin per OpenMolt instance, when an agent first uses one of the plugin's
	integrations. Call ``register(integration)`` with an ``Integration`` (or the spec's dict form);
	its id defaults to the entry-point name. A plugin may register several integrations.
	"""


@hookspec
def register_skills(register: SkillRegistrar) -> None:
	"""Register skills (`openmolt_core.skills`).

	Called once per plugin per OpenMolt instance, when an agent first names one of the plugin's
	skills (``create_agent(skills=["pdf-forms"])``, or ``"skills"`` in an agent file). Call
	``register(skill)`` with a `Skill`, the path of a skill folder the plugin ships (one with a
	``SKILL.md``, or a folder of them: ``Path(__file__).parent / "skills"``), or a skill's fields
	as a dict. The entry-point name is a skill's name, or names every skill the plugin registers.
	"""


@hookspec
def register_capabilities(register: CapabilityRegistrar) -> None:
	"""Register capabilities (`openmolt_core.hooks.Capability`) that agents name.

	Called once per plugin per OpenMolt instance, when an agent first names one of the plugin's
	capabilities (``create_agent(capabilities=["audit-log"])``, or ``"capabilities"`` in an agent
	file). Call ``register(factory, name="audit-log")``: ``factory(**options)`` returns a new
	`Capability` for one agent, with the options the agent gives (``{"name": "audit-log",
	"options": {...}}``).
	"""


@hookspec
def register_commands(register: CommandRegistrar) -> None:
	"""Register ``openmolt`` subcommands (``openmolt serve``, ``openmolt worker``...).

	Called once per process by the ``openmolt`` command, for the plugins of the
	``openmolt.commands`` entry-point group, when the command line names a command the core does
	not have. Call ``register(name, main, summary="...")``: ``main(args)`` runs the command with
	the arguments after its name and returns the exit code. Load agent files with
	`openmolt_core.agentfile`, never with the command's private modules.
	"""
