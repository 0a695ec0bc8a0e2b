"""`MCPToolSource`: one MCP server as the `ToolSource` of an integration.

The server is started (or connected to) on first use, by a task of its own (see `_owner`), and
stays up until `MCPToolSource.aclose`. Its tools are listed once and cached; a
``notifications/tools/list_changed`` (or, on 2026-07-28 connections, a ``subscriptions/listen``
event) marks the cache stale, and the next ``list_tools`` lists again, which agents see at their
next run. A connection that drops is reopened at the next use.

The client is the official MCP SDK's `mcp.Client`: it negotiates the protocol version (the
2026-07-28 era or the initialize handshake), validates structured results against the tools'
output schemas, and stops a stdio server the way the specification describes (close its stdin,
wait, then terminate its process group).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

import anyio

from openmolt_core._support.jsonschema import unchecked_patterns
from openmolt_core.errors import IntegrationError, ToolError
from openmolt_mcp._config import HttpServer, Masker, ServerOptions, StdioServer, secrets_of
from openmolt_mcp._owner import spawn
from openmolt_mcp._tools import MCPTool

if TYPE_CHECKING:
	from mcp import Client
	from mcp.types import CallToolResult

__all__ = [
	"MAX_DESCRIPTION_CHARS",
	"MAX_LISTING_CHARS",
	"MAX_SCHEMA_CHARS",
	"STDERR_BYTES",
	"STDERR_WINDOW",
	"CallCutOff",
	"MCPToolSource",
]

log = logging.getLogger("openmolt.mcp")

MAX_DESCRIPTION_CHARS = 2000
"""A tool description longer than this is cut (it is sent with every prompt)."""

MAX_SCHEMA_CHARS = 64_000
"""A tool whose input schema (as JSON) is longer than this is left out, with a warning: the schema
is sent with every prompt, and no real tool needs one this large."""

MAX_LISTING_CHARS = 1_000_000
"""The most characters one server's tools may take in every prompt (descriptions and schemas, as
JSON): about 250,000 tokens, more than most models' whole context. The tools past it, in the
server's order, are left out with one warning."""

_MAX_PAGES = 100


def _errlog() -> TextIO:
	"""Where a stdio server's stderr goes: this process's, as it is now, when it is a file.

	The SDK's default is the ``sys.stderr`` of the moment it was imported, and the child needs a
	file descriptor: under a notebook, a captured test or an application that replaced
	``sys.stderr`` with a stream of its own, starting the server failed (``fileno``). Then the
	process's original stderr is used, else the server's stderr is discarded.
	"""
	for stream in (sys.stderr, sys.__stderr__):
		try:
			if stream is not None:
				stream.fileno()
				return stream
		except (AttributeError, OSError, ValueError):
			continue
	return open(os.devnull, "w", encoding="utf-8")  # closed with the connection


_RELAY_CHUNK = 64 * 1024

STDERR_BYTES = 256 * 1024
"""The most a stdio server's stderr writes to ours in `STDERR_WINDOW` seconds; past it, what it
prints is read and dropped (a server that logs without end fills no disk and floods no terminal)."""

STDERR_WINDOW = 60.0
"""The window `STDERR_BYTES` is counted over, in seconds."""


def _relay(
	sink: TextIO, redact: Masker, id: str, *, clock: Callable[[], float] = time.monotonic
) -> TextIO:
	"""A pipe for a stdio server's stderr whose lines reach ``sink`` masked and made printable.

	Its stderr was this process's own, the operator's terminal or a service's log, and what it
	prints is outside text: a server given a token in its environment may print it (``auth
	failed for sk-...``), and any server may print what a terminal obeys (an escape that clears
	lines, OSC 52 writing the clipboard, a bidi override). A thread reads the pipe line by line
	(a line longer than 64 KiB in parts), masks each with the server's secrets and those the
	process knows, and a URL's login and secret query values as a log record's
	(`openmolt_core._support.masking.mask_printed`), escapes the characters a
	terminal obeys as every outside text the ``openmolt`` command prints is
	(`openmolt_core.agentfile.printable`: C0 and C1 controls but newline and tab, bidi
	overrides; a CRLF ends a line as a newline), and writes it to ``sink``; it ends when every
	copy of the write end is closed (the server's when it exits, the returned one by the
	connection's close). What the server prints past `STDERR_BYTES` in a `STDERR_WINDOW` is
	drained and dropped, said in one line when it begins and, in the next window or at the end,
	how much was dropped.

	Args:
		sink: Where the lines go (this process's stderr).
		redact: The server's secrets' masker.
		id: The integration id (for the thread's name and the notes).
		clock: Seconds, for the window (tests pass a fake one).
	"""
	import threading

	from openmolt_core._support.masking import mask_printed
	from openmolt_core.agentfile import printable

	read, write = os.pipe()

	def pump() -> None:
		writing = True
		began, used, dropped = clock(), 0, 0

		def write(text: str) -> None:
			nonlocal writing
			try:
				sink.write(text)
				sink.flush()
			except Exception:  # the sink was closed (the program is ending): discard
				writing = False

		def said_dropped() -> None:
			write(
				f"[openmolt: {dropped} bytes the MCP server {id} printed on its stderr were "
				"dropped]\n"
			)

		with open(read, "rb") as pipe:
			while chunk := pipe.readline(_RELAY_CHUNK):
				if not writing:
					continue  # still drained: a server never blocks on a full pipe
				now = clock()
				if now - began >= STDERR_WINDOW:
					if dropped:
						said_dropped()
					began, used, dropped = now, 0, 0
				if used + len(chunk) > STDERR_BYTES:  # drained, dropped: said once a window
					if not dropped:
						write(
							f"[openmolt: the MCP server {id} printed more than "
							f"{STDERR_BYTES // 1024} KiB on its stderr within {STDERR_WINDOW:g} s; "
							"what it prints is dropped until then]\n"
						)
					dropped += len(chunk)
					continue
				used += len(chunk)
				text = chunk.decode("utf-8", errors="replace")
				if text.endswith("\r\n"):
					text = text[:-2] + "\n"
				write(printable(mask_printed(redact(text))))
			if dropped and writing:
				said_dropped()

	threading.Thread(target=pump, name=f"openmolt-mcp-stderr-{id}", daemon=True).start()
	return open(write, "w", encoding="utf-8")


_CLOSE_WAIT = 20.0  # the SDK's stdio shutdown is bounded at about 6 s; HTTP closes faster
_HANDLE = re.compile(r"[^A-Za-z0-9_.-]")
_MAX_HANDLE = 128


class CallCutOff(ToolError):
	"""A call the server was sent but never answered: it timed out, or the connection ended.

	The server may have run it: `openmolt_mcp.MCPTool` says so to the model unless repeating the
	tool is safe.
	"""


@dataclass(eq=False)
class _Connection:
	"""One connection's life: its owner task's signals and, once open, the client."""

	scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
	ready: anyio.Event = field(default_factory=anyio.Event)
	closed: anyio.Event = field(default_factory=anyio.Event)
	client: Client | None = None
	error: BaseException | None = None
	too_long: bool = False

	def cut(self) -> None:
		"""A stdio server wrote a line past its limit (`_lines`): close the connection now.

		The SDK's reader, once it fails, drains the pipe until the server closes it before the
		session sees an end: a server that keeps it open would hold every call to its timeout.
		"""
		self.too_long = True
		self.scope.cancel()


class MCPToolSource:
	"""The tools of one MCP server, for an `openmolt_core.integrations.Integration`.

	Made by `openmolt_mcp.MCP`; you rarely build one yourself.

	Args:
		id: The integration id (for messages).
		options: The server's configuration: a `StdioServer`, an `HttpServer`, or the options of
			an in-process server.
		server: An in-process server (an SDK ``MCPServer`` or low-level ``Server``), used instead
			of a transport; for tests and for servers embedded in the application.
	"""

	def __init__(self, id: str, options: ServerOptions, *, server: Any = None) -> None:
		if server is None and not isinstance(options, (StdioServer, HttpServer)):
			raise TypeError(
				"an MCPToolSource needs a StdioServer, an HttpServer or a server object"
			)
		self.id = id
		self.options = options
		self._server = server
		self.secrets = (
			secrets_of(options) if isinstance(options, (StdioServer, HttpServer)) else frozenset()
		)
		self._redact = Masker(self.secrets)
		self.trust_descriptions = options.trust_descriptions
		"""Whether the user trusts what the server lists (else it taints the runs that read it:
		`openmolt_core.capabilities.sources.ToolSource`)."""
		self._connection: _Connection | None = None
		self._connect_lock = anyio.Lock()
		self._list_lock = anyio.Lock()
		self._tools: tuple[MCPTool, ...] | None = None
		self._stale = False
		# The listing whose labels keys were checked (said once per listing).
		self._labels_checked: tuple[str, ...] | None = None

	@property
	def gates(self) -> dict[str, Any]:
		"""The settings that decide what its tools' calls may do (`openmolt_core.capabilities.sources.source_gates`).

		``inDoubt``, ``labels`` and ``scopes`` as configured: a durable run is kept for a worker
		whose server says the same (``trustDescriptions`` is read as ``trust_descriptions``).
		"""
		options = self.options
		return {"in_doubt": options.in_doubt, "labels": options.labels, "scopes": options.scopes}

	def named(self, id: str) -> None:
		"""Take the id the integration is registered under (its messages and logs name it).

		Args:
			id: The integration's id (``register_integration``'s).
		"""
		self.id = id

	def describe(self) -> str:
		"""What the source connects to: a command line, a URL, or an in-process server."""
		if isinstance(self.options, (StdioServer, HttpServer)):
			return self._redact(self.options.describe())
		return f"in-process server {type(self._server).__name__}"

	def __repr__(self) -> str:
		return f"MCPToolSource({self.id!r}, {self.describe()!r})"

	# the connection ---------------------------------------------------------------------

	@asynccontextmanager
	async def _open(self) -> AsyncIterator[Client]:
		from mcp import Client, StdioServerParameters
		from mcp.types import Implementation

		from openmolt_core.secrets import install_log_redaction

		install_log_redaction()  # the SDK's loggers exist now: mask its records too

		from openmolt_core import __version__

		common: dict[str, Any] = {
			"cache": None,  # this source caches the list itself, and knows when it changes
			"message_handler": self._on_message,
			"client_info": Implementation(name="openmolt", version=__version__),
		}
		async with AsyncExitStack() as stack:
			options = self.options
			if self._server is not None:
				client = Client(self._server, **common)
			elif isinstance(options, StdioServer):
				from mcp.client.stdio import stdio_client

				from openmolt_mcp._lines import encoding

				# The SDK reads each line whole, however long: the codec bounds them (`_lines`).
				params = StdioServerParameters(
					command=options.command,
					args=options.args,
					env=options.env,
					cwd=options.cwd,
					encoding=encoding(options.max_message_bytes),
				)
				errlog = _errlog()
				if errlog is not sys.stderr and errlog is not sys.__stderr__:
					stack.callback(errlog.close)
				else:  # what the server prints passes through: masked, controls escaped
					errlog = _relay(errlog, self._redact, self.id)
					stack.callback(errlog.close)  # the relay ends once the server's copy closes too
				client = Client(stdio_client(params, errlog=errlog), **common)
			else:
				import httpx2
				from mcp.client.streamable_http import streamable_http_client

				assert isinstance(options, HttpServer)
				from openmolt_mcp._guard import GuardedTransport

				http = await stack.enter_async_context(
					httpx2.AsyncClient(
						headers=options.headers,
						timeout=httpx2.Timeout(30.0, read=max(300.0, options.timeout)),
						transport=GuardedTransport(options.allow_internal_hosts),
						# Nothing from the environment, like the core's HTTP client: no proxy
						# (a proxy transport would bypass the guard) and no .netrc password
						# sent to a server someone else may have named.
						trust_env=False,
					)
				)
				client = Client(streamable_http_client(options.url, http_client=http), **common)
			yield await stack.enter_async_context(client)

	async def _own(self, connection: _Connection) -> None:
		"""The owner task: open the connection, hold it until cancelled, close it."""
		from openmolt_mcp._lines import WATCH

		WATCH.set(connection)  # this task's own context: its stdio reader tells this connection
		try:
			# The startup timeout is the scope's deadline until the server is up: a fail_after
			# could not be left while the client's task groups, opened inside it, stay open.
			connection.scope.deadline = anyio.current_time() + self.options.startup_timeout
			with connection.scope:
				async with self._open() as client:
					connection.client = client
					async with anyio.create_task_group() as tg:
						tg.start_soon(self._listen, client)
						connection.scope.deadline = math.inf
						connection.ready.set()
						await anyio.sleep_forever()
			if connection.client is None and connection.scope.cancelled_caught:
				connection.error = connection.error or TimeoutError()
		except Exception as exc:  # reported to whoever waits for the connection
			connection.error = exc
			log.debug("MCP server %s: the connection ended", self.id, exc_info=True)
		finally:
			if connection.too_long:  # said where the operator looks, whoever was waiting
				log.warning("%s", self._too_long())
			connection.client = None
			if self._connection is connection:
				self._connection = None
			connection.ready.set()
			connection.closed.set()

	async def _listen(self, client: Client) -> None:
		"""On 2026-07-28 connections, change events come through a subscription."""
		from mcp_types.version import MODERN_PROTOCOL_VERSIONS

		if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
			return  # older servers send notifications/tools/list_changed unasked
		try:
			async with client.listen(tools_list_changed=True) as events:
				async for _ in events:
					self._stale = True
		except Exception:  # a server without subscriptions: the list is simply never refreshed
			log.debug("MCP server %s: no change subscription", self.id, exc_info=True)

	async def _on_message(self, message: Any) -> None:
		from mcp.types import ToolListChangedNotification

		if isinstance(message, ToolListChangedNotification):
			self._stale = True
		await anyio.lowlevel.checkpoint()

	async def _client(self) -> Client:
		connection = self._connection
		if connection is not None and connection.client is not None:
			return connection.client
		async with self._connect_lock:
			connection = self._connection
			if connection is None:
				connection = self._connection = _Connection()
				self._tools = None  # a new connection lists again
				spawn(lambda: self._own(connection))
			await connection.ready.wait()
			if connection.client is None and connection.too_long:
				raise IntegrationError(self._too_long(), integration=self.id)
			if connection.client is None:
				raise IntegrationError(self._startup_error(connection.error), integration=self.id)
			return connection.client

	def _startup_error(self, error: BaseException | None) -> str:
		what = self.describe()
		leaves = _leaves(error) if error is not None else []
		first = leaves[0] if len(leaves) == 1 else error  # a task group's one error, unwrapped
		if isinstance(first, TimeoutError):
			reason = f"it did not answer within {self.options.startup_timeout:g} s"
		elif isinstance(first, FileNotFoundError):
			reason = "the command was not found; install it or give its full path"
		elif first is None or all(_closed(e) for e in leaves):
			if isinstance(self.options, HttpServer):
				reason = "the connection closed before it answered"
			else:  # a crash at start: its own stderr, passed through, is printed above this
				reason = "it exited before it answered (what it printed says why)"
		else:
			reason = f"{type(first).__name__}: {_message(first)}"
		return self._redact(f"the MCP server ({what}) could not be started: {reason}")

	def _too_long(self) -> str:
		"""What is said of a stdio server that wrote a message longer than its limit."""
		limit = getattr(self.options, "max_message_bytes", 0)
		return self._redact(
			f"the MCP server ({self.describe()}) sent a message longer than {limit} bytes (a "
			"line of its stdout), the most read from it: it was stopped, and is started again "
			"at the next use; if its answers are this large, raise its maxMessageBytes "
			"(max_message_bytes=... in Python)"
		)

	async def _reset(self) -> None:
		"""Drop a broken connection; the next use opens a new one."""
		connection = self._connection
		if connection is not None:
			self._connection = None
			connection.scope.cancel()

	# ToolSource -------------------------------------------------------------------------

	async def list_tools(self) -> Sequence[MCPTool]:
		"""The server's tools (starting it on first use), filtered by the allow and deny lists.

		Raises:
			IntegrationError: The server could not be started or did not list its tools.
		"""
		client = await self._client()
		if self._tools is not None and not self._stale:
			return self._tools
		connection = self._connection
		async with self._list_lock:
			if self._tools is None or self._stale:
				self._stale = False  # a change announced while this lists is listed again
				try:
					with anyio.fail_after(self.options.startup_timeout):
						listed = await _list_all(client)
				except BaseException as exc:
					# The list held is out of date (the server said so): the next use lists again,
					# rather than answer from it.
					self._stale = True
					if not isinstance(exc, Exception):
						raise  # cancelled
					if connection is not None and connection.too_long:
						raise IntegrationError(self._too_long(), integration=self.id) from None
					raise IntegrationError(
						self._redact(
							f"the MCP server ({self.describe()}) did not list its tools: "
							f"{type(exc).__name__}: {_message(exc)}"
						),
						integration=self.id,
					) from None
				self._tools = self._wrap(listed)
		return self._tools

	def _wrap(self, listed: Sequence[Any]) -> tuple[MCPTool, ...]:
		from openmolt_core.secrets import known_secrets, mask

		out: list[MCPTool] = []
		names: set[str] = set()
		handles: set[str] = set()
		total = over = 0  # what the kept tools take in a prompt; the tools past the cap
		secrets = self.secrets | known_secrets()
		for tool in listed:
			if not self.options.admits(tool.name):
				continue
			if mask(tool.name, secrets) != tool.name:
				# A handle is kept as it is (the run's state, its journal's keys, its events):
				# a name that shows a secret of this process never becomes one.
				log.warning(
					"MCP server %s: the tool %r is left out: its name holds a secret",
					self.id,
					mask(tool.name, secrets),
				)
				continue
			if tool.name in names:  # calls go by name: a second entry could never be called
				log.warning(
					"MCP server %s lists the tool %r twice; the first is kept", self.id, tool.name
				)
				continue
			names.add(tool.name)
			handle = _handle(tool.name)
			if handle in handles:  # a safe name that is another's made-safe form, hash and all
				log.warning(
					"MCP server %s: the tool %r is left out: its handle %r is taken",
					self.id,
					tool.name,
					handle,
				)
				continue
			handles.add(handle)
			annotations = tool.annotations
			remote = isinstance(self.options, HttpServer)
			# The annotations are the server's claims: they open a gate (a read scope, no
			# outbound label) only for a server the user trusts, as the specification asks.
			trusted = self.options.trust_descriptions
			claims_read = bool(annotations and annotations.read_only_hint)
			labels = configured = self.options.labels_of(tool.name)
			if labels is None:
				labels = _hinted(annotations, remote=remote, trusted=trusted)
			# Whether a call in doubt may run again blindly is a decision on the tool's use too:
			# an untrusted server's claim (a write it calls idempotent by mistake) would repeat
			# its effect, so the claims count only for a server the user trusts; otherwise a
			# person is asked (or the config's inDoubt says).
			claims_local = (
				trusted
				and configured is None
				and _hinted(annotations, remote=remote, trusted=True) == _UNTRUSTED
			)
			schema = dict(tool.input_schema or {})
			schema.setdefault("type", "object")
			size = len(json.dumps(schema, ensure_ascii=False, default=str))
			if size > MAX_SCHEMA_CHARS:  # sent with every prompt, like the description
				log.warning(
					"MCP server %s: the tool %r is left out: its input schema is %d characters, "
					"more than the %d a tool's schema may take in every prompt",
					self.id,
					tool.name,
					size,
					MAX_SCHEMA_CHARS,
				)
				continue
			schema = _tuples_2020(schema)  # a draft-7 tuple (zod writes one): its 2020-12 form
			output = _tuples_2020(tool.output_schema) if tool.output_schema else None
			problem = _schema_problem(schema, output)
			if problem is not None:  # a provider refuses a request that carries it: every run
				log.warning(
					"MCP server %s: the tool %r is left out: its %s",
					self.id,
					tool.name,
					problem,
				)
				continue
			# A pattern no regex engine supports is said now, at binding, not at the first call.
			unchecked_patterns(schema, f"MCP tool {tool.name!r}: input")
			description = (
				tool.description or tool.title or (annotations and annotations.title) or ""
			)
			if len(description) > MAX_DESCRIPTION_CHARS:
				description = description[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"
			takes = len(description) + size
			takes += len(json.dumps(output, ensure_ascii=False, default=str)) if output else 0
			if over or total + takes > MAX_LISTING_CHARS:
				over += 1
				continue
			total += takes
			out.append(
				MCPTool(
					handle=handle,
					description=description,
					input_schema=schema,
					output_schema=output,
					scopes=tuple(self.options.scopes_of(tool.name, trusted and claims_read)),
					name=tool.name,
					source=self,
					labels=None if labels is None else frozenset(labels),
					repeatable=trusted
					and (claims_read or bool(annotations and annotations.idempotent_hint)),
					claims_local=claims_local,
					declared_in_doubt=self.options.in_doubt_of(tool.name),
				)
			)
		every = tuple(t.name for t in listed)
		if every != self._labels_checked:  # said once per listing, not at every run's
			self._labels_checked = every
			_unmatched_labels(self.id, self.options, every)
		if over:
			log.warning(
				"MCP server %s: %d of its %d tools are left out: the others take the %d "
				"characters a server's tools may take in every prompt; choose the ones agents "
				"need with includeTools or excludeTools",
				self.id,
				over,
				len(out) + over,
				MAX_LISTING_CHARS,
			)
		return tuple(out)

	async def call(self, name: str, arguments: dict[str, Any], *, tool: str) -> CallToolResult:
		"""Call a tool on the server, bounded by the configured timeout.

		Args:
			name: The server's name for the tool.
			arguments: The validated input.
			tool: The tool's handle, for errors.

		Raises:
			ToolError: The server failed, refused or did not answer in time, or wrote a
				message longer than its limit.
			CallCutOff: The call was sent and no answer came (a timeout, a closed connection).
		"""
		try:
			client = await self._client()
		except IntegrationError as exc:
			raise ToolError(str(exc), tool=tool, retryable=True) from None
		connection = self._connection
		try:
			return await self._call(client, name, arguments, tool)
		except ToolError:
			if connection is None or not connection.too_long:
				raise
			raise ToolError(self._too_long(), tool=tool) from None  # it was reset: not retried

	async def _call(
		self, client: Client, name: str, arguments: dict[str, Any], tool: str
	) -> CallToolResult:
		from mcp import MCPError
		from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

		timeout = self.options.timeout
		try:
			with anyio.fail_after(timeout + 1.0):
				return await client.call_tool(name, arguments, read_timeout_seconds=timeout)
		except TimeoutError:
			raise CallCutOff(
				f"the MCP server did not answer within {timeout:g} s", tool=tool, retryable=True
			) from None
		except MCPError as exc:
			if exc.code == CONNECTION_CLOSED:
				await self._reset()
				raise CallCutOff(
					"the MCP server closed the connection; it is started again at the next call",
					tool=tool,
					retryable=True,
				) from None
			if exc.code == REQUEST_TIMEOUT:
				raise CallCutOff(
					f"the MCP server did not answer within {timeout:g} s", tool=tool, retryable=True
				) from None
			raise ToolError(
				self._redact(f"the MCP server refused the call: {exc.message} (code {exc.code})"),
				tool=tool,
				details=self._redact.deep(exc.data) if exc.data is not None else None,
			) from None
		except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
			await self._reset()
			raise CallCutOff(
				"the connection to the MCP server was lost; it is opened again at the next call",
				tool=tool,
				retryable=True,
			) from None
		except Exception as exc:  # an invalid result (structured content off its schema)...
			raise ToolError(
				self._redact(f"the MCP call failed: {type(exc).__name__}: {_message(exc)}"),
				tool=tool,
			) from None

	async def aclose(self) -> None:
		"""Stop the server (or close the HTTP session); a later use starts it again."""
		connection = self._connection
		self._connection = None
		self._tools = None
		if connection is None:
			return
		connection.scope.cancel()
		with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_WAIT):
			await connection.closed.wait()


def _unmatched_labels(server: str, options: ServerOptions, names: Sequence[str]) -> None:
	"""Say each ``labels`` key of a server's config that matches none of the tools it lists.

	Such a key labels nothing: a misspelt ``read_inbox`` for the server's ``inbox`` leaves that
	tool without the ``private`` it was meant to have, so an agent that reads it and posts does
	not hold the lethal trifecta, and its tainted runs post unasked. An `Integration`'s table
	refuses such a key when it is defined; a server's tools are known only when it lists them.

	Args:
		server: The integration's id.
		options: The server's config.
		names: The names of every tool the server listed (before ``includeTools``).
	"""
	import fnmatch

	for key in options.labels or {}:
		if not any(fnmatch.fnmatchcase(name, key) for name in names):
			shown = ", ".join(repr(n) for n in names[:20]) + (
				f" and {len(names) - 20} more" if len(names) > 20 else ""
			)
			log.warning(
				"MCP server %s: labels: %r names none of its tools, so it labels nothing (a "
				"key is the server's name for a tool, or a pattern); its tools: %s",
				server,
				key,
				shown or "none",
			)


def _handle(name: str) -> str:
	"""A tool's handle: its name when that is safe, else a safe form that only it gets.

	A name of letters, digits, ``_``, ``.`` and ``-``, at most `_MAX_HANDLE` long, is its own
	handle. Any other name (a space, unicode, too long) is made safe and cut, and ends with a
	digest of the whole name: ``a b`` and ``a:b`` are two handles, each the same at every listing
	whatever the order, so a run resumed against a list that was reordered or grew still calls
	the tool it began with.

	Args:
		name: The server's name for the tool.
	"""
	safe = _HANDLE.sub("_", name)
	if safe == name and 0 < len(name) <= _MAX_HANDLE:
		return name
	digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
	return f"{safe[: _MAX_HANDLE - len(digest) - 1]}_{digest}"


_VALUES = frozenset({"enum", "const", "default", "examples"})
"""Keywords whose value is data, not a schema: a ``{"items": [...]}`` there stays as it is."""


def _tuples_2020(schema: Any) -> Any:
	"""A schema with each draft-7 tuple in its 2020-12 form (the schema itself when it has none).

	Draft 7 (which servers built with zod declare) writes a tuple as ``"items": [...]``, the
	items after it as ``additionalItems``; 2020-12, the dialect tools are sent in and checked
	against (`_schema_problem`), as ``prefixItems`` and ``items``. A tool with such a tuple is a
	valid tool, not one to leave out.

	Args:
		schema: A schema, or any value inside one.
	"""
	if isinstance(schema, list):
		items = [_tuples_2020(item) for item in schema]
		return schema if all(a is b for a, b in zip(items, schema, strict=True)) else items
	if not isinstance(schema, dict):
		return schema
	out = {k: v if k in _VALUES else _tuples_2020(v) for k, v in schema.items()}
	if isinstance(out.get("items"), list) and "prefixItems" not in out:
		out["prefixItems"] = out.pop("items")
		if "additionalItems" in out:
			out["items"] = out.pop("additionalItems")
	changed = out.keys() != schema.keys() or any(out[k] is not schema[k] for k in schema)
	return out if changed else schema


def _schema_problem(given: dict[str, Any], output: dict[str, Any] | None) -> str | None:
	"""What makes a listed tool's input or output schema no JSON Schema (None: both are).

	A tool's schemas are sent with every prompt, and a provider refuses the whole request when
	one is invalid (``{"type": 5}``, ``"properties": "x"``): one such tool would fail every run
	of every agent that may call it, at its first model call.

	Args:
		given: The input schema.
		output: The output schema, if any.
	"""
	from openmolt_core._support.metaschema import check_schema

	for which, schema in (("input schema", given), ("output schema", output)):
		if schema is not None and (problems := check_schema(schema)):
			more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
			return f"{which} is no valid JSON Schema: {problems[0]}{more}"
	return None


def _hinted(annotations: Any, *, remote: bool, trusted: bool) -> frozenset[str] | None:
	"""A tool's labels from the server's annotations, when the config declares none.

	The annotations are the server's own claims, so they never make a result trusted: every
	annotated tool is ``untrusted`` (what it returns is data someone else may have written: a
	closed-world tool reads its database's rows or its folder's files, which others wrote), and
	only the config's ``labels`` entry (``[]``) says otherwise. A claim may only spare
	``outbound``, and only on a server the user trusts (``trustDescriptions``; the specification:
	annotations are untrusted unless they come from a trusted server): a tool such a server marks
	closed-world (``openWorldHint: false``) on a stdio or in-process server sends nothing out; on
	a remote server (Streamable HTTP), which receives every argument, it is ``outbound`` too. Any
	other annotated tool (``openWorldHint`` true, or absent, which the specification reads as
	true, or a claim of an untrusted server) may send its arguments anywhere, ``readOnlyHint`` or
	not (a fetcher "only reads", yet its URL carries data out), so it is ``untrusted`` and
	``outbound``. A tool without annotations declares nothing (None): the agent's taint policy
	treats it as unknown, ``untrusted`` and ``outbound`` by default, and names it in the
	trifecta warning.

	Args:
		annotations: The tool's annotations, or None.
		remote: Whether the server is reached over the network.
		trusted: Whether the user trusts the server's listing (``trustDescriptions``).
	"""
	if annotations is None:
		return None
	if trusted and annotations.open_world_hint is False and not remote:
		return _UNTRUSTED
	return _BOTH


_UNTRUSTED: frozenset[str] = frozenset(("untrusted",))
_BOTH: frozenset[str] = frozenset(("untrusted", "outbound"))


async def _list_all(client: Client) -> list[Any]:
	tools: list[Any] = []
	cursor: str | None = None
	for _ in range(_MAX_PAGES):
		page = await client.list_tools(cursor=cursor)
		tools.extend(page.tools)
		cursor = page.next_cursor
		if not cursor:
			break
	return tools


def _leaves(exc: BaseException) -> list[BaseException]:
	"""The exceptions inside (nested) exception groups, or ``exc`` itself."""
	if isinstance(exc, BaseExceptionGroup):
		return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
	return [exc]


def _closed(exc: BaseException) -> bool:
	"""Whether ``exc`` is the SDK's "Connection closed" (the server went away)."""
	from mcp import MCPError
	from mcp_types.jsonrpc import CONNECTION_CLOSED

	return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED


def _message(exc: BaseException) -> str:
	from mcp import MCPError

	if isinstance(exc, MCPError):
		return exc.message
	if isinstance(exc, BaseExceptionGroup):
		return "; ".join(_message(e) for e in exc.exceptions)
	return str(exc) or type(exc).__name__
