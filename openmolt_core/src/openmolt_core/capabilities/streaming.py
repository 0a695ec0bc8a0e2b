"""Streaming: a step's model call streamed to the run's listeners while the reply arrives.

Every agent of ``create_agent`` has the capability (`Streaming`, defined with the light
capabilities in `openmolt_core.capabilities`): its `Streaming.send_model` answers None while
nothing listens to ``text:delta`` or ``command:ready``, and the call is the plain ``generate`` it
always was (the cost of streaming for a run that does not stream is two dictionary lookups per
step, and this module is not loaded). Otherwise the call streams (`stream_reply`: the provider's
``stream``, else its ``generate``), a `ReplyDecoder` reads the reply as it comes, and what it
reports becomes events. They are previews: unnumbered (``seq`` 0), not journaled, so a step
answered from the journal does not stream again; the reply is parsed and run, or refused, only
once it is complete, as without streaming. ``agent.stream()`` (`openmolt_core.runstream`) is the
way to read them.

A finish that a capability checks before the run may end with it (``before_finish``: an output
guardrail, which may refuse, rewrite or stop it) is not previewed: neither its fields'
``text:delta`` nor its ``command:ready``. A preview cannot be taken back, so what the guardrail
refuses would already have reached the listeners (a chat, an AG-UI client); the run's ``finish``
then carries what it let through. Likewise a question, while a capability checks the words a
person reads (``before_words``: an output guardrail made with ``message=True``): neither its
``message``'s ``text:delta`` nor its ``command:ready``, and a call's ``command:ready`` comes
without its ``reason``; the human-input handler, ``state.pending`` and the ``humanInput`` event
carry the question it let through.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openmolt_core._support.masking import mask_deep
from openmolt_core.capabilities import Streaming
from openmolt_core.capabilities._replydecoder import ReplyDecoder, TextPiece
from openmolt_core.errors import ProviderError
from openmolt_core.events import Event
from openmolt_core.hooks import ModelSend as Send
from openmolt_core.llm import ModelResponse
from openmolt_core.secrets import StreamMask, environment_secrets_now, live_secrets

if TYPE_CHECKING:
	from collections.abc import AsyncIterator, Awaitable, Callable, Iterable

	from openmolt_core._execute import RunContext
	from openmolt_core.envelope import FittedSchema
	from openmolt_core.llm import LLMProvider, ModelRequest
	from openmolt_core.streaming import StreamChunk

__all__ = ["CommandReadyEvent", "Send", "Streaming", "TextDeltaEvent", "sender", "stream_reply"]


@dataclass(slots=True, kw_only=True)
class TextDeltaEvent(Event):
	"""New text of the reply while it streams (a preview: see the module docstring).

	Args:
		index: The command's position in the reply (0-based).
		field: ``humanMessage`` or ``output`` of ``finish``, or ``message`` of
			``requestHumanInput``.
		text: The new text. The deltas of one field concatenate to its final value; an
			``output`` that is not a string comes as its JSON source text (``raw``). A field
			ends with an empty delta, which a listener never receives: its emitter then sends
			the last word it held while it could still be a URL's login
			(`openmolt_core._support.loginholds`). A capability that emits its own deltas
			ends each field so, or its last word reaches no listener.
		raw: Whether ``text`` is JSON source rather than a string's content.
		model: The model writing the reply (``provider:model``).
		attempt: Which model call of the step writes it (1 for the first). A call that failed
			and is made again (a retry of the same model, or the next model of a fallback)
			writes the reply from its start with the next number: drop the text of an earlier
			attempt of the step when a later one begins.
		cut: This delta says the call failed (``text`` is empty): what its attempt streamed
			of this field is not the reply and never will be (the call is made again, or the
			run ends on the failure). It comes as soon as the call fails, once per field that
			streamed text, before anything else of the run (a retry's text, ``model:fallback``,
			the ``error``); what was held back, in case it started a secret, is dropped.
	"""

	index: int
	field: str
	text: str
	raw: bool = False
	model: str = ""
	attempt: int = 1
	cut: bool = False
	name: str = "text:delta"


@dataclass(slots=True, kw_only=True)
class CommandReadyEvent(Event):
	"""A command of the reply was fully received while it streams (not yet validated or run).

	Args:
		index: The command's position in the reply (0-based).
		command: The command as the model wrote it (JSON), read as the loop reads it: an input
			or output that the reply schema fitted to the provider's dialect had the model send
			as JSON text is the value it holds, and nulls that stood for properties left out
			are gone (`openmolt_core.structured.FittedSchema.restore`).
		model: The model writing the reply (``provider:model``).
		attempt: Which model call of the step wrote it (1 for the first; see `TextDeltaEvent`):
			the commands of an earlier attempt are not the reply's.
		cut: This preview says the call failed (``command`` is empty): the command its
			attempt previewed at ``index`` is not the reply's and never runs (as a cut
			`TextDeltaEvent` says of its text). It comes as soon as the call fails, once per
			command previewed, with the cut deltas, before anything else of the run.
	"""

	index: int
	command: dict[str, Any]
	model: str = ""
	attempt: int = 1
	cut: bool = False
	name: str = "command:ready"


_FINISH_FIELDS = frozenset({"humanMessage", "output"})
"""The streamed fields of a ``finish`` (a question's ``message`` is the other one)."""

_COMMAND_FIELDS = {"finish": "humanMessage", "requestHumanInput": "message", "updatePlan": "plan"}
"""The field whose check keeps a command from being previewed (``command:ready``)."""


def _hidden(ctx: RunContext) -> frozenset[str]:
	"""The fields a capability checks before a person reads them: not previewed.

	A finish's (``humanMessage``, ``output``) while some capability has ``before_finish``; a
	question's ``message`` and a call's ``reason`` while some capability has ``before_words``.
	"""
	hooks = ctx.hooks
	if hooks.before_words:
		return _ALL_WORDS if hooks.before_finish else _WORDS
	return _FINISH_FIELDS if hooks.before_finish else frozenset()


_WORDS = frozenset({"message", "reason", "plan"})
_ALL_WORDS = _FINISH_FIELDS | _WORDS

_ATTEMPTS = "reply-stream"
"""Where a run's context keeps its step and that step's model calls so far (``ctx.scratch``)."""


def sender(ctx: RunContext) -> Send | None:
	"""How the current step asks a model: streaming to the listeners, or None (``generate``).

	Args:
		ctx: The run (its listeners, its step, its redactor).
	"""
	text = ctx.wants("text:delta")
	ready = ctx.wants("command:ready")
	if not (text or ready):
		return None
	# A capability checks a finish before the run ends with it (an output guardrail): until it
	# has, the finish is not shown (a preview cannot be taken back if it refuses or rewrites it).
	# So with a question, or a call's reason, that a capability checks before a person reads it.
	hidden = _hidden(ctx)

	async def send(provider: LLMProvider, request: ModelRequest, model: str) -> ModelResponse:
		# The step's model calls so far, kept for the run: a step asked again after its history
		# was shrunk asks for a sender again, and its attempts go on counting.
		step, before = ctx.scratch.get(_ATTEMPTS, (ctx.step, 0))
		attempt = before + 1 if step == ctx.step else 1
		ctx.scratch[_ATTEMPTS] = (ctx.step, attempt)
		# The reply is previewed as the loop reads it: under the schema fitted to this model's
		# dialect, an output or a tool's input may come as JSON text, and nulls in place of
		# properties left out (`openmolt_core.structured.FittedSchema.restore`).
		fitted = ctx.models.fitted(model) if ctx.models is not None else None
		encoded = fitted is not None and fitted.output_encoded
		repair = fitted.output_repair() if fitted is not None else None
		# One per call: a retry or a fallback starts the reply over.
		decoder = ReplyDecoder(encoded_output=encoded, output_repair=repair)
		# One mask per field: a secret split across two deltas is held back until it is whole,
		# then masked (each delta masked alone would let its halves through).
		masks: dict[tuple[int, str, bool], StreamMask] = {}
		secrets = _chain_secrets(ctx)

		shown: list[tuple[int, str, bool]] = []  # the fields that streamed text, in order
		previewed: list[int] = []  # the commands previewed ready, in order

		async def delta(
			index: int, field: str, raw: bool, piece: str, cut: bool = False, end: bool = False
		) -> None:
			# ``end``: the field is whole; an empty delta then tells each emitter to send the
			# word it held back for a URL's login to end (`_support.loginholds`; listeners
			# never get an empty one).
			if piece or cut or end:
				if piece and not cut and (index, field, raw) not in shown:
					shown.append((index, field, raw))
				event = TextDeltaEvent(
					agent=ctx.agent,
					step=ctx.step,
					index=index,
					field=field,
					text=piece,
					raw=raw,
					model=model,
					attempt=attempt,
					cut=cut,
				)
				await _emit(ctx, event)

		async def flush(index: int | None = None) -> None:
			for key in [k for k in masks if index is None or k[0] == index]:
				await end_of(key)

		async def end_of(key: tuple[int, str, bool]) -> None:
			held = masks.pop(key).flush()
			await delta(*key, held)
			await delta(*key, "", end=True)

		async def on_text(chunk: str) -> None:
			for piece in decoder.feed(chunk):
				if isinstance(piece, TextPiece):
					if text and piece.field not in hidden:
						key = (piece.index, piece.field, piece.raw)
						masked = masks.get(key)
						if masked is None:
							# A command's fields stream one after the other: the ones before
							# this one are whole, so what their masks held is sent first.
							for done in [k for k in masks if k[0] == piece.index]:
								await end_of(done)
							masked = masks[key] = StreamMask(secrets)
						await delta(*key, masked.feed(piece.text))
				else:
					await flush(piece.index)  # the command's text is whole: send what was held
					command = _restored(fitted, piece.command)
					kind = command.get("type")
					if ready and _COMMAND_FIELDS.get(str(kind)) not in hidden:
						if "reason" in hidden and kind == "callTool" and "reason" in command:
							command = {k: v for k, v in command.items() if k != "reason"}
						previewed.append(piece.index)
						await _emit(
							ctx,
							CommandReadyEvent(
								agent=ctx.agent,
								step=ctx.step,
								index=piece.index,
								command=_masked(command, secrets),
								model=model,
								attempt=attempt,
							),
						)

		try:
			response = await stream_reply(provider, request, on_text)
		except Exception:
			# The reply will not be read: say so of each field that showed some of it (what
			# the masks held back is dropped), and of each command previewed ready, before the
			# run goes on to a retry or its end.
			for key in shown:
				await delta(*key, "", cut=True)
			for index in previewed:  # so of the commands previewed: none of them will run
				await _emit(
					ctx,
					CommandReadyEvent(
						agent=ctx.agent,
						step=ctx.step,
						index=index,
						command={},
						model=model,
						attempt=attempt,
						cut=True,
					),
				)
			raise
		await flush()
		return response

	return send


def _masked(command: dict[str, Any], secrets: Callable[[], Iterable[str]]) -> Any:
	"""A ready command as previewed: masked with the secrets the text's preview hides.

	`_chain_secrets`: the run's, its callers', every live instance's, the environment's now (the
	run's redactor alone let another instance's secret, or one exported since, show in a call's
	input that the same reply's text deltas hid).
	"""
	known = frozenset(secrets())
	try:
		return mask_deep(command, known)
	except RecursionError:  # a command nested deeper than the copy can recurse: cut first
		from openmolt_core._support.jsonsafe import shallow

		return mask_deep(shallow(command), known)


def _restored(fitted: FittedSchema | None, command: dict[str, Any]) -> dict[str, Any]:
	"""A ready command as the loop reads it: the fitted schema's changes undone (on a copy).

	Its input or output sent as JSON text is decoded, and the nulls that stood for properties
	left out are gone (`openmolt_core.structured.FittedSchema.restore`). A command whose JSON
	text holds what a state cannot (the parser refuses the reply) is shown as it came.
	"""
	if fitted is None:
		return command
	import copy

	from openmolt_core._support.jsonsafe import UnsafeJson

	restored = copy.deepcopy(command)
	try:
		fitted.restore({"commands": [restored]})
	except UnsafeJson:
		return command
	return restored


def _chain_secrets(ctx: RunContext) -> Callable[[], Iterable[str]]:
	"""The secrets a run's previews hide: every secret any surface they reach masks.

	A preview is masked once, here, as it streams: its consumers pass its text on as it is (a
	sub-agent's callers, `openmolt_core._execute.RunContext.forward_nested`; the AG-UI
	endpoint; the server's responses), since a consumer that masked each delta again on its
	own could not join the halves of a secret split across two, and would turn a short secret
	that starts a delta into ``[redacted]`` inside a word. So the masks hold back what may start
	a secret of the run, of each run up its chain of callers (a sub-agent made by another
	instance does not know its callers' secrets), and of every live instance, redactor and key
	given in code, asked again at each piece (a token may be new); and of the environment as
	it is at each piece (what the server's responses mask too,
	`openmolt_core.secrets.known_secrets`: a key exported after the instance read the
	environment is one, and so is one a provider exports while the reply streams); reading it
	again costs a comparison of the variables with the ones read last while none changed
	(`openmolt_core.secrets.environment_secrets_now`).
	"""
	redactors = [ctx.redact]
	link = ctx.link
	while link is not None:
		caller = link.caller
		redact = getattr(caller, "redact", None)
		if redact is not None and all(redact is not r for r in redactors):
			redactors.append(redact)
		link = getattr(caller, "link", None)

	def secrets() -> frozenset[str]:
		live = live_secrets()
		own = frozenset(secret for r in redactors for secret in r.secrets)
		own |= environment_secrets_now()
		return live if own <= live else live | own

	return secrets


async def _emit(ctx: RunContext, event: Event) -> None:
	"""Deliver a preview: it takes no sequence number, so a run's numbering never depends on it."""
	event.run_id = ctx.state.run_id
	if ctx.link is not None:
		event.parent_run_id = ctx.link.run_id
	await ctx.forward(event)


async def stream_reply(
	provider: LLMProvider,
	request: ModelRequest,
	on_text: Callable[[str], Awaitable[None]],
) -> ModelResponse:
	"""Ask a provider for one reply, streaming it when the provider can.

	Args:
		provider: Any provider; one with ``stream`` streams, others answer at once.
		request: The request.
		on_text: Awaited with each new piece of the reply text, in order.

	Returns:
		The complete response.

	Raises:
		ProviderError: As the provider raises; also when a stream ends without its response.
	"""
	stream = getattr(provider, "stream", None)
	if not callable(stream):  # no capability (or an unrelated attribute of that name)
		response = await provider.generate(request)
		if isinstance(response, ModelResponse) and response.text:
			await on_text(response.text)
		return response
	final: ModelResponse | None = None
	chunks: AsyncIterator[StreamChunk] = stream(request)
	try:
		async for chunk in chunks:
			if isinstance(chunk, ModelResponse):
				final = chunk
			elif chunk.text:
				await on_text(chunk.text)
	finally:
		close = getattr(chunks, "aclose", None)
		if close is not None:
			await close()
	if final is None:
		raise ProviderError(
			"the stream ended without a complete reply, so none of it was run; try again",
			provider=getattr(provider, "name", "") or "custom",
			model=request.model,
			retryable=True,
		)
	return final
