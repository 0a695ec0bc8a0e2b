"""The OpenTelemetry GenAI semantic-convention names OpenMolt's spans use (semconv 1.41).

One place for every name, checked by a test against ``opentelemetry-semantic-conventions``
(its incubating ``gen_ai_attributes``): the conventions are still in development, and a rename
there shows up here. ``gen_ai.system`` was renamed ``gen_ai.provider.name``; OpenMolt, new to these
conventions, emits the current name only.
"""

from __future__ import annotations

__all__ = [
	"AGENT_NAME",
	"CHAT",
	"CLIENT_OPERATION_DURATION",
	"CLIENT_TOKEN_USAGE",
	"CONVERSATION_ID",
	"ERROR_TYPE",
	"EXECUTE_TOOL",
	"INPUT_MESSAGES",
	"INVOKE_AGENT",
	"OPERATION_NAME",
	"OUTPUT_MESSAGES",
	"OUTPUT_TYPE",
	"PROVIDER_NAME",
	"REQUEST_MAX_TOKENS",
	"REQUEST_MODEL",
	"REQUEST_STOP_SEQUENCES",
	"REQUEST_TEMPERATURE",
	"REQUEST_TOP_P",
	"RESPONSE_FINISH_REASONS",
	"RESPONSE_MODEL",
	"SYSTEM_INSTRUCTIONS",
	"TOKEN_INPUT",
	"TOKEN_OUTPUT",
	"TOKEN_TYPE",
	"TOOL_CALL_ARGUMENTS",
	"TOOL_CALL_ID",
	"TOOL_CALL_RESULT",
	"TOOL_NAME",
	"TOOL_TYPE",
	"USAGE_CACHE_READ_INPUT_TOKENS",
	"USAGE_INPUT_TOKENS",
	"USAGE_OUTPUT_TOKENS",
	"USAGE_REASONING_OUTPUT_TOKENS",
]

# attributes
OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_TOP_P = "gen_ai.request.top_p"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_STOP_SEQUENCES = "gen_ai.request.stop_sequences"
OUTPUT_TYPE = "gen_ai.output.type"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
RESPONSE_MODEL = "gen_ai.response.model"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
ERROR_TYPE = "error.type"
TOKEN_TYPE = "gen_ai.token.type"

# values of gen_ai.operation.name
CHAT = "chat"
EXECUTE_TOOL = "execute_tool"
INVOKE_AGENT = "invoke_agent"

# values of gen_ai.token.type
TOKEN_INPUT = "input"
TOKEN_OUTPUT = "output"

# metrics (histograms) and the bucket boundaries the conventions advise for them
CLIENT_TOKEN_USAGE = "gen_ai.client.token.usage"
CLIENT_OPERATION_DURATION = "gen_ai.client.operation.duration"
TOKEN_BUCKETS: tuple[int, ...] = tuple(4**n for n in range(14))
"""1, 4, 16 ... 67108864 tokens."""
DURATION_BUCKETS: tuple[float, ...] = tuple(round(0.01 * 2**n, 2) for n in range(14))
"""0.01, 0.02, 0.04 ... 81.92 seconds."""
