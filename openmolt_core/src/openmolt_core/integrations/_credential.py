"""The credential types an integration accepts: one model per ``type``, joined in `Credential`.

`Credential` is a discriminated union by ``type``: ``{"type": "bearer", "tokenUrl": ...}`` is
refused with an error naming the field that bearer credentials do not have, and an oauth2
credential without a ``token_url`` is refused too. A ``type`` other than the built-in ones is an
`AuthCredential`, whose auth the integration registers in ``auths`` (AWS Signature V4 in the S3
integration).

Values are Liquid templates over ``config.*``, rendered for each request.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
	ConfigDict,
	Discriminator,
	Field,
	SerializerFunctionWrapHandler,
	Tag,
	field_validator,
	model_serializer,
	model_validator,
)

from openmolt_core.options import Options, options_config

__all__ = [
	"BUILTIN_CREDENTIAL_TYPES",
	"AuthCredential",
	"BasicCredential",
	"BearerCredential",
	"Credential",
	"CredentialType",
	"CustomCredential",
	"OAuth2Credential",
]

CredentialType = Literal["bearer", "custom", "oauth2", "basic"]
"""The credential types the engine knows; an integration registers others in ``auths``."""

BUILTIN_CREDENTIAL_TYPES: tuple[str, ...] = ("bearer", "custom", "oauth2", "basic")
"""The values of `CredentialType`."""


class _Credential(Options):
	model_config: ClassVar[ConfigDict] = options_config(arbitrary_types_allowed=True)

	@model_validator(mode="after")
	def _no_call_fields(self) -> Any:
		"""Refuses a template that reads the call: a credential's are rendered with the config."""
		values = list(vars(self).values())
		if "call" in repr(values):  # the template engine is loaded only for a credential that may
			from openmolt_core.integrations.templating import check_call_reads

			check_call_reads(values, (), f"the {getattr(self, 'type', '')} credential")
		return self

	@model_serializer(mode="wrap")
	def _with_type(self, handler: SerializerFunctionWrapHandler) -> Any:
		# The type is the union's discriminator: a dump always keeps it, defaults excluded or not.
		data = handler(self)
		if isinstance(data, dict) and "type" not in data:
			data = {"type": getattr(self, "type", None), **data}
		return data


class BearerCredential(_Credential):
	"""A token sent in a header on every request.

	Attributes:
		type: ``bearer``.
		headers: The headers that carry it (``{"Authorization": "Bearer {{ config.apiKey }}"}``).
	"""

	type: Literal["bearer"] = "bearer"
	headers: dict[str, str] = Field(default_factory=dict)


class CustomCredential(_Credential):
	"""Keys sent in headers and query parameters of the service's choosing.

	Attributes:
		type: ``custom``.
		headers: Headers added to each request (``{"X-Api-Key": "{{ config.apiKey }}"}``).
		query_params: Query parameters added to each request (``{"key": "{{ config.apiKey }}"}``).
	"""

	type: Literal["custom"] = "custom"
	headers: dict[str, str] = Field(default_factory=dict)
	query_params: dict[str, str] = Field(default_factory=dict)


class OAuth2Credential(_Credential):
	"""OAuth2 access tokens, refreshed with a refresh token at the token URL.

	Attributes:
		type: ``oauth2``.
		token_url: The token URL, used to refresh (required).
		auth_url: The authorization URL, where a user grants a first token (docs, CLI).
		headers: Headers added to each request. A header whose template reads
			``config.accessToken`` carries the token itself (Shopify's
			``X-Shopify-Access-Token``), and no ``Authorization: Bearer`` header is added.
		client_id: The client id.
		client_secret: The client secret (none for a public client using PKCE).
		refresh_token: The refresh token.
		scopes: The OAuth scope strings to request (not the tool scopes).
		scope_separator: How the authorization URL joins ``scopes`` (Slack, TikTok: ``,``).
		auth_params: More authorization-URL parameters (``access_type=offline``); a None value
			leaves out a parameter the URL otherwise carries (Shopify documents no
			``response_type``).
		token_auth: How a confidential client authenticates at the token URL: in the ``body``
			or with HTTP ``basic``.
		token_format: How the token request is encoded: ``form`` (OAuth2's standard) or
			``json`` (Notion documents a JSON body).
		pkce: Whether the service takes a PKCE S256 ``code_challenge`` (RFC 7636) in the
			authorization-code flow: ``required`` (X, Etsy), ``supported`` (Google, Microsoft,
			Dropbox, GitHub) or ``unsupported`` (the challenge is not sent).
		client_secret_required: Whether exchanging a code needs the client secret (False: a
			public client with PKCE, as Etsy and Dropbox allow).
		client_id_param: The authorization and token requests' name for the client id
			(``client_key`` for TikTok).
		scope_map: The OAuth scopes each tool scope needs (``{"read":
			["https://www.googleapis.com/auth/gmail.readonly"]}``): ``openmolt auth`` asks only
			for those of the tools the agent may call, plus every entry of ``scopes`` that no
			tool scope lists (``offline_access``). Empty: all of ``scopes`` are asked for.
		minimum_scopes: The scopes asked for when the agent's tool scopes need none at all (a
			tool scope whose ``scope_map`` entry is empty): a service that refuses a consent
			asking for no scope (Shopify's authorization code grant answers ``invalid_scope``)
			is asked for these, the least it grants. Each must be in ``scopes``.
		implied_scopes: Scopes a granted scope includes, which the token reply may leave out
			(``{"write_orders": ["read_orders"]}``: Shopify lists only ``write_orders`` when both
			were asked); a reply listing the key grants them too.
		device_url: The device authorization URL (RFC 8628), for services with a device flow
			(GitHub, Microsoft): ``openmolt auth ID --device`` shows a code to enter on another
			device instead of redirecting a browser.
		https_redirect: The service accepts only ``https`` redirect URLs, even on localhost
			(Slack): ``openmolt auth`` cannot listen on ``http://127.0.0.1`` and asks for
			``--no-browser --redirect-uri https://...``.
	"""

	type: Literal["oauth2"] = "oauth2"
	token_url: str
	auth_url: str | None = None
	headers: dict[str, str] = Field(default_factory=dict)
	client_id: str | None = None
	client_secret: str | None = Field(default=None, repr=False)
	refresh_token: str | None = Field(default=None, repr=False)
	scopes: list[str] = Field(default_factory=list)
	scope_separator: str = " "
	auth_params: dict[str, str | None] = Field(default_factory=dict)
	token_auth: Literal["body", "basic"] = "body"
	token_format: Literal["form", "json"] = "form"
	pkce: Literal["required", "supported", "unsupported"] = "unsupported"
	client_secret_required: bool = True
	client_id_param: str = "client_id"
	scope_map: dict[str, list[str]] = Field(default_factory=dict)
	minimum_scopes: list[str] = Field(default_factory=list)
	implied_scopes: dict[str, list[str]] = Field(default_factory=dict)
	https_redirect: bool = False
	device_url: str | None = None

	@model_validator(mode="after")
	def _minimum_in_scopes(self) -> OAuth2Credential:
		"""Refuses a ``minimum_scopes`` entry that ``scopes`` does not list."""
		unknown = [s for s in self.minimum_scopes if s not in self.scopes]
		if unknown:
			raise ValueError(
				f"minimum_scopes {unknown} are not in scopes; list them in scopes too (the "
				"scopes the credential may ask for)"
			)
		return self


class BasicCredential(_Credential):
	"""HTTP basic authentication.

	Attributes:
		type: ``basic``.
		username: The user (a Twilio account SID, a Stripe key); default: ``config.username``.
		password: The password; default: ``config.password``.
	"""

	type: Literal["basic"] = "basic"
	username: str | None = None
	password: str | None = Field(default=None, repr=False)


class AuthCredential(_Credential):
	"""A credential type the integration implements itself (registered in its ``auths``).

	Attributes:
		type: The type's name (``aws_sigv4``); the integration's ``auths`` must hold it.
		params: Values the auth reads (Liquid templates over ``config.*``), by name.
		secret_params: The names in ``params`` whose values are secrets (never shown).
		optional_params: The names in ``params`` that may render empty; the others are
			required, and an agent whose config lacks them is refused before it runs.
	"""

	type: str
	params: dict[str, str] = Field(default_factory=dict)
	secret_params: list[str] = Field(default_factory=list)
	optional_params: list[str] = Field(default_factory=list)

	@field_validator("type")
	@classmethod
	def _not_builtin(cls, value: str) -> str:
		if value in BUILTIN_CREDENTIAL_TYPES:
			raise ValueError(f"{value!r} is a built-in credential type")
		if not value:
			raise ValueError("give the credential a type")
		return value


def _kind(value: Any) -> str | None:
	kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
	if kind is None:
		return None
	return kind if kind in BUILTIN_CREDENTIAL_TYPES else "auth"


Credential = Annotated[
	Annotated[BearerCredential, Tag("bearer")]
	| Annotated[CustomCredential, Tag("custom")]
	| Annotated[OAuth2Credential, Tag("oauth2")]
	| Annotated[BasicCredential, Tag("basic")]
	| Annotated[AuthCredential, Tag("auth")],
	Discriminator(
		_kind,
		custom_error_type="credential_type",
		custom_error_message="a credential needs a 'type': bearer, custom, oauth2, basic, or one "
		"the integration registers in auths",
	),
]
"""One way to authenticate with a service, chosen by ``type``.

`BearerCredential`, `CustomCredential`, `OAuth2Credential`, `BasicCredential`, or an
`AuthCredential` of a type the integration registers. A dict is validated into the model of its
``type``, and fields of other types are refused.
"""
