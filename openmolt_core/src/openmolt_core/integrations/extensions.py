"""What an integration can add to the HTTP engine: Liquid filters, body encoders, checks, auths.

The engine holds only the generic pipeline (render, encode, authenticate, send, decode). What one
vendor needs lives in that vendor's integration and is registered on its `Integration`:

- ``filters``: Liquid filters its templates may use (Gmail's ``rfc2822`` builds a MIME message);
- ``encoders``: request formats by name, a `BodyEncoder` each (Google's ``multipart-related``
  upload; an encoder under a built-in name, such as Twilio's ``form-data`` that repeats list keys,
  replaces the built-in for that integration);
- ``response_checks``: `ResponseCheck` functions run on every decoded 2xx JSON reply, for
  services that report failures inside a 200 (Slack's ``"ok": false``; `graphql_errors` for
  any GraphQL API);
- ``throttle_checks``: `ThrottleCheck` functions run on every 2xx JSON reply, for services
  that turn a request away for a rate limit inside a 200 (Shopify's GraphQL ``THROTTLED``): the
  engine retries such a reply like a 429, whatever the method, since nothing was applied;
- ``auths``: credential types, an `AuthFactory` each returning an ``httpx.Auth`` (AWS
  Signature V4 for S3); a factory under a built-in type (``oauth2``) replaces it.

```python
def shout(value: object) -> str:
	return str(value).upper()


Integration(name="Loud", filters={"shout": shout}, tools=[...])  # "{{ input.text | shout }}"
```

Pieces for writing them: `form_encoder` (a ``form-data`` encoder with another list style),
`multipart_body` and `flatten` (the built-in multipart and form encodings), `checked_media_type`,
`error_messages`, and `openmolt_core.integrations.credentials.render_value` for auths.

The built-in request formats are ``json``, ``form-data``, ``multipart``, ``openapi-form``,
``openapi-multipart``, ``text`` and ``binary`` (`BUILTIN_FORMATS`); the built-in credential types are ``bearer``, ``custom``, ``oauth2`` and
``basic``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from openmolt_core.integrations._decode import error_messages, graphql_errors
from openmolt_core.integrations._encode import (
	ArrayStyle,
	BodyEncoder,
	EncodedBody,
	EncodeRequest,
	checked_media_type,
	flatten,
	form_encoder,
	multipart_body,
)

if TYPE_CHECKING:
	import httpx

__all__ = [
	"BUILTIN_FORMATS",
	"ArrayStyle",
	"AuthFactory",
	"BodyEncoder",
	"EncodeRequest",
	"EncodedBody",
	"LiquidFilter",
	"ResponseCheck",
	"ThrottleCheck",
	"checked_media_type",
	"error_messages",
	"flatten",
	"form_encoder",
	"graphql_errors",
	"multipart_body",
]

BUILTIN_FORMATS = (
	"json",
	"form-data",
	"multipart",
	"openapi-form",
	"openapi-multipart",
	"text",
	"binary",
)
"""The request formats the engine encodes itself (see `openmolt_core.integrations.model.RequestFormat`)."""

LiquidFilter = Callable[..., Any]
"""A Liquid filter: called with the value left of the ``|`` and the filter's arguments.

It raises `openmolt_core.errors.ToolError` for a value it cannot take; the message reaches the
model, so it says what to send instead.
"""


class ResponseCheck(Protocol):
	"""Finds a failure a service reports inside a 2xx JSON reply."""

	def __call__(self, value: Any) -> str | None:
		"""The failure's message, or None when the reply is a success.

		Args:
			value: The decoded reply.
		"""
		...


class ThrottleCheck(Protocol):
	"""Finds a 2xx JSON reply in which the service turned the request away for a rate limit.

	Only for a reply that applied nothing (the service ran no part of the request), since the
	engine then sends the same request again whatever its method.
	"""

	def __call__(self, value: Any) -> float | None:
		"""Seconds to wait before sending again, or None when the reply is not a throttle.

		0 asks for the retry policy's backoff.

		Args:
			value: The decoded reply.
		"""
		...


class AuthFactory(Protocol):
	"""Builds the ``httpx.Auth`` of a credential type (called once per agent and credential)."""

	def __call__(
		self,
		credential: Any,
		config: Mapping[str, Any],
		iid: str,
		*,
		on_token_refresh: Callable[[dict[str, Any]], Any] | None,
		http: Callable[[], httpx.AsyncClient],
	) -> httpx.Auth:
		"""Build the auth.

		Args:
			credential: The integration's credential setup of this type.
			config: The agent's credential config (secrets included).
			iid: The integration id, for messages.
			on_token_refresh: Called with the new config after a token refresh, if the auth
				refreshes tokens.
			http: Returns the shared client (for token requests).

		Raises:
			IntegrationError: A library the auth needs is not installed.
		"""
		...
