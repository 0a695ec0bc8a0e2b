"""Fit an agent's reply schema to a provider's structured-output dialect: the capability's work.

Provider-enforced structured output is a capability (`openmolt_core.capabilities.StructuredOutput`,
which ``create_agent`` adds to every agent): the loop asks it (`openmolt_core.hooks.Capability.fit_reply`)
for the schema a model's requests send, once per model and tool set, and reads the replies made under
it through the record it answers (`openmolt_core.envelope.FittedSchema`). Without it, or for a
provider that declares no dialect, the loop sends the canonical schema with mode ``off``.

The loop builds one canonical reply schema per agent (`openmolt_core.envelope.Envelope`). A
provider declares the dialect its API accepts (`SchemaDialect`: which keywords, whether every
object must be closed and every property required, and the documented size limits), and `fit`
turns the envelope into the schema to send, per tool: a tool whose input schema has a form in the
dialect is constrained exactly; one that has none, or that would push the whole schema past the
dialect's limits, falls back deliberately (its input travels as a JSON string, checked after).
Fitting one JSON Schema, and the dialect, are `openmolt_core._support.schemafit`'s (they know
nothing of agents); this module fits the envelope, tool by tool, within the dialect's limits.
The result says which mode took effect:

| mode | meaning |
| --- | --- |
| ``strict`` | every command and every tool input is constrained by the provider |
| ``partial`` | the envelope is constrained; some tools' inputs fell back (`FittedSchema.notes`) |
| ``off`` | no structured output: the prompt asks for JSON and the loop validates it |

Whatever the mode, the loop validates every reply against the canonical schema after
`FittedSchema.restore`: fitting only narrows what a reply may be, except for the assertion
keywords a dialect does not know (``maxLength`` for Anthropic), which are dropped, listed in
`FittedSchema.relaxed` and still checked by the loop.

How the schema is fitted:

- ``$ref``s are inlined, ``allOf`` merged, a ``oneOf`` whose branches a tag tells apart becomes
  ``anyOf``; ``const`` becomes a one-value ``enum`` where the dialect knows only ``enum``.
- Where every property must be required (OpenAI), an optional property with a ``default``
  becomes required (the description says the default), one without becomes required and
  nullable, and `FittedSchema.restore` removes the nulls that caused. A tool whose input has
  an optional property that itself accepts null falls back: the tool receives that null (a
  service reads it as "clear the field"), so leaving the property out must stay possible. Where optional properties
  are limited (Anthropic), properties with a ``default`` become required too, and a tool past
  the optional budget tries its optional properties as required and nullable (unions) first.
- Which tools fall back is deterministic: tools are taken in the agent's order and each stays
  strict while the schema stays within every limit, so earlier tools keep priority. The finish
  output is placed before any tool. An agent without an output schema sends its output as JSON
  text (any JSON value has no other strict form; this loses nothing, so the mode stays strict).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from openmolt_core._support import lazy_exports
from openmolt_core.envelope import FittedSchema, _EnvelopeRepair
from openmolt_core.llm import StructuredMode

# The fitting machinery (`openmolt_core._support.schemafit`, with `SchemaDialect`, re-exported
# here on first use) loads when a provider declares a dialect: a model without structured output
# gets mode ``off`` without it.
if TYPE_CHECKING:
	from openmolt_core._support.schemafit import Metrics, Repair, SchemaDialect
	from openmolt_core.envelope import Envelope, ToolSchema

__all__ = ["FittedSchema", "SchemaDialect", "StructuredMode", "fit", "fit_schema"]

_ENCODED_INPUT = {"type": "string", "description": "The tool's input object as JSON text."}
_ENCODED_OUTPUT = {"type": "string", "description": "The output as JSON text."}
_STAND_IN = {"type": "string"}


def _with(repair: Repair | None, name: str, inner: Repair | None) -> Repair | None:
	"""``repair`` (of an object) extended with a repair of its property ``name``."""
	from openmolt_core._support.schemafit import ObjectRepair

	if inner is None:
		return repair
	props = repair.props if isinstance(repair, ObjectRepair) else ()
	return ObjectRepair(((name, False, inner), *props))


@dataclass(slots=True, eq=False)  # never compared: no __eq__ to generate
class _Part:
	key: tuple[str, str | None]
	schema: dict[str, Any]
	repair: Repair | None
	metrics: Metrics
	relaxed: frozenset[str] = frozenset()
	defs: Mapping[str, dict[str, Any]] = field(default_factory=dict)


_Inner = tuple[dict[str, Any], "Repair | None", frozenset[str], "Mapping[str, dict[str, Any]]"]


class _EnvelopeFit:
	"""One run of `fit`: the parts of the envelope, chosen in order within the limits."""

	def __init__(self, envelope: Envelope, dialect: SchemaDialect) -> None:
		self.envelope = envelope
		self.dialect = dialect
		self.notes: list[str] = []
		self.taken: set[str] = set()  # the root's $defs names, shared by every part's fitter

	def part(
		self,
		key: tuple[str, str | None],
		variant: dict[str, Any],
		prop: str | None = None,
		inner: _Inner | None = None,
	) -> _Part:
		"""Fit a command variant; ``prop`` (fitted as ``inner``) was a stand-in in ``variant``."""
		from openmolt_core._support.schemafit import Fitter, measure

		fitter = Fitter(self.dialect, describe_defaults=False)
		schema, repair = fitter.fit(variant, key[0])
		relaxed = frozenset(fitter.relaxed)
		defs: Mapping[str, dict[str, Any]] = {}
		if prop is not None and inner is not None:
			schema["properties"][prop] = inner[0]
			repair = _with(repair, prop, inner[1])
			relaxed |= inner[2]
			defs = inner[3]
		metrics = self.measure(schema)
		if defs:  # the root's $defs (their names and schemas): measured where they are sent
			metrics = metrics + measure(
				{"$defs": defs}, long_enum_values=self.dialect._long_values()
			)
		return _Part(key, schema, repair, metrics, relaxed, defs)

	def measure(self, variant: dict[str, Any]) -> Metrics:
		from openmolt_core._support.schemafit import measure

		m = measure(variant, long_enum_values=self.dialect._long_values())
		m.depth += 2  # a variant sits in the root object's commands array
		m.size += 1  # and a comma separates it from the next
		return m

	def inner(
		self, schema: Any, where: str, prefix: str, nullable: bool = False, tool: bool = False
	) -> _Inner:
		from openmolt_core._support.schemafit import Fitter

		dialect = replace(self.dialect, require_all=True) if nullable else self.dialect
		# A tool receives a null as given (it may clear a field): absent must stay possible.
		fitter = Fitter(dialect, prefix=f"{prefix}_", taken=self.taken, absent_differs=tool)
		fitted, repair = fitter.fit(schema, where)
		return fitted, repair, frozenset(fitter.relaxed), dict(fitter.defs)

	def tool(self, tool: ToolSchema, strict: bool, nullable: bool = False) -> _Part:
		from openmolt_core._support.schemafit import Decode

		shell = self.envelope.tool_variant(tool, _STAND_IN)
		key = ("callTool", tool.handle)
		if strict:
			inner = self.inner(tool.input_schema, "input", tool.handle, nullable, tool=True)
			return self.part(key, shell, "input", inner)
		return self.part(
			key, shell, "input", (dict(_ENCODED_INPUT), Decode(objects=True), frozenset(), {})
		)

	def finish(self, strict: bool) -> _Part:
		from openmolt_core._support.schemafit import Decode

		shell = self.envelope.finish_variant(_STAND_IN)
		schema = self.envelope.output_schema
		if strict and schema is not None:
			inner = self.inner(schema, "output", "finish")
			return self.part(("finish", None), shell, "output", inner)
		return self.part(
			("finish", None), shell, "output", (dict(_ENCODED_OUTPUT), Decode(), frozenset(), {})
		)

	def run(self) -> FittedSchema:
		from openmolt_core._support.schemafit import Fitter, Metrics, NoStrictForm, measure

		d = self.dialect
		try:
			others = [
				self.part((v["properties"]["type"]["const"], None), v)
				for v in self.envelope.other_variants()
			]
			outer = Fitter(d)
			wrapper, _ = outer.fit(self.envelope.wrap([_STAND_IN]))
		except NoStrictForm as exc:  # pragma: no cover - the command models all have a form
			return self.off(f"the reply envelope has no strict form in {d.name}: {exc}")
		wrapper["properties"]["commands"]["items"] = {"anyOf": []}
		total = measure(wrapper, long_enum_values=d._long_values())
		total.size -= 1  # the first variant needs no comma
		for part in others:
			total = total + part.metrics
		# Room is kept for every later tool as JSON text, so taking the output or one tool strict
		# never leaves a later tool without a place.
		texts = [self.tool(t, False) for t in self.envelope.tools]
		after = [Metrics()]  # after[k]: the last k tools as JSON text
		for text in reversed(texts):
			after.append(after[-1] + text.metrics)
		chosen, output_fell_back = self.choose_finish(total, after[-1])
		if chosen is None:
			return self.off(
				f"the reply envelope with {len(texts)} tools passes the {d.name} limits even with "
				"every input and the output as JSON text"
			)
		finish = chosen
		total = total + finish.metrics
		tools: list[_Part] = []
		encoded: set[str] = set()
		for i, (tool, text) in enumerate(zip(self.envelope.tools, texts, strict=True)):
			reserve = after[len(texts) - i - 1]
			picked = self.choose_tool(tool, total, reserve) or text
			total = total + picked.metrics
			tools.append(picked)
			if picked is text:
				encoded.add(tool.handle)
		parts = [*tools, *others, finish]
		wrapper["properties"]["commands"]["items"] = {"anyOf": [p.schema for p in parts]}
		defs = {name: schema for p in parts for name, schema in p.defs.items()}
		if defs:  # recursive definitions (OpenAI): every $ref points at the root
			wrapper["$defs"] = defs
		over = d.violations(wrapper)
		if over:  # pragma: no cover - the running total is exact; kept as a safety net
			return self.off(f"the fitted schema passes the {d.name} limits: {'; '.join(over)}")
		mode: StructuredMode = "partial" if encoded or output_fell_back else "strict"
		return FittedSchema(
			wrapper,
			mode,
			encoded=frozenset(encoded),
			output_encoded=self.output_is_text(finish),
			notes=tuple(self.notes),
			relaxed=frozenset(outer.relaxed).union(*(p.relaxed for p in parts)),
			dialect=d.name,
			_repair=_EnvelopeRepair({p.key: p.repair for p in parts if p.repair is not None}),
		)

	@staticmethod
	def output_is_text(finish: _Part) -> bool:
		return bool(finish.schema["properties"]["output"] == _ENCODED_OUTPUT)

	def choose_finish(self, total: Metrics, reserve: Metrics) -> tuple[_Part | None, bool]:
		"""The finish variant: its output strict when it fits, else as JSON text.

		Returns the variant (None when even the text form does not fit) and whether the output
		fell back.
		"""
		from openmolt_core._support.schemafit import NoStrictForm

		d = self.dialect
		text = self.finish(False)
		fits = not d._over(total + text.metrics + reserve)
		if self.envelope.output_schema is None:
			return (text if fits else None), False
		try:
			strict = self.finish(True)
		except NoStrictForm as exc:
			self.notes.append(f"finish.output sent as JSON text: {exc}")
		else:
			over = d._over(total + strict.metrics + reserve)
			if not over:
				return strict, False
			self.notes.append(f"finish.output sent as JSON text: it would pass {over[0]}")
		return (text if fits else None), True

	def choose_tool(self, tool: ToolSchema, total: Metrics, reserve: Metrics) -> _Part | None:
		"""The tool's strict variant when it has a form and fits with room for the rest, else None."""
		from openmolt_core._support.schemafit import NoStrictForm

		try:
			strict = self.tool(tool, True)
		except NoStrictForm as exc:
			self.notes.append(f"{tool.handle}: input sent as JSON text: {exc}")
			return None
		d = self.dialect
		over = d._over(total + strict.metrics + reserve)
		if over and d.max_optional is not None and not d.require_all:
			# Optional properties are the scarce budget: the same input with them required and
			# nullable costs unions instead, which may still be left.
			try:
				alt = self.tool(tool, True, nullable=True)
			except NoStrictForm:
				pass  # its unions could not be told apart once nullable; the note says the budget
			else:
				if not d._over(total + alt.metrics + reserve):
					return alt
		if over:
			self.notes.append(f"{tool.handle}: input sent as JSON text: it would pass {over[0]}")
			return None
		return strict

	def off(self, why: str) -> FittedSchema:
		return FittedSchema(
			self.envelope.schema(), "off", notes=(*self.notes, why), dialect=self.dialect.name
		)


def fit(envelope: Envelope, dialect: SchemaDialect | None) -> FittedSchema:
	"""Fit an envelope to a dialect (see the module docstring for the rules).

	The result depends only on the envelope and the dialect: the same agent on the same provider
	always gets the same schema, mode and fallbacks.

	Args:
		envelope: The agent's reply envelope.
		dialect: The provider's dialect, or None when the model has no structured output (the
			result is then mode ``off`` with the canonical schema).

	Returns:
		The schema to send and the mode that took effect.
	"""
	if dialect is None:
		return FittedSchema(
			envelope.schema(),
			"off",
			notes=("the provider has no structured output for this model",),
		)
	return _EnvelopeFit(envelope, dialect).run()


def fit_schema(schema: dict[str, Any], dialect: SchemaDialect | None) -> FittedSchema:
	"""Fit any JSON Schema with an object root as a whole: mode ``strict`` or ``off``.

	For a provider handed a reply schema that was not fitted (``request.response_mode`` None):
	there is no per-tool fallback, and `FittedSchema.restore` repairs the value as a whole.

	Args:
		schema: The schema.
		dialect: The dialect, or None.
	"""
	if dialect is None:
		return FittedSchema(schema, "off", notes=("no dialect",))
	from openmolt_core._support.schemafit import Fitter, NoStrictForm

	fitter = Fitter(dialect)
	try:
		fitted, repair = fitter.fit(schema)
	except NoStrictForm as exc:
		return FittedSchema(schema, "off", notes=(f"no strict form: {exc}",), dialect=dialect.name)
	if fitter.defs:  # recursive definitions: at the root, which is itself one when it recurses
		ref = fitted.get("$ref")
		root = fitter.defs[ref.rsplit("/", 1)[-1]] if isinstance(ref, str) else fitted
		fitted = {**root, "$defs": dict(fitter.defs)}
	if fitted.get("type") != "object":
		return FittedSchema(
			schema, "off", notes=("the root is not an object",), dialect=dialect.name
		)
	over = dialect.violations(fitted)
	if over:
		return FittedSchema(schema, "off", notes=over, dialect=dialect.name)
	return FittedSchema(
		fitted,
		"strict",
		relaxed=frozenset(fitter.relaxed),
		dialect=dialect.name,
		_repair=repair if repair is not None else _identity,
	)


def _identity(value: Any) -> Any:
	return value


__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(
	globals(), {"SchemaDialect": "openmolt_core._support.schemafit"}
)
