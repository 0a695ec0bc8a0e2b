"""Every answer of a served surface with its security headers: the one middleware.

The run viewer (`openmolt_ui.app`) and the trigger server (`openmolt_serve.server`) wrap their
whole application in `SecuredResponses`, outside every route and guard, so a refusal (the
viewer's ``403``, a ``401`` of a webhook), a ``404`` of no route and a page all carry
`openmolt_core._support.webheaders.SECURITY_HEADERS`, and a route added later cannot forget them.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from openmolt_core._support.webheaders import PAGE_POLICY, secured

__all__ = ["SecuredResponses"]


class SecuredResponses:
	"""ASGI middleware: each response gets the security headers it lacks (`secured`).

	Args:
		app: The application whose responses it secures.
		policy: The content security policy of a response that sets none (default: one that
			loads nothing, `PAGE_POLICY`).
	"""

	def __init__(self, app: ASGIApp, *, policy: str = PAGE_POLICY) -> None:
		self.app = app
		self.policy = policy

	async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
		"""Pass the request on; add the headers to the response's start."""
		if scope["type"] != "http":
			await self.app(scope, receive, send)
			return

		async def send_secured(message: Message) -> None:
			if message["type"] == "http.response.start":
				headers = secured(message.get("headers", []), policy=self.policy)
				message = {**message, "headers": headers}
			await send(message)

		await self.app(scope, receive, send_secured)
