"""A remote A2A agent as a tool: `remote_agent` (re-exported by `openmolt_serve.a2a`).

```python
from openmolt_serve.a2a import remote_agent

travel = remote_agent("https://travel.example/a2a/Planner", token=os.environ["PLANNER_TOKEN"])
agent = om.create_agent(name="Assistant", model=..., tools=[travel])
```

The tool sends the model's ``message`` with the official ``a2a-sdk`` client (the agent card is
read first, so the remote's own interface and version are used) and returns the task's end:
``{"status": "completed", "text", "data", "taskId", "contextId"}``. A remote that asks a
question returns ``status: "input-required"`` with its ``question``; the model answers by calling
the tool again with that ``taskId`` (and ``contextId``). Its words come from outside and the
message leaves the process: the tool is labelled ``untrusted`` and ``outbound``
(`openmolt_core.taint`). The token is sent as a bearer header only: never to the model, never
in an error; a key ``url`` carries (``?code=``, ``?sig=``: `openmolt_core.secrets.url_secrets`)
and its password are secrets of every instance too, and the description, the tool's repr and
its errors (the SDK's text included) name the URL without them.

The remote agent knows one caller, this process's token, whoever the run acts for: a conversation
it holds (a ``contextId``, a ``taskId`` waiting for an answer) is the end user's whose run the
tool gave its ids to (`openmolt_core.tools.CallingRun.user`; None, the operator). A run for
anyone else that names them (a model told them, or shown them in a shared chat) is refused
before anything is sent, as an unknown file reference is. An id the tool never gave, or no longer
remembers, is refused too: it could be anyone's (a guess, one from another process or from before
a restart), so the model is told to start a new conversation by leaving the ids out. The ids are
remembered in this process, `MAX_KNOWN` of them: a conversation does not survive a restart.

The card is the remote's word: the interface URL it names is where the SDK sends the message.
The application chose ``url``'s origin, so that one is reached as given (a sidecar on
127.0.0.1 too); any other origin a card names is checked by the core's SSRF guard (no loopback,
private, link-local or metadata address unless ``allow_internal_hosts`` lists it) and gets no
token: the token goes to the origin it was given for. Each answer is read up to
``max_response_bytes`` once decompressed (a larger one is a tool error, read no further).
"""

from __future__ import annotations

import re
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import httpx
from a2a.client import A2AClientError, ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import get_data_parts, get_text_parts
from a2a.types import Message, Part, Role, SendMessageRequest, Task, TaskState

from openmolt_core._support.masking import mask, mask_urls, masked_excerpt, shown_url, urls_secrets
from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.functiontools import FunctionTool
from openmolt_core.integrations._body import ACCEPT_ENCODING, read_body
from openmolt_core.integrations._ssrf import SsrfGuard
from openmolt_core.secrets import register_key, url_secrets
from openmolt_core.tools import ToolContext
from openmolt_serve._recent import crowded

__all__ = ["MAX_KNOWN", "REMOTE_INPUT", "remote_agent"]

MAX_KNOWN = 10_000
"""The most task and context ids one remote agent's tool remembers the end user of; past it the
oldest of the user holding the most is forgotten (then refused, as an id from another process
is), an id whose task waits for its user's answer last: one user's many runs, or many users'
of one conversation each, never push out another user's waiting conversation."""

REMOTE_INPUT: dict[str, Any] = {
	"type": "object",
	"properties": {
		"message": {"type": "string", "description": "What to ask the remote agent."},
		"taskId": {
			"type": "string",
			"description": "To answer the remote agent's question: the taskId it returned.",
		},
		"contextId": {
			"type": "string",
			"description": "To continue an earlier conversation: the contextId it returned.",
		},
	},
	"required": ["message"],
	"additionalProperties": False,
}
"""The tool's input."""

_STATES = {
	TaskState.TASK_STATE_COMPLETED: "completed",
	TaskState.TASK_STATE_FAILED: "failed",
	TaskState.TASK_STATE_CANCELED: "canceled",
	TaskState.TASK_STATE_REJECTED: "rejected",
	TaskState.TASK_STATE_INPUT_REQUIRED: "input-required",
	TaskState.TASK_STATE_AUTH_REQUIRED: "auth-required",
	TaskState.TASK_STATE_WORKING: "working",
	TaskState.TASK_STATE_SUBMITTED: "submitted",
}


def remote_agent(
	url: str,
	*,
	handle: str | None = None,
	description: str | None = None,
	token: str | None = None,
	timeout: float = 300.0,
	transport: httpx.AsyncBaseTransport | None = None,
	allow_internal_hosts: Sequence[str] = (),
	max_response_bytes: int | None = None,
) -> FunctionTool:
	"""A tool that asks a remote A2A agent and returns how its task ended.

	Args:
		url: The agent's base URL (its card is at ``<url>/.well-known/agent-card.json``).
		handle: The tool's handle (default: ``a2a_<host>``; the card's name is not known yet).
		description: What it does, for the model (default: names the URL; say what the
			remote agent is good at).
		token: The bearer token the remote agent wants, if any (read it from the environment).
		timeout: Seconds one exchange may take.
		transport: An httpx transport (tests; default: the network).
		allow_internal_hosts: Internal hosts another origin the agent card names may be
			(host names, ``*.corp.example``, networks such as ``10.20.0.0/16``); ``url``'s own
			origin needs no entry.
		max_response_bytes: The largest answer read from the remote (its card, its JSON-RPC
			reply), once decompressed; a larger one is a tool error, read no further (None: the
			HTTP tools' cap, `openmolt_core.integrations.http.MAX_RESPONSE_BYTES`, 8 MiB).

	Raises:
		ConfigurationError: ``url`` is not an http(s) URL, or ``max_response_bytes`` is not
			positive.
	"""
	if max_response_bytes is None:
		from openmolt_core.integrations.http import MAX_RESPONSE_BYTES  # a heavy module: lazily

		max_response_bytes = MAX_RESPONSE_BYTES
	if max_response_bytes < 1:
		raise ConfigurationError(
			f"remote_agent: max_response_bytes must be at least 1, got {max_response_bytes}"
		)
	if not re.match(r"^https?://[^/\s]+", url or ""):
		# Named as every error names a URL: a password, a ``?code=`` masked (read without a
		# scheme too: ``agent.example/a2a?code=KEY`` is what was meant).
		given = str(url or "")
		found = frozenset({*url_secrets(given), *url_secrets(f"//{given}")})
		raise ConfigurationError(
			f"remote_agent: url must be an http(s) URL, got {masked_excerpt(given, 200, found)!r}"
		)
	host = re.sub(r"[^A-Za-z0-9]+", "_", httpx.URL(url).host).strip("_")
	name = handle or f"a2a_{host}"
	shown = shown_url(url)  # how the description and errors name it: no password, key masked
	hidden = frozenset({*url_secrets(url), *([token] if token else [])})
	guard = SsrfGuard(internal=allow_internal_hosts)  # checks the hosts before any call
	owners = _Known()  # an id the remote gave: whose run got it

	async def ask(input: dict[str, Any], context: ToolContext) -> dict[str, Any]:
		user = context.run.user if context.run is not None else None
		_check_owner(owners, input, user)
		message = Message(
			message_id=uuid.uuid4().hex,
			role=Role.ROLE_USER,
			parts=[Part(text=str(input["message"]))],
			task_id=str(input.get("taskId") or ""),
			context_id=str(input.get("contextId") or ""),
		)
		# A client of its own, not the instance's shared one: the SDK sets its A2A-Version
		# header on the client it is given, and the bearer token must go to this host only.
		inner = transport or httpx.AsyncHTTPTransport()
		sending = _Origins(url, token, guard, inner, max_bytes=max_response_bytes)
		try:
			async with httpx.AsyncClient(timeout=timeout, transport=sending) as http:
				factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False))
				client = await factory.create_from_url(url)
				last: Any = None
				async for response in client.send_message(SendMessageRequest(message=message)):
					last = response
		except ToolError as exc:  # the guard refused the address an agent card named
			raise ToolError(f"the A2A agent at {shown}: {sending.masked(exc.message)}") from None
		except (A2AClientError, httpx.HTTPError, ValueError) as exc:
			text = sending.masked(str(exc))  # the SDK's text names the URL it fetched, whole
			raise ToolError(f"the A2A agent at {shown} did not answer: {text}") from None
		if last is None:
			raise ToolError(f"the A2A agent at {shown} sent nothing back")
		out = _reply(last.message, "completed") if last.HasField("message") else _task(last.task)
		_keep_owner(owners, out, user)
		return out

	tool = FunctionTool(
		handle=name,
		description=description or f"Ask the remote A2A agent at {shown}.",
		function=ask,
		input_schema=REMOTE_INPUT,
		labels=["untrusted", "outbound"],
		timeout=timeout,
	)
	# Masked by every instance and in the logs while the tool lives: the token, and a key the URL
	# carries (Azure Functions' ``?code=``, a signature), which the description and errors name.
	register_key(ask, *hidden)
	return tool


_IDS = ("taskId", "contextId")


class _Known(OrderedDict[str, str | None]):
	"""The ids the remote gave, by whose run got them, oldest first; and those that wait.

	``waiting``: the ids of a task that waits for its user's answer (``input-required``).
	"""

	def __init__(self) -> None:
		super().__init__()
		self.waiting: set[str] = set()


def _check_owner(
	owners: OrderedDict[str, str | None], given: dict[str, Any], user: str | None
) -> None:
	"""Refuse an id this tool did not give a run for ``user`` (see the module).

	Unknown is unsafe: an id the tool never gave (a guess, another process's, one from before a
	restart) or has forgotten may be another user's conversation, so it is refused as one is.

	Raises:
		ToolError: ``taskId`` or ``contextId`` is not a conversation this tool gave ``user``.
	"""
	for field in _IDS:
		value = str(given.get(field) or "")
		if value and (value not in owners or owners[value] != user):
			raise ToolError(
				f"{field} {value[:80]!r} names no conversation of this run with the remote agent "
				"(or one from before a restart); leave taskId and contextId out to start a new "
				"conversation"
			)


def _keep_owner(
	owners: OrderedDict[str, str | None], out: dict[str, Any], user: str | None
) -> None:
	"""Remember whose run the remote's ids were given to (`MAX_KNOWN` of them).

	Past the bound the oldest id of the user holding the most goes (`crowded`): a forgotten id
	is refused, so one user whose runs gather many ids must not end another's conversations.
	The ids of a task that waits for its user's answer (`_Known.waiting`) go last: many users
	of one conversation each push out each other's, not one that waits.
	"""
	waiting = owners.waiting if isinstance(owners, _Known) else set()
	asks = out.get("status") == "input-required"
	for field in _IDS:
		value = out.get(field)
		if isinstance(value, str) and value:
			owners[value] = user
			owners.move_to_end(value)
			if asks:
				waiting.add(value)
			else:
				waiting.discard(value)
	while len(owners) > MAX_KNOWN:
		oldest = crowded(owners, owners.__getitem__, spare=waiting.__contains__)
		if oldest is None:  # every id waits: the oldest of the user holding the most
			oldest = crowded(owners, owners.__getitem__)
		if oldest is None:  # pragma: no cover - a map past its bound holds a key
			return
		del owners[oldest]
		waiting.discard(oldest)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
	port = url.port or (443 if url.scheme == "https" else 80)
	return (url.scheme, url.host.lower().rstrip("."), port)


class _Origins(httpx.AsyncBaseTransport):
	"""Sends ``url``'s origin as given, with the token; any other origin checked, without it.

	Every answer is read here, up to ``max_bytes`` once decompressed (the core's bounded reader:
	`openmolt_core.integrations._body.read_body`), and handed on whole: the remote is another
	party, and a reply of gigabytes (or a small gzip body that inflates to them) would otherwise
	be read into memory and passed to the model.

	Args:
		url: The remote agent's URL, as the application gave it.
		token: The bearer token, for that origin only.
		guard: The SSRF guard of every other origin (an agent card's interface URL).
		inner: The transport that sends.
		max_bytes: The largest decoded answer read.
	"""

	def __init__(
		self,
		url: str,
		token: str | None,
		guard: SsrfGuard,
		inner: httpx.AsyncBaseTransport,
		*,
		max_bytes: int,
	) -> None:
		self.origin = _origin(httpx.URL(url))
		self.token = token
		self.hidden: set[str] = {*url_secrets(url), *([token] if token else [])}
		"""What an error must not show: the token, and the secrets of every URL asked for or
		named by an answer (the card's interface URL may carry a key of its own)."""
		self.guard = guard
		self.inner = inner
		self.max_bytes = max_bytes

	async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
		"""Send one request (see the class)."""
		self.hidden |= urls_secrets(str(request.url))  # before the guard: its refusal names it
		if _origin(request.url) == self.origin:
			if self.token:
				request.headers["Authorization"] = f"Bearer {self.token}"
		else:
			request.headers.pop("Authorization", None)
			request = await self.guard(request)
		request.headers["Accept-Encoding"] = ACCEPT_ENCODING  # what the reader bounds
		answer = await self.inner.handle_async_request(request)
		streamed = httpx.Response(
			answer.status_code, headers=answer.headers, stream=answer.stream, request=request
		)
		body = await read_body(streamed, self.max_bytes)  # closes it; ToolError past the cap
		if request.url.path.endswith(".json"):  # the card: every URL it brings (its interfaces)
			self.hidden |= urls_secrets(body.decode(errors="replace"))
		kept = [
			(k, v)
			for k, v in answer.headers.multi_items()
			if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
		]
		return httpx.Response(
			answer.status_code,
			headers=kept,
			content=body,
			request=request,
			extensions=answer.extensions,
		)

	def masked(self, text: str) -> str:
		"""An error's text without the token and the secrets of the URLs met, nor of any it names.

		Args:
			text: The error's text (the SDK's, the guard's).
		"""
		shown: str = mask_urls(mask(text, frozenset(self.hidden)))  # text in, text out
		return shown

	async def aclose(self) -> None:
		"""Close the inner transport."""
		await self.inner.aclose()


def _reply(message: Message, status: str) -> dict[str, Any]:
	return {
		"status": status,
		"text": "\n".join(get_text_parts(message.parts)),
		"data": list(get_data_parts(message.parts)),
		"contextId": message.context_id,
	}


def _task(task: Task) -> dict[str, Any]:
	status = _STATES.get(task.status.state, "unknown")
	out: dict[str, Any] = {"status": status, "taskId": task.id, "contextId": task.context_id}
	said = "\n".join(get_text_parts(task.status.message.parts))
	texts = [t for artifact in task.artifacts for t in get_text_parts(artifact.parts)]
	data = [d for artifact in task.artifacts for d in get_data_parts(artifact.parts)]
	if status == "input-required":
		out["question"] = said
	else:
		out["text"] = "\n".join(texts) or said
	if data:
		out["data"] = data
	return out
