"""The image limits load with a request's first attachment, not with every provider.

`openmolt_providers._images` (the APIs' limits as data, the image header readers, the notes for
images left out) is about 0.5 % of a one-shot run's instructions (figure 7); a run that sends no
attachment never reads it. Each provider asks `openmolt_providers._attach.fit_images`, which
answers {} for a request without attachments and loads the limits for one that holds any.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

BUILD = textwrap.dedent(
	"""
	import base64, json, struct, sys, zlib
	from openmolt_core.llm import Attachment, Message, ModelRequest
	from openmolt_providers.anthropic import AnthropicProvider
	from openmolt_providers.gemini import GeminiProvider
	from openmolt_providers.openai import OpenAIProvider

	def no_http():
		raise AssertionError("no HTTP here")

	def png(width, height):
		chunk = b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
		head = b"\\x89PNG\\r\\n\\x1a\\n" + struct.pack(">I", 13) + chunk
		return base64.b64encode(head + struct.pack(">I", zlib.crc32(chunk))).decode()

	providers = {
		"openai-chat": (OpenAIProvider({"api_key": "k", "api_mode": "chat"}, no_http), "gpt-5-mini"),
		"openai-responses": (OpenAIProvider({"api_key": "k"}, no_http), "gpt-5-mini"),
		"anthropic": (AnthropicProvider({"api_key": "k"}, no_http), "claude-sonnet-4-5"),
		"google": (GeminiProvider({"api_key": "k"}, no_http), "gemini-2.5-flash"),
	}
	provider, model = providers[sys.argv[1]]
	images = int(sys.argv[2])
	messages = [Message("user", '{"input":"look"}')]
	for step in range(images):
		messages.append(Message("assistant", '{"commands":[]}'))
		messages.append(Message("user", '{"results":[]}', [Attachment("image/png", png(9, 9))]))
	body = provider.build(ModelRequest(model=model, system="You look.", messages=messages))
	print(json.dumps({"loaded": "openmolt_providers._images" in sys.modules, "body": body}))
	"""
)

PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "google"]


def _build(provider: str, images: int) -> dict[str, object]:
	out = subprocess.run(
		[sys.executable, "-c", BUILD, provider, str(images)],
		capture_output=True,
		text=True,
		timeout=120,
	)
	assert out.returncode == 0, out.stderr
	result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
	return result


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_request_without_attachments_does_not_load_the_image_limits(provider: str) -> None:
	assert _build(provider, 0)["loaded"] is False


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_request_with_an_image_loads_them_and_sends_it(provider: str) -> None:
	"""The path that needs the limits still fits the images: one small PNG is sent whole."""
	result = _build(provider, 1)
	assert result["loaded"] is True
	sent = json.dumps(result["body"])
	assert "left out" not in sent
	assert ("iVBORw0KGgo" in sent) is True  # the PNG's base64 (its signature), in the body
