"""The typed options of `openmolt_core.OpenMolt.create_agent` that the assembly reads.

`AgentConfig` (``create_agent(config=...)``: the instance settings one agent overrides) and
`IntegrationEntry` (``create_agent(integrations=[...])``, with its `IntegrationCredential`). The
``openmolt`` command's agent files use the same models (their ``config`` and ``integrations``
keys), so both accept and refuse the same things. Like every option model they take each name in
camelCase or snake_case (`openmolt_core.options`). The kernel never reads them: the assembly turns
them into the agent's limits and settings, and `openmolt_core.integrations.binding` into its
integrations. (The memory options, which the loop reads, are `openmolt_core.options.AgentMemory`.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, StrictFloat, StrictInt
from pydantic.json_schema import SkipJsonSchema

from openmolt_core.options import Options

__all__ = ["AgentConfig", "IntegrationCredential", "IntegrationEntry"]

_Count = Annotated[StrictInt, Field(ge=1)]


class AgentConfig(Options):
	"""``create_agent(config=...)``: the instance settings one agent overrides.

	Explicit keyword arguments of `openmolt_core.OpenMolt.create_agent` win over these.

	Attributes:
		max_steps: The most model calls a run makes (``maxSteps``).
		max_tokens: Tokens over the run after which no model call starts (``maxTokens``).
		timeout: Seconds the whole run may take.
		max_cost: US dollars a run may spend on model calls (``maxCost``).
		verbose: Log this agent's steps and tool calls to stderr.
		max_reply_chars: Cap of a model reply (`openmolt_core.agent.Limits`).
		max_result_chars: Cap of a tool result shown to the model.
		max_memory_chars: Cap of each memory.
		max_answer_chars: Cap of a person's answer.
		max_result_chars_per_tool: Result thresholds by tool handle or pattern
			(`openmolt_core.offload`), in characters.
		max_tool_images: The most images tools return that the model is shown per step (0:
			none).
	"""

	max_steps: _Count | None = Field(default=None, description="The most model calls a run makes.")
	max_tokens: _Count | None = Field(default=None, description="Tokens over the run.")
	timeout: Annotated[StrictFloat | StrictInt, Field(gt=0)] | None = Field(
		default=None, description="Seconds the whole run may take."
	)
	max_cost: (
		Annotated[StrictFloat, Field(gt=0, allow_inf_nan=False)]
		| Annotated[StrictInt, Field(gt=0)]
		| None
	) = Field(default=None, description="US dollars a run may spend on model calls.")
	verbose: StrictBool | None = Field(default=None, description="Log steps to stderr.")
	max_reply_chars: _Count | None = None
	max_result_chars: _Count | None = None
	max_memory_chars: _Count | None = None
	max_answer_chars: _Count | None = None
	max_tool_images: Annotated[StrictInt, Field(ge=0)] | None = None
	max_result_chars_per_tool: dict[str, _Count] | None = Field(
		default=None,
		description="Result thresholds by tool handle or pattern, e.g. {'notion.*': 8000}.",
	)

	def limits(self) -> dict[str, Any]:
		"""The caps that are set, for `openmolt_core.agent.Limits`."""
		names = (
			"max_reply_chars",
			"max_result_chars",
			"max_memory_chars",
			"max_answer_chars",
			"max_result_chars_per_tool",
			"max_tool_images",
		)
		return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


class IntegrationCredential(Options):
	"""The credential an agent uses for one integration.

	Attributes:
		type: The credential type (``bearer``, ``oauth2``...; default: the integration's first).
		config: The values its templates read (API keys, tokens, account ids).
		on_token_refresh: Called with the new config after an OAuth2 refresh (Python only).
	"""

	type: str | None = Field(
		default=None, description="bearer, custom, oauth2... (default: first)."
	)
	config: dict[str, Any] = Field(
		default_factory=dict, repr=False, description="Values for the templates."
	)
	on_token_refresh: SkipJsonSchema[Callable[[dict[str, Any]], Any] | None] = Field(
		default=None, exclude=True
	)


class IntegrationEntry(Options):
	"""One integration an agent may use, with its credential and scopes.

	Attributes:
		integration: The integration id (``notion``).
		credential: The credential to use (default: the integration's first type, with the
			instance's config).
		scopes: The scopes granted, or ``"all"`` (the default).
		account: Whose account the tools act as: ``operator`` (the default: the credential
			given, the environment or the operator's stored one) or ``user`` (each run's end
			user, ``agent.run(input, user=...)``, from the credential store; a user who has
			not connected parks the run with an authorization request, see
			`openmolt_core.accounts`).
	"""

	integration: str = Field(min_length=1, description="The integration id, e.g. 'notion'.")
	credential: IntegrationCredential | None = None
	scopes: list[str] | Literal["all"] | None = Field(default=None, description="Default: all.")
	account: Literal["operator", "user"] = Field(
		default="operator",
		description="'user': each run's end user's stored credential; 'operator': one account.",
	)
