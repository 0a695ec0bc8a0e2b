"""Find, load and query plugins: pluggy, driven by entry points, loaded lazily.

Each `OpenMolt` instance owns one `Plugins`. Nothing is imported until a model id, an integration
id or a skill name asks for it; then only the entry point with that name is loaded, registered with
pluggy as ``providers:<name>``, ``integrations:<name>``, ``skills:<name>`` or
``capabilities:<name>``, and its hook called once.

Finding the entry points reads the metadata of every installed distribution (milliseconds with a
few hundred installed), so it is done once per process, on the first lookup, and shared by every
instance; `Plugins.refresh` reads them again (after a plugin was installed at run time).

Two plugins that claim the same provider name or integration id do not silently replace each
other: the first one keeps it, and a `PluginConflictWarning` names both distributions. A user's own
``om.register_integration(id, ...)`` replaces a plugin's on purpose, without a warning.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from openmolt_core import hookspecs
from openmolt_core._binding import LOCAL
from openmolt_core._support import lazy_exports
from openmolt_core._support.masking import warn
from openmolt_core.errors import ConfigurationError, PluginError
from openmolt_core.hooks import BUILTIN
from openmolt_core.hookspecs import (  # the contract plugins implement; re-exported
	CapabilityFactory,
	CapabilityRegistrar,
	CommandRegistrar,
	Group,
	IntegrationRegistrar,
	ProviderFactory,
	ProviderRegistrar,
	SkillRegistrar,
)

if TYPE_CHECKING:
	import httpx

	from openmolt_core._hints import extra_for
	from openmolt_core._plugininfo import PluginInfo
	from openmolt_core.integrations.model import Integration
	from openmolt_core.llm import LLMProvider
	from openmolt_core.retry import RetryPolicy
	from openmolt_core.skills import Skill

# The install hints (`openmolt_core._hints`: distribution metadata, regular expressions) load with
# the first message that needs one; `extra_for` is re-exported from there on first use. So does
# `PluginInfo`, the class of `Plugins.installed`'s listing: a frozen dataclass costs some 4 M
# instructions to build (its generated methods are compiled from source), and a run never lists.
__getattr__, __dir__ = lazy_exports(
	globals(), {"extra_for": "openmolt_core._hints", "PluginInfo": "openmolt_core._plugininfo"}
)

__all__ = [
	"CapabilityFactory",
	"CapabilityRegistrar",
	"CommandRegistrar",
	"IntegrationRegistrar",
	"PluginConflictWarning",
	"PluginInfo",
	"Plugins",
	"ProviderFactory",
	"ProviderRegistrar",
	"SkillRegistrar",
	"extra_for",
]

_FACTORY_KEYWORDS: dict[Any, tuple[str, ...]] = {}  # per factory: which of name, retry it takes


_GROUPS: tuple[Group, ...] = ("providers", "integrations", "skills", "capabilities")
_KINDS: dict[str, str] = {
	"providers": "provider",
	"integrations": "integration",
	"skills": "skill",
	"capabilities": "capability",
}
_index: dict[Group, dict[str, metadata.EntryPoint]] | None = None
_index_lock = threading.Lock()  # instances may first look plugins up in worker threads


def _installed_index(*, refresh: bool = False) -> dict[Group, dict[str, metadata.EntryPoint]]:
	"""The installed entry points of both groups, read once per process (again on ``refresh``)."""
	global _index
	index = _index
	if index is None or refresh:
		with _index_lock:
			if _index is None or refresh:
				found = metadata.entry_points()  # one pass over the distributions, both groups
				index = {group: {} for group in _GROUPS}
				for group in _GROUPS:
					for ep in found.select(group=f"openmolt.{group}"):
						_note_duplicate(group, ep, index[group].get(ep.name))
						index[group].setdefault(ep.name, ep)
				_index = index
			index = _index
	return index


class PluginConflictWarning(UserWarning):
	"""Two plugins claim the same provider name or integration id; the first one keeps it."""


_RESERVED_IDS = frozenset({BUILTIN, LOCAL})
"""Integration ids the loop gives a meaning: ``openmolt.<tool>`` is a built-in tool (its result
is never offloaded, the approval gate reads it as the core's), ``local.<tool>`` one of
``create_agent(tools=...)`` (rules name them so). An integration under either would be read as
the core's or the application's own, so no registration, by a user or a plugin, may take them."""


def _id_problem(id: str) -> str | None:
	"""Why ``id`` cannot be an integration's id (None: it can).

	Args:
		id: The id asked for (`register_integration`'s, a plugin's, a module's ``OPENMOLT_ID``).
	"""
	if not id or "." in id:
		return f"integration id {id!r} must be non-empty and contain no '.'"
	if id in _RESERVED_IDS:
		kind = "the built-in tools" if id == BUILTIN else "create_agent(tools=...)'s tools"
		return f"integration id {id!r} is reserved for {kind}; choose another"
	return None


def _conflict(kind: str, name: str, kept: str, ignored: str) -> None:
	warn(
		f"{kind} {name!r} is registered by both {kept} and {ignored}; {kept}'s is used and "
		f"{ignored}'s is ignored (uninstall one of them, or pick one with "
		"OpenMolt(plugins=[...], entry_points=False))",
		PluginConflictWarning,
		stacklevel=4,
		at_caller=True,
	)


def _note_duplicate(group: str, ep: metadata.EntryPoint, kept: metadata.EntryPoint | None) -> None:
	"""Warn when two distributions install an entry point of the same name (the first is used)."""
	if kept is None or kept.value == ep.value:
		return
	first = kept.dist.name if kept.dist else kept.value
	second = ep.dist.name if ep.dist else ep.value
	_conflict(_KINDS[group], ep.name, first, second)


_dists: dict[tuple[str, str], str] = {}
_impls: dict[ModuleType, dict[str, Any]] = {}  # module -> attribute name -> pluggy's opts
_specs: dict[ModuleType, dict[str, Any]] = {}


def _dist_name(ep: metadata.EntryPoint) -> str:
	"""The distribution of an entry point; reading it parses the metadata, so once per process."""
	key = (ep.group, ep.name)
	name = _dists.get(key)
	if name is None:
		name = _dists[key] = ep.dist.name if ep.dist else "unknown distribution"
	return name


class _PluginManager(pluggy.PluginManager):
	"""pluggy's manager, with the hook markers found on a module remembered once per process.

	pluggy finds hooks by inspecting every attribute of a plugin (and of the hookspecs) with
	`inspect.getattr_static`: about half a millisecond per instance for one provider, paid again
	by each `OpenMolt` a program makes (one per tenant, one per request). A module's markers do not
	change, so the two documented override points below look them up once per module; other
	plugin objects (classes, instances) are inspected every time, as pluggy does.
	"""

	def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
		"""The parsed marker, remembered for modules (a copy: pluggy normalizes it in place)."""
		if type(plugin) is not ModuleType:
			return super().parse_hookimpl_opts(plugin, name)
		seen = _impls.get(plugin)
		if seen is None:
			seen = _impls.setdefault(plugin, {})
		if name not in seen:
			seen[name] = super().parse_hookimpl_opts(plugin, name)
		opts = seen[name]
		return None if opts is None else dict(opts)

	def parse_hookspec_opts(self, module_or_class: Any, name: str) -> Any:
		"""The parsed marker, remembered for modules."""
		if type(module_or_class) is not ModuleType:
			return super().parse_hookspec_opts(module_or_class, name)
		seen = _specs.get(module_or_class)
		if seen is None:
			seen = _specs.setdefault(module_or_class, {})
		if name not in seen:
			seen[name] = super().parse_hookspec_opts(module_or_class, name)
		return seen[name]


_installed_pm: _PluginManager | None = None
_installed_lock = threading.RLock()


def _new_manager() -> _PluginManager:
	pm = _PluginManager("openmolt")
	pm.add_hookspecs(hookspecs)
	return pm


def _installed_manager() -> _PluginManager:
	"""The process's manager of installed (entry-point) plugins, made on first use."""
	global _installed_pm
	if _installed_pm is None:
		with _installed_lock:
			if _installed_pm is None:
				_installed_pm = _new_manager()
	return _installed_pm


def _load_installed(ep: metadata.EntryPoint, qualified: str) -> tuple[object, str]:
	"""Import and validate an entry-point plugin, once per process: (the plugin, its distribution).

	Raises:
		PluginError: It cannot be imported, or a hook is misspelled or has the wrong arguments.
	"""
	pm = _installed_manager()
	dist = _dist_name(ep)
	with _installed_lock:
		plugin = pm.get_plugin(qualified)
		if plugin is not None:
			return plugin, dist
		try:
			plugin = ep.load()
		except Exception as exc:
			raise PluginError(
				f"could not be loaded from {dist} ({type(exc).__name__}: {exc}); reinstall it",
				plugin=qualified,
			) from exc
		try:
			pm.register(plugin, name=qualified)
			pm.check_pending()
		except pluggy.PluginValidationError as exc:
			if pm.get_plugin(qualified) is not None:
				pm.unregister(name=qualified)  # the next instance reports it again
			raise PluginError(f"invalid hook in {dist}: {exc}", plugin=qualified) from exc
	return plugin, dist


_NO_ENTRY_POINTS: dict[Group, dict[str, metadata.EntryPoint]] = {group: {} for group in _GROUPS}


class Plugins:
	"""The plugins of one OpenMolt instance.

	Args:
		plugins: Plugin modules or objects to use directly (tests, embedding applications).
		entry_points: Whether to look up installed plugins through entry points.
	"""

	def __init__(self, plugins: Sequence[object] = (), *, entry_points: bool = True) -> None:
		# Plugins passed here register with this instance's manager; installed ones with the
		# process's (`_installed_manager`), which validates each once: pluggy's work per
		# instance was most of what a new instance cost.
		self._pm = _new_manager() if plugins else _installed_manager()
		self._explicit = list(plugins)
		self._loaded: set[str] = set()  # entry points whose hooks ran for this instance
		self._explicit_loaded = False
		self._entry_points = entry_points
		self._called: set[object] = set()
		self._providers: dict[str, ProviderFactory] = {}
		self._integrations: dict[str, Integration] = {}
		self._skills: dict[str, Skill] = {}
		self._capabilities: dict[str, CapabilityFactory] = {}
		self._skill_sets: dict[str, list[str]] = {}  # skill entry point -> the skills it registered
		self._sources: dict[str, str] = {}
		self._owners: dict[tuple[Group, str], str] = {}  # who registered each name, for conflicts

	# registration -------------------------------------------------------------------------

	def add_integration(
		self, integration: Integration | Mapping[str, Any], *, id: str
	) -> Integration:
		"""Register an integration under an id (``OpenMolt.register_integration`` calls this).

		It replaces whatever a plugin registered under that id: the user's choice wins.

		Args:
			integration: An `Integration` or the spec's dict (camelCase keys accepted).
			id: The id agents use in ``integrations=[...]`` and tool handles (``id.tool``).

		Returns:
			The integration as registered (under ``id``).

		Raises:
			ConfigurationError: The id is empty, holds a '.' or is ``openmolt`` (the built-in
				tools'), or the definition is invalid; the message names the field.
		"""
		from pydantic import ValidationError

		from openmolt_core.integrations.model import Integration

		problem = _id_problem(id)
		if problem:
			raise ConfigurationError(problem)
		from openmolt_core._support.words import problems, shown

		if not isinstance(integration, Integration | Mapping):
			raise ConfigurationError(
				f"register_integration({id!r}): give an Integration or the spec's definition (a "
				f"dict), got {shown(integration)}"
			)
		try:
			spec = (
				integration
				if isinstance(integration, Integration)
				else Integration.model_validate(integration)
			)
		except ValidationError as exc:  # its own text repeats the values (a header's token)
			raise ConfigurationError(f"register_integration({id!r}): {problems(exc)}") from None
		update: dict[str, Any] = {"id": id}
		if spec.id != id:
			if spec.name == spec.id:  # a name that was only the id it was made with
				update["name"] = id
			named = getattr(spec.source, "named", None)  # `ToolSource.named`, when it has one
			if callable(named):
				named(id)
		registered = spec.model_copy(update=update)
		self._integrations[id] = registered
		self._owners[("integrations", id)] = "register_integration"
		return registered

	def _claim(self, group: Group, name: str, source: str) -> bool:
		"""Whether ``source`` may register ``name``; warns when another plugin has it."""
		owner = self._owners.get((group, name))
		if owner is not None and owner != source:
			if owner != "register_integration":
				_conflict(_KINDS[group], name, owner, source)
			return False
		self._owners[(group, name)] = source
		return True

	def _registrars(
		self, default_id: str | None, source: str = "a plugin"
	) -> tuple[ProviderRegistrar, IntegrationRegistrar]:
		def register_provider(factory: ProviderFactory, *, name: str) -> None:
			if not callable(factory):
				raise PluginError(f"provider {name!r}: the factory is not callable", plugin=name)
			if self._claim("providers", name, source):
				self._providers[name] = factory

		def register_integration(
			integration: Integration | Mapping[str, Any], *, id: str | None = None
		) -> None:
			from openmolt_core.integrations.model import Integration

			spec = (
				integration
				if isinstance(integration, Integration)
				else Integration.model_validate(integration)
			)
			key = id or spec.id or default_id
			if not key:
				raise PluginError(
					"registered an integration without an id: pass register(integration, "
					"id='...'), set Integration(id='...'), or give the module OPENMOLT_ID",
					plugin=str(default_id or source),
				)
			problem = _id_problem(key)
			if problem:  # a plugin's too: its tools would read as the core's or the agent's own
				raise PluginError(problem, plugin=source)
			if self._claim("integrations", key, source):
				self._integrations[key] = spec.model_copy(update={"id": key})

		return register_provider, register_integration

	def _call(
		self,
		plugin: object,
		default_id: str | None,
		pm: pluggy.PluginManager | None = None,
		source: str | None = None,
	) -> None:
		"""Run one plugin's hooks (only its own) with this instance's registrars."""
		pm = pm or self._pm
		others = [p for p in pm.get_plugins() if p is not plugin]
		where = source or getattr(plugin, "__name__", None) or type(plugin).__name__
		provider, integration = self._registrars(default_id, where)
		pm.subset_hook_caller("register_providers", others)(register=provider)
		pm.subset_hook_caller("register_integrations", others)(register=integration)
		registered: list[str] = []
		pm.subset_hook_caller("register_skills", others)(
			register=self._skill_registrar(where, registered)
		)
		if default_id is not None and registered:
			self._skill_sets.setdefault(default_id, []).extend(registered)

		def register_capability(factory: CapabilityFactory, *, name: str) -> None:
			if not callable(factory):
				raise PluginError(f"capability {name!r}: the factory is not callable", plugin=name)
			if self._claim("capabilities", name, where):
				self._capabilities[name] = factory

		pm.subset_hook_caller("register_capabilities", others)(register=register_capability)

	def _skill_registrar(self, source: str, registered: list[str]) -> SkillRegistrar:
		def register_skill(skill: Skill | str | os.PathLike[str] | Mapping[str, Any]) -> None:
			from openmolt_core.errors import ConfigurationError
			from openmolt_core.skills import load_skills

			try:
				found = load_skills([skill], hard_links=True)  # installers hard-link files
			except ConfigurationError as exc:
				raise PluginError(f"registered an invalid skill: {exc}", plugin=source) from exc
			for one in found:
				if self._claim("skills", one.name, source):
					self._skills[one.name] = one
					registered.append(one.name)

		return register_skill

	def _load_explicit(self) -> None:
		if self._explicit_loaded:
			return
		self._explicit_loaded = True
		for plugin in self._explicit:
			if self._pm.is_registered(plugin):
				continue
			self._pm.register(plugin)
			self._pm.check_pending()
			if plugin in self._called:
				continue
			self._called.add(plugin)
			self._call(plugin, getattr(plugin, "OPENMOLT_ID", None))

	def _entry_index(self) -> dict[Group, dict[str, metadata.EntryPoint]]:
		return _installed_index() if self._entry_points else _NO_ENTRY_POINTS

	def refresh(self) -> None:
		"""Read the installed entry points again, for every instance of this process.

		The index is read once per process; call this after installing a plugin while the
		program runs. Plugins already loaded stay loaded.
		"""
		if self._entry_points:
			_installed_index(refresh=True)

	def _load_entry_point(self, group: Group, name: str) -> bool:
		ep = self._entry_index()[group].get(name)
		if ep is None:
			return False
		qualified = f"{group}:{name}"
		if qualified in self._loaded:
			return True
		plugin, dist = _load_installed(ep, qualified)
		self._loaded.add(qualified)
		self._sources[qualified] = dist
		self._call(plugin, name, _installed_manager(), dist)
		return True

	# lookup -------------------------------------------------------------------------------

	def provider(self, name: str) -> ProviderFactory:
		"""Return the factory of a provider, loading its plugin on first use.

		Raises:
			PluginError: No installed plugin provides it.
		"""
		if name not in self._providers:
			self._load_explicit()
		if name not in self._providers:
			self._load_entry_point("providers", name)
		factory = self._providers.get(name)
		if factory is None:
			from openmolt_core._hints import missing_provider

			known = {*self._providers, *self._entry_index()["providers"]}
			raise PluginError(missing_provider(name, available=known), plugin=f"providers:{name}")
		return factory

	def build_provider(
		self,
		plugin: str,
		settings: dict[str, Any],
		http: Callable[[], httpx.AsyncClient],
		*,
		name: str,
		retry: RetryPolicy,
	) -> LLMProvider:
		"""Make a provider with its plugin's factory (``OpenMolt.provider``).

		A factory that accepts ``name`` (``retry``) learns the instance's name (retry policy).

		Args:
			plugin: The provider plugin's name (``openai``).
			settings: The user's settings for this instance of it.
			http: The getter of the client model requests go through.
			name: The instance's name (``llm_providers`` key; the plugin's own by default).
			retry: The instance's retry policy.

		Raises:
			PluginError: No plugin provides it, or its factory made no provider.
		"""
		factory = self.provider(plugin)
		takes = _FACTORY_KEYWORDS.get(factory)
		if takes is None:
			import inspect

			try:
				params = inspect.signature(factory).parameters
			except (TypeError, ValueError):
				params = {}  # type: ignore[assignment]  # builtins without a signature take no name
			anything = any(p.kind is p.VAR_KEYWORD for p in params.values())
			takes = tuple(k for k in ("name", "retry") if anything or k in params)
			_FACTORY_KEYWORDS[factory] = takes
		given: dict[str, Any] = {"name": name, "retry": retry}
		provider = factory(settings, http, **{k: given[k] for k in takes})
		if not callable(getattr(provider, "generate", None)):
			source = self.source(f"providers:{plugin}")
			raise PluginError(
				f"the factory returned {type(provider).__name__}, not a provider (an object "
				"with async generate(request)); report it to the plugin's authors",
				plugin=f"providers:{plugin}" + (f" ({source})" if source else ""),
			)
		return provider

	def provider_names(self) -> list[str]:
		"""The provider names that are registered or installed (without loading any)."""
		self._load_explicit()
		return sorted({*self._providers, *self._entry_index()["providers"]})

	def integration(self, id: str) -> Integration:
		"""Return an integration, loading its plugin on first use.

		Raises:
			PluginError: No installed plugin provides it.
		"""
		if id not in self._integrations:
			self._load_explicit()
		if id not in self._integrations:
			loaded = self._load_entry_point("integrations", id)
			if not loaded and id not in self._integrations:
				alias = self._alias(id)
				if alias is not None:
					return self.integration(alias)
		spec = self._integrations.get(id)
		if spec is None:
			from openmolt_core._hints import missing_integration

			index = self._entry_index()["integrations"]
			listed = [id] if id in index else []
			raise PluginError(
				missing_integration(id, available={*self._integrations, *index}, listed=listed),
				plugin=f"integrations:{id}",
			)
		return spec

	def _alias(self, id: str) -> str | None:
		"""The installed id that ``id`` spells as its extra (``google-drive`` → ``googleDrive``)."""
		from openmolt_core._hints import extra_for

		ids = {*self._integrations, *self._entry_index()["integrations"]}
		same = sorted(i for i in ids if extra_for(i) == id and i != id)
		return same[0] if same else None

	def integration_ids(self) -> list[str]:
		"""The integration ids that are registered or installed (without loading any)."""
		self._load_explicit()
		return sorted({*self._integrations, *self._entry_index()["integrations"]})

	def skills(self, name: str) -> list[Skill] | None:
		"""The skills a plugin provides under ``name``, loading its entry point on first use.

		``name`` is a skill's name, or the name of a ``openmolt.skills`` entry point: then it
		means every skill that plugin registered. None when no plugin provides it.

		Raises:
			PluginError: The plugin cannot be loaded or registers an invalid skill.
		"""
		if name not in self._skills:
			self._load_explicit()
		if name not in self._skills and name not in self._skill_sets:
			if not self._load_entry_point("skills", name):
				# A skill's own name, registered by a plugin under another entry-point name.
				for other in self._entry_index()["skills"]:
					try:
						self._load_entry_point("skills", other)
					except PluginError:
						continue  # reported when that plugin is named itself
		if name in self._skills:
			return [self._skills[name]]
		names = self._skill_sets.get(name)
		return [self._skills[n] for n in names if n in self._skills] if names else None

	def capability(self, name: str) -> CapabilityFactory:
		"""The factory of a capability a plugin registers, loading its plugin on first use.

		Raises:
			PluginError: No installed plugin provides it.
		"""
		if name not in self._capabilities:
			self._load_explicit()
		if name not in self._capabilities:
			self._load_entry_point("capabilities", name)
		factory = self._capabilities.get(name)
		if factory is None:
			from openmolt_core._support.suggest import suggestion

			known = sorted({*self._capabilities, *self._entry_index()["capabilities"]})
			raise PluginError(
				f"no installed plugin provides the capability {name!r}; "
				+ suggestion(name, known, noun="capabilities"),
				plugin=f"capabilities:{name}",
			)
		return factory

	def skill_names(self) -> list[str]:
		"""The skill names registered by loaded plugins and the installed skill entry points."""
		self._load_explicit()
		return sorted({*self._skills, *self._skill_sets, *self._entry_index()["skills"]})

	def installed(self) -> list[PluginInfo]:
		"""List every plugin entry point installed, without loading any."""
		from openmolt_core._plugininfo import PluginInfo

		out = []
		for group, entries in self._entry_index().items():
			for name, ep in sorted(entries.items()):
				dist = ep.dist
				out.append(
					PluginInfo(
						group=group,
						name=name,
						value=ep.value,
						distribution=dist.name if dist else "",
						version=dist.version if dist else "",
					)
				)
		return out

	def source(self, qualified: str) -> str | None:
		"""The distribution a loaded plugin came from, for error messages."""
		return self._sources.get(qualified)

	def sources(self) -> dict[str, str]:
		"""Every entry-point plugin loaded so far and its distribution.

		Keys are qualified ids (``integrations:notion``), values distribution names
		(``openmolt-integrations``).
		"""
		return dict(self._sources)
