"""List prices per million tokens: (input, cached input, output, cache write), in USD.

Generated from genai-prices 0.2.3 by tests/providers/update_prices.py
(``uv run nox -s prices``); do not edit by hand. `PRICES` and `MATCH` hold the base
tier; `TIERS` the prices past a long-context threshold; `MEDIA` the models that speak or
draw; `AUDIO` the prices of audio where they differ from text (with the few the
script's `AUDIO_SUPPLEMENT` takes from the vendor's model page where genai-prices has none).
"""

from __future__ import annotations

from typing import Any

__all__ = ["AUDIO", "MATCH", "MEDIA", "PRICES", "TIERS"]

PRICES: dict[str, dict[str, tuple[float, float, float, float | None]]] = {
	"anthropic": {
		"claude-2": (8.0, 8.0, 24.0, None),
		"claude-3-5-haiku-latest": (0.8, 0.08, 4.0, 1.0),
		"claude-3-5-sonnet": (3.0, 0.3, 15.0, 3.75),
		"claude-3-7-sonnet-latest": (3.0, 0.3, 15.0, 3.75),
		"claude-3-haiku": (0.25, 0.03, 1.25, 0.3),
		"claude-3-opus-latest": (15.0, 1.5, 75.0, 18.75),
		"claude-3-sonnet": (3.0, 0.3, 15.0, 3.75),
		"claude-fable-5": (10.0, 1.0, 50.0, 12.5),
		"claude-fable-5-1": (10.0, 0.25, 50.0, 12.5),
		"claude-fable-5-2": (8.0, 0.2, 40.0, 10.0),
		"claude-haiku-4-5": (1.0, 0.1, 5.0, 1.25),
		"claude-haiku-5-5": (0.1, 0.01, 0.5, 0.125),
		"claude-mythos-5-2": (8.0, 0.2, 40.0, 10.0),
		"claude-opus-4-0": (15.0, 1.5, 75.0, 18.75),
		"claude-opus-4-1": (15.0, 1.5, 75.0, 18.75),
		"claude-opus-4-5": (5.0, 0.5, 25.0, 6.25),
		"claude-opus-4-6": (5.0, 0.5, 25.0, 6.25),
		"claude-opus-4-7": (5.0, 0.5, 25.0, 6.25),
		"claude-opus-4-8": (5.0, 0.5, 25.0, 6.25),
		"claude-opus-5": (5.0, 0.5, 25.0, 6.25),
		"claude-opus-5-5": (4.0, 0.2, 20.0, 5.0),
		"claude-sonnet-4-0": (3.0, 0.3, 15.0, 3.75),
		"claude-sonnet-4-5": (3.0, 0.3, 15.0, 3.75),
		"claude-sonnet-4-6": (3.0, 0.3, 15.0, 3.75),
		"claude-sonnet-5": (2.0, 0.2, 10.0, 2.5),
		"claude-sonnet-5-5": (2.0, 0.1, 10.0, 2.5),
		"claude-v1": (8.0, 8.0, 24.0, None),
	},
	"google": {
		"gemini-1.0-pro-vision-001": (0.125, 0.125, 0.375, None),
		"gemini-1.5-flash": (0.075, 0.01875, 0.3, None),
		"gemini-1.5-pro": (1.25, 1.25, 5.0, None),
		"gemini-2.0-flash": (0.1, 0.025, 0.4, None),
		"gemini-2.0-flash-lite": (0.075, 0.075, 0.3, None),
		"gemini-2.5-flash": (0.3, 0.03, 2.5, None),
		"gemini-2.5-flash-image": (0.3, 0.3, 2.5, None),
		"gemini-2.5-flash-lite": (0.1, 0.01, 0.4, None),
		"gemini-2.5-flash-lite-preview-tts": (0.5, 0.5, 10.0, None),
		"gemini-2.5-flash-preview": (0.15, 0.15, 0.6, None),
		"gemini-2.5-flash-tts": (0.5, 0.5, 10.0, None),
		"gemini-2.5-pro": (1.25, 0.125, 10.0, None),
		"gemini-2.5-pro-tts": (1.0, 1.0, 20.0, None),
		"gemini-3-flash-preview": (0.5, 0.05, 3.0, None),
		"gemini-3-pro-image-preview": (2.0, 2.0, 12.0, None),
		"gemini-3-pro-preview": (2.0, 0.2, 12.0, None),
		"gemini-3.1-flash-image-preview": (0.5, 0.5, 3.0, None),
		"gemini-3.1-flash-lite": (0.25, 0.025, 1.5, None),
		"gemini-3.1-flash-lite-image": (0.25, 0.25, 1.5, None),
		"gemini-3.1-flash-live-preview": (0.75, 0.75, 4.5, None),
		"gemini-3.1-flash-tts-preview": (1.0, 1.0, 20.0, None),
		"gemini-3.1-pro-preview": (2.0, 0.2, 12.0, None),
		"gemini-3.5-flash": (1.5, 0.15, 9.0, None),
		"gemini-3.5-flash-lite": (0.3, 0.03, 2.5, None),
		"gemini-3.6-flash": (0.75, 0.075, 3.75, None),
		"gemini-3.7-flash": (0.75, 0.075, 3.75, None),
		"gemini-3.8-flash": (0.75, 0.075, 3.75, None),
		"gemini-3.8-flash-lite-tts": (0.5, 0.5, 6.0, None),
		"gemini-3.8-flash-tts": (0.5, 0.5, 9.0, None),
		"gemini-3.8-live": (0.75, 0.75, 4.5, None),
		"gemini-4-argon": (4.0, 0.2, 20.0, None),
		"gemini-flash-1.5": (0.075, 0.01875, 0.3, None),
		"gemini-flash-1.5-8b": (0.0375, 0.01, 0.15, None),
		"gemini-live-2.5-flash": (0.5, 0.5, 2.0, None),
		"gemini-nano-banana-2.1": (1.5, 1.5, 7.5, None),
		"gemini-omni-1.1-flash": (1.5, 1.5, 9.0, None),
		"gemini-omni-flash-preview": (1.5, 1.5, 9.0, None),
		"gemini-pro": (0.125, 0.125, 0.375, None),
		"gemini-pro-1.5": (1.25, 0.3125, 5.0, None),
		"gemini-robotics-er-2-preview": (1.0, 0.1, 5.0, None),
		"gemini-robotics-er-2-streaming-preview": (1.0, 1.0, 5.0, None),
	},
	"openai": {
		"ada": (0.4, 0.4, 0.4, None),
		"babbage": (0.5, 0.5, 0.5, None),
		"babbage-002": (0.4, 0.4, 0.4, None),
		"chatgpt-4o-latest": (5.0, 5.0, 15.0, None),
		"chatgpt-image-latest": (5.0, 1.25, 10.0, None),
		"codex-mini": (1.5, 0.375, 6.0, None),
		"computer-use": (3.0, 3.0, 12.0, None),
		"curie": (2.0, 2.0, 2.0, None),
		"davinci": (20.0, 20.0, 20.0, None),
		"davinci-002": (2.0, 2.0, 2.0, None),
		"gpt-3.5-0301": (1.5, 1.5, 2.0, None),
		"gpt-3.5-turbo": (0.5, 0.5, 1.5, None),
		"gpt-3.5-turbo-0613": (1.5, 1.5, 2.0, None),
		"gpt-3.5-turbo-1106": (1.0, 1.0, 2.0, None),
		"gpt-3.5-turbo-16k": (3.0, 3.0, 4.0, None),
		"gpt-3.5-turbo-instruct": (1.5, 1.5, 2.0, None),
		"gpt-4": (30.0, 30.0, 60.0, None),
		"gpt-4-32k": (60.0, 60.0, 120.0, None),
		"gpt-4-turbo": (10.0, 10.0, 30.0, None),
		"gpt-4-vision-preview": (10.0, 10.0, 30.0, None),
		"gpt-4.1": (2.0, 0.5, 8.0, None),
		"gpt-4.1-mini": (0.4, 0.1, 1.6, None),
		"gpt-4.1-nano": (0.1, 0.025, 0.4, None),
		"gpt-4.5-preview": (75.0, 37.5, 150.0, None),
		"gpt-4o": (2.5, 1.25, 10.0, None),
		"gpt-4o-2024-05-13": (5.0, 5.0, 15.0, None),
		"gpt-4o-audio-preview": (2.5, 2.5, 10.0, None),
		"gpt-4o-mini": (0.15, 0.075, 0.6, None),
		"gpt-4o-mini-audio-preview": (0.15, 0.15, 0.6, None),
		"gpt-4o-mini-realtime-preview": (0.6, 0.3, 2.4, None),
		"gpt-4o-mini-transcribe": (1.25, 1.25, 5.0, None),
		"gpt-4o-mini-tts": (0.6, 0.6, 12.0, None),
		"gpt-4o-realtime-preview": (5.0, 2.5, 20.0, None),
		"gpt-4o-search-preview": (2.5, 2.5, 10.0, None),
		"gpt-4o-transcribe": (2.5, 2.5, 10.0, None),
		"gpt-5": (1.25, 0.125, 10.0, None),
		"gpt-5-image": (10.0, 1.25, 10.0, None),
		"gpt-5-image-mini": (2.5, 0.25, 2.0, None),
		"gpt-5-mini": (0.25, 0.025, 2.0, None),
		"gpt-5-nano": (0.05, 0.005, 0.4, None),
		"gpt-5-pro": (15.0, 15.0, 120.0, None),
		"gpt-5-search-api": (1.25, 0.125, 10.0, None),
		"gpt-5.1": (1.25, 0.125, 10.0, None),
		"gpt-5.1-codex-mini": (0.25, 0.025, 2.0, None),
		"gpt-5.2": (1.75, 0.175, 14.0, None),
		"gpt-5.2-pro": (21.0, 21.0, 168.0, None),
		"gpt-5.3": (1.75, 0.175, 14.0, None),
		"gpt-5.3-codex": (1.75, 0.175, 14.0, None),
		"gpt-5.4": (2.5, 0.25, 15.0, None),
		"gpt-5.4-image-2": (8.0, 2.0, 15.0, None),
		"gpt-5.4-mini": (0.75, 0.075, 4.5, None),
		"gpt-5.4-nano": (0.2, 0.02, 1.25, None),
		"gpt-5.4-pro": (30.0, 30.0, 180.0, None),
		"gpt-5.5": (5.0, 0.5, 30.0, None),
		"gpt-5.5-cyber": (12.5, 1.25, 75.0, None),
		"gpt-5.5-pro": (30.0, 30.0, 180.0, None),
		"gpt-5.6-cyber": (12.5, 1.25, 75.0, 15.625),
		"gpt-5.6-luna": (0.2, 0.02, 1.2, 0.25),
		"gpt-5.6-sol": (4.0, 0.4, 20.0, 5.0),
		"gpt-5.6-terra": (2.0, 0.2, 12.0, 2.5),
		"gpt-6-astra": (10.0, 1.0, 50.0, 12.5),
		"gpt-6-cyber": (20.0, 2.0, 100.0, 25.0),
		"gpt-6-luna": (0.1, 0.01, 0.5, 0.125),
		"gpt-6-rosalind": (15.0, 1.5, 75.0, 18.75),
		"gpt-6-sol": (2.0, 0.2, 10.0, 2.5),
		"gpt-6.1-sol": (2.0, 0.1, 10.0, 2.5),
		"gpt-6.1-terra": (1.0, 0.05, 5.0, 1.25),
		"gpt-audio": (2.5, 2.5, 10.0, None),
		"gpt-audio-mini": (0.6, 0.6, 2.4, None),
		"gpt-chat-latest": (5.0, 0.5, 30.0, None),
		"gpt-image-1": (5.0, 1.25, 40.0, None),
		"gpt-image-1-mini": (2.0, 0.2, 8.0, None),
		"gpt-image-1.5": (5.0, 1.25, 10.0, None),
		"gpt-image-2": (5.0, 1.25, 30.0, None),
		"gpt-image-2.5-flare": (5.0, 1.25, 30.0, None),
		"gpt-image-2.5-sunburst": (5.0, 1.25, 30.0, None),
		"gpt-oss-120b": (0.039, 0.039, 0.18, None),
		"gpt-oss-20b": (0.029, 0.029, 0.14, None),
		"gpt-oss-safeguard-20b": (0.075, 0.037, 0.3, None),
		"gpt-realtime": (4.0, 0.4, 16.0, None),
		"gpt-realtime-2": (4.0, 0.4, 24.0, None),
		"gpt-realtime-mini": (0.6, 0.06, 2.4, None),
		"gpt-rosalind-discovery": (5.0, 0.5, 25.0, None),
		"gpt-rosalind-research": (5.0, 0.5, 25.0, None),
		"o1": (15.0, 7.5, 60.0, None),
		"o1-mini": (1.1, 0.55, 4.4, None),
		"o1-preview": (15.0, 7.5, 60.0, None),
		"o1-pro": (150.0, 150.0, 600.0, None),
		"o3": (2.0, 0.5, 8.0, None),
		"o3-deep-research": (10.0, 2.5, 40.0, None),
		"o3-mini": (1.1, 0.55, 4.4, None),
		"o3-pro": (20.0, 20.0, 80.0, None),
		"o4-mini": (1.1, 0.275, 4.4, None),
		"o4-mini-deep-research": (2.0, 0.5, 8.0, None),
		"text-davinci-002": (20.0, 20.0, 20.0, None),
		"text-davinci-003": (20.0, 20.0, 20.0, None),
	},
}
"""The models listed (``openmolt models``) and looked up by their exact id."""

MATCH: dict[str, tuple[tuple[Any, tuple[float, float, float, float | None], str], ...]] = {
	"anthropic": (
		(
			("or", (("starts_with", "claude-2"), ("contains", "claude-v2"))),
			(8.0, 8.0, 24.0, None),
			"claude-2",
		),
		(
			("or", (("starts_with", "claude-3-5-haiku"), ("starts_with", "claude-3.5-haiku"))),
			(0.8, 0.08, 4.0, 1.0),
			"claude-3-5-haiku-latest",
		),
		(
			("or", (("starts_with", "claude-3-5-sonnet"), ("starts_with", "claude-3.5-sonnet"))),
			(3.0, 0.3, 15.0, 3.75),
			"claude-3-5-sonnet",
		),
		(
			(
				"or",
				(
					("starts_with", "claude-3-7-sonnet"),
					("starts_with", "claude-3.7-sonnet"),
					("starts_with", "claude-sonnet-3.7"),
					("starts_with", "claude-sonnet-3-7"),
				),
			),
			(3.0, 0.3, 15.0, 3.75),
			"claude-3-7-sonnet-latest",
		),
		(("starts_with", "claude-3-haiku"), (0.25, 0.03, 1.25, 0.3), "claude-3-haiku"),
		(("starts_with", "claude-3-opus"), (15.0, 1.5, 75.0, 18.75), "claude-3-opus-latest"),
		(("starts_with", "claude-3-sonnet"), (3.0, 0.3, 15.0, 3.75), "claude-3-sonnet"),
		(
			("or", (("equals", "claude-fable-5"), ("regex", "^claude-fable-5-\\d{8}$"))),
			(10.0, 1.0, 50.0, 12.5),
			"claude-fable-5",
		),
		(
			("or", (("equals", "claude-fable-5-1"), ("regex", "^claude-fable-5-1-\\d{8}$"))),
			(10.0, 0.25, 50.0, 12.5),
			"claude-fable-5-1",
		),
		(
			("or", (("equals", "claude-fable-5-2"), ("regex", "^claude-fable-5-2-\\d{8}$"))),
			(8.0, 0.2, 40.0, 10.0),
			"claude-fable-5-2",
		),
		(
			(
				"or",
				(
					("starts_with", "claude-haiku-4-5"),
					("starts_with", "claude-haiku-4.5"),
					("starts_with", "claude-4-5-haiku"),
					("starts_with", "claude-4.5-haiku"),
				),
			),
			(1.0, 0.1, 5.0, 1.25),
			"claude-haiku-4-5",
		),
		(
			(
				"or",
				(
					("equals", "claude-haiku-5-5"),
					("regex", "^claude-haiku-5-5-\\d{8}$"),
					("starts_with", "claude-haiku-5-5@"),
					("starts_with", "claude-haiku-5.5"),
					("starts_with", "claude-5-5-haiku"),
					("starts_with", "claude-5.5-haiku"),
				),
			),
			(0.1, 0.01, 0.5, 0.125),
			"claude-haiku-5-5",
		),
		(
			("or", (("equals", "claude-mythos-5-2"), ("regex", "^claude-mythos-5-2-\\d{8}$"))),
			(8.0, 0.2, 40.0, 10.0),
			"claude-mythos-5-2",
		),
		(
			(
				"or",
				(
					("starts_with", "claude-opus-4-0"),
					("starts_with", "claude-4-opus"),
					("equals", "claude-opus-4"),
					("equals", "claude-opus-4-20250514"),
				),
			),
			(15.0, 1.5, 75.0, 18.75),
			"claude-opus-4-0",
		),
		(
			("or", (("starts_with", "claude-opus-4-1"), ("starts_with", "claude-opus-4.1"))),
			(15.0, 1.5, 75.0, 18.75),
			"claude-opus-4-1",
		),
		(
			(
				"or",
				(
					("starts_with", "claude-opus-4-5"),
					("starts_with", "claude-opus-4.5"),
					("starts_with", "claude-4-5-opus"),
					("starts_with", "claude-4.5-opus"),
				),
			),
			(5.0, 0.5, 25.0, 6.25),
			"claude-opus-4-5",
		),
		(
			(
				"or",
				(
					("starts_with", "claude-opus-4-6"),
					("starts_with", "claude-opus-4.6"),
					("starts_with", "claude-4-6-opus"),
					("starts_with", "claude-4.6-opus"),
				),
			),
			(5.0, 0.5, 25.0, 6.25),
			"claude-opus-4-6",
		),
		(
			(
				"or",
				(
					("starts_with", "claude-opus-4-7"),
					("starts_with", "claude-opus-4.7"),
					("starts_with", "claude-4-7-opus"),
					("starts_with", "claude-4.7-opus"),
				),
			),
			(5.0, 0.5, 25.0, 6.25),
			"claude-opus-4-7",
		),
		(
			(
				"or",
				(
					("starts_with", "claude-opus-4-8"),
					("starts_with", "claude-opus-4.8"),
					("starts_with", "claude-4-8-opus"),
					("starts_with", "claude-4.8-opus"),
				),
			),
			(5.0, 0.5, 25.0, 6.25),
			"claude-opus-4-8",
		),
		(
			(
				"or",
				(
					("equals", "claude-opus-5"),
					("equals", "claude-opus-5-latest"),
					("regex", "^claude-opus-5[-@]\\d{8}$"),
					("regex", "^claude-opus-5-\\d{4}-\\d{2}-\\d{2}$"),
					("starts_with", "claude-opus-5.0"),
					("starts_with", "claude-5-opus"),
					("starts_with", "claude-5.0-opus"),
				),
			),
			(5.0, 0.5, 25.0, 6.25),
			"claude-opus-5",
		),
		(
			(
				"or",
				(
					("equals", "claude-opus-5-5"),
					("regex", "^claude-opus-5-5-\\d{8}$"),
					("starts_with", "claude-opus-5.5"),
					("starts_with", "claude-5-5-opus"),
					("starts_with", "claude-5.5-opus"),
				),
			),
			(4.0, 0.2, 20.0, 5.0),
			"claude-opus-5-5",
		),
		(
			(
				"or",
				(
					("starts_with", "claude-sonnet-4-2025"),
					("starts_with", "claude-sonnet-4-0"),
					("starts_with", "claude-sonnet-4@"),
					("equals", "claude-sonnet-4"),
					("starts_with", "claude-4-sonnet"),
				),
			),
			(3.0, 0.3, 15.0, 3.75),
			"claude-sonnet-4-0",
		),
		(
			("or", (("starts_with", "claude-sonnet-4-5"), ("starts_with", "claude-sonnet-4.5"))),
			(3.0, 0.3, 15.0, 3.75),
			"claude-sonnet-4-5",
		),
		(
			("or", (("starts_with", "claude-sonnet-4-6"), ("starts_with", "claude-sonnet-4.6"))),
			(3.0, 0.3, 15.0, 3.75),
			"claude-sonnet-4-6",
		),
		(
			(
				"or",
				(
					("equals", "claude-sonnet-5"),
					("regex", "^claude-sonnet-5-\\d{8}$"),
					("starts_with", "claude-sonnet-5@"),
					("starts_with", "claude-sonnet-5.0"),
					("starts_with", "claude-5-sonnet"),
					("starts_with", "claude-5.0-sonnet"),
				),
			),
			(2.0, 0.2, 10.0, 2.5),
			"claude-sonnet-5",
		),
		(
			(
				"or",
				(
					("equals", "claude-sonnet-5-5"),
					("regex", "^claude-sonnet-5-5-\\d{8}$"),
					("starts_with", "claude-sonnet-5-5@"),
					("starts_with", "claude-sonnet-5.5"),
					("starts_with", "claude-5-5-sonnet"),
					("starts_with", "claude-5.5-sonnet"),
				),
			),
			(2.0, 0.1, 10.0, 2.5),
			"claude-sonnet-5-5",
		),
		(("equals", "claude-v1"), (8.0, 8.0, 24.0, None), "claude-v1"),
		(
			(
				"or",
				(
					("ends_with", "global.anthropic.claude-fable-5-1"),
					("contains", "global.anthropic.claude-fable-5-1-v1"),
				),
			),
			(10.0, 0.25, 50.0, 12.5),
			"global.anthropic.claude-fable-5-1-v1:0",
		),
		(
			(
				"or",
				(
					("ends_with", "global.anthropic.claude-fable-5-2"),
					("contains", "global.anthropic.claude-fable-5-2-v1"),
				),
			),
			(8.0, 0.2, 40.0, 10.0),
			"global.anthropic.claude-fable-5-2",
		),
		(
			(
				"or",
				(
					("ends_with", "global.anthropic.claude-fable-5"),
					("contains", "global.anthropic.claude-fable-5-v1"),
				),
			),
			(10.0, 1.0, 50.0, 12.5),
			"global.anthropic.claude-fable-5-v1:0",
		),
		(
			("contains", "global.anthropic.claude-haiku-4-5-20251001"),
			(1.0, 0.1, 5.0, 1.25),
			"global.anthropic.claude-haiku-4-5-20251001-v1:0",
		),
		(
			(
				"or",
				(
					("ends_with", "global.anthropic.claude-haiku-5-5"),
					("contains", "global.anthropic.claude-haiku-5-5-v1"),
				),
			),
			(0.1, 0.01, 0.5, 0.125),
			"global.anthropic.claude-haiku-5-5",
		),
		(
			(
				"or",
				(
					("ends_with", "global.anthropic.claude-mythos-5-2"),
					("contains", "global.anthropic.claude-mythos-5-2-v1"),
				),
			),
			(8.0, 0.2, 40.0, 10.0),
			"global.anthropic.claude-mythos-5-2",
		),
		(
			("contains", "global.anthropic.claude-opus-4-5"),
			(5.0, 0.5, 25.0, 6.25),
			"global.anthropic.claude-opus-4-5-v1:0",
		),
		(
			("contains", "global.anthropic.claude-opus-4-6"),
			(5.0, 0.5, 25.0, 6.25),
			"global.anthropic.claude-opus-4-6-v1:0",
		),
		(
			("contains", "global.anthropic.claude-opus-4-7"),
			(5.0, 0.5, 25.0, 6.25),
			"global.anthropic.claude-opus-4-7-v1:0",
		),
		(
			("contains", "global.anthropic.claude-opus-4-8"),
			(5.0, 0.5, 25.0, 6.25),
			"global.anthropic.claude-opus-4-8-v1:0",
		),
		(
			(
				"or",
				(
					("ends_with", "global.anthropic.claude-opus-5"),
					("contains", "global.anthropic.claude-opus-5-v1"),
				),
			),
			(5.0, 0.5, 25.0, 6.25),
			"global.anthropic.claude-opus-5",
		),
		(
			(
				"or",
				(
					("ends_with", "global.anthropic.claude-opus-5-5"),
					("contains", "global.anthropic.claude-opus-5-5-v1"),
				),
			),
			(4.0, 0.2, 20.0, 5.0),
			"global.anthropic.claude-opus-5-5",
		),
		(
			("contains", "global.anthropic.claude-sonnet-4-20250514"),
			(3.0, 0.3, 15.0, 3.75),
			"global.anthropic.claude-sonnet-4-20250514-v1:0",
		),
		(
			("contains", "global.anthropic.claude-sonnet-4-5-20250929"),
			(3.0, 0.3, 15.0, 3.75),
			"global.anthropic.claude-sonnet-4-5-20250929-v1:0",
		),
		(
			("contains", "global.anthropic.claude-sonnet-4-6"),
			(3.0, 0.3, 15.0, 3.75),
			"global.anthropic.claude-sonnet-4-6-v1:0",
		),
		(
			(
				"or",
				(
					("ends_with", "global.anthropic.claude-sonnet-5-5"),
					("contains", "global.anthropic.claude-sonnet-5-5-v1"),
				),
			),
			(2.0, 0.1, 10.0, 2.5),
			"global.anthropic.claude-sonnet-5-5",
		),
		(
			(
				"or",
				(
					("ends_with", "global.anthropic.claude-sonnet-5"),
					("contains", "global.anthropic.claude-sonnet-5-v1"),
				),
			),
			(2.0, 0.2, 10.0, 2.5),
			"global.anthropic.claude-sonnet-5-v1:0",
		),
		(
			("contains", "claude-3-5-haiku-20241022"),
			(0.8, 0.08, 4.0, 1.0),
			"regional.anthropic.claude-3-5-haiku-20241022-v1:0",
		),
		(
			("contains", "claude-3-5-sonnet-20240620"),
			(3.0, 0.3, 15.0, 3.75),
			"regional.anthropic.claude-3-5-sonnet-20240620-v1:0",
		),
		(
			("contains", "claude-3-5-sonnet-20241022"),
			(3.0, 0.3, 15.0, 3.75),
			"regional.anthropic.claude-3-5-sonnet-20241022-v2:0",
		),
		(
			("contains", "claude-3-7-sonnet-20250219"),
			(3.0, 0.3, 15.0, 3.75),
			"regional.anthropic.claude-3-7-sonnet-20250219-v1:0",
		),
		(
			("contains", "claude-3-haiku-20240307"),
			(0.25, 0.25, 1.25, None),
			"regional.anthropic.claude-3-haiku-20240307-v1:0",
		),
		(
			("contains", "claude-3-opus-20240229"),
			(15.0, 15.0, 75.0, None),
			"regional.anthropic.claude-3-opus-20240229-v1:0",
		),
		(
			("contains", "claude-3-sonnet-20240229"),
			(3.0, 0.3, 15.0, 3.75),
			"regional.anthropic.claude-3-sonnet-20240229-v1:0",
		),
		(
			(
				"or",
				(
					("equals", "anthropic.claude-fable-5-1"),
					("equals", "claude-fable-5-1"),
					("starts_with", "anthropic.claude-fable-5-1-v1"),
					("starts_with", "claude-fable-5-1-v1"),
					("equals", "us.anthropic.claude-fable-5-1"),
					("contains", "us.anthropic.claude-fable-5-1-v1"),
				),
			),
			(11.0, 0.275, 55.0, 13.75),
			"regional.anthropic.claude-fable-5-1-v1:0",
		),
		(
			(
				"or",
				(
					("equals", "anthropic.claude-fable-5-2"),
					("equals", "claude-fable-5-2"),
					("starts_with", "anthropic.claude-fable-5-2-v1"),
					("starts_with", "claude-fable-5-2-v1"),
					("equals", "us.anthropic.claude-fable-5-2"),
					("equals", "eu.anthropic.claude-fable-5-2"),
					("contains", "us.anthropic.claude-fable-5-2-v1"),
					("contains", "eu.anthropic.claude-fable-5-2-v1"),
				),
			),
			(8.8, 0.22, 44.0, 11.0),
			"regional.anthropic.claude-fable-5-2",
		),
		(
			(
				"or",
				(
					("equals", "anthropic.claude-fable-5"),
					("equals", "claude-fable-5"),
					("starts_with", "anthropic.claude-fable-5-v1"),
					("starts_with", "claude-fable-5-v1"),
					("equals", "us.anthropic.claude-fable-5"),
					("equals", "au.anthropic.claude-fable-5"),
					("equals", "eu.anthropic.claude-fable-5"),
					("contains", "us.anthropic.claude-fable-5-v1"),
					("contains", "au.anthropic.claude-fable-5-v1"),
					("contains", "eu.anthropic.claude-fable-5-v1"),
					("contains", "jp.anthropic.claude-fable-5-v1"),
				),
			),
			(11.0, 1.1, 55.0, 13.75),
			"regional.anthropic.claude-fable-5-v1:0",
		),
		(
			(
				"or",
				(
					("starts_with", "anthropic.claude-haiku-4-5-20251001"),
					("starts_with", "claude-haiku-4-5-20251001"),
					("contains", "us.anthropic.claude-haiku-4-5-20251001"),
					("contains", "au.anthropic.claude-haiku-4-5-20251001"),
					("contains", "apac.anthropic.claude-haiku-4-5-20251001"),
					("contains", "eu.anthropic.claude-haiku-4-5-20251001"),
					("contains", "us-gov.anthropic.claude-haiku-4-5-20251001"),
					("contains", "jp.anthropic.claude-haiku-4-5-20251001"),
					("contains", "in.anthropic.claude-haiku-4-5-20251001"),
				),
			),
			(1.1, 0.11, 5.5, 1.375),
			"regional.anthropic.claude-haiku-4-5-20251001-v1:0",
		),
		(
			(
				"or",
				(
					("equals", "anthropic.claude-haiku-5-5"),
					("equals", "claude-haiku-5-5"),
					("starts_with", "anthropic.claude-haiku-5-5-v1"),
					("starts_with", "claude-haiku-5-5-v1"),
					("equals", "us.anthropic.claude-haiku-5-5"),
					("equals", "au.anthropic.claude-haiku-5-5"),
					("equals", "apac.anthropic.claude-haiku-5-5"),
					("equals", "eu.anthropic.claude-haiku-5-5"),
					("equals", "us-gov.anthropic.claude-haiku-5-5"),
					("equals", "jp.anthropic.claude-haiku-5-5"),
					("contains", "us.anthropic.claude-haiku-5-5-v1"),
					("contains", "au.anthropic.claude-haiku-5-5-v1"),
					("contains", "apac.anthropic.claude-haiku-5-5-v1"),
					("contains", "eu.anthropic.claude-haiku-5-5-v1"),
					("contains", "us-gov.anthropic.claude-haiku-5-5-v1"),
					("contains", "jp.anthropic.claude-haiku-5-5-v1"),
				),
			),
			(0.11, 0.011, 0.55, 0.1375),
			"regional.anthropic.claude-haiku-5-5",
		),
		(
			(
				"or",
				(
					("equals", "anthropic.claude-mythos-5-2"),
					("equals", "claude-mythos-5-2"),
					("starts_with", "anthropic.claude-mythos-5-2-v1"),
					("starts_with", "claude-mythos-5-2-v1"),
					("equals", "us.anthropic.claude-mythos-5-2"),
					("equals", "eu.anthropic.claude-mythos-5-2"),
					("contains", "us.anthropic.claude-mythos-5-2-v1"),
					("contains", "eu.anthropic.claude-mythos-5-2-v1"),
				),
			),
			(8.8, 0.22, 44.0, 11.0),
			"regional.anthropic.claude-mythos-5-2",
		),
		(
			(
				"or",
				(
					("starts_with", "anthropic.claude-opus-4-1-20250805"),
					("starts_with", "claude-opus-4-1-20250805"),
					("contains", "us.anthropic.claude-opus-4-1-20250805"),
					("contains", "au.anthropic.claude-opus-4-1-20250805"),
					("contains", "apac.anthropic.claude-opus-4-1-20250805"),
					("contains", "eu.anthropic.claude-opus-4-1-20250805"),
					("contains", "us-gov.anthropic.claude-opus-4-1-20250805"),
					("contains", "jp.anthropic.claude-opus-4-1-20250805"),
				),
			),
			(15.0, 1.5, 75.0, 18.75),
			"regional.anthropic.claude-opus-4-1-20250805-v1:0",
		),
		(
			(
				"or",
				(
					("starts_with", "anthropic.claude-opus-4-20250514"),
					("starts_with", "claude-opus-4-20250514"),
					("contains", "us.anthropic.claude-opus-4-20250514"),
					("contains", "au.anthropic.claude-opus-4-20250514"),
					("contains", "apac.anthropic.claude-opus-4-20250514"),
					("contains", "eu.anthropic.claude-opus-4-20250514"),
					("contains", "us-gov.anthropic.claude-opus-4-20250514"),
					("contains", "jp.anthropic.claude-opus-4-20250514"),
				),
			),
			(15.0, 1.5, 75.0, 18.75),
			"regional.anthropic.claude-opus-4-20250514-v1:0",
		),
		(
			(
				"or",
				(
					("starts_with", "anthropic.claude-opus-4-5"),
					("starts_with", "claude-opus-4-5"),
					("contains", "us.anthropic.claude-opus-4-5"),
					("contains", "au.anthropic.claude-opus-4-5"),
					("contains", "apac.anthropic.claude-opus-4-5"),
					("contains", "eu.anthropic.claude-opus-4-5"),
					("contains", "us-gov.anthropic.claude-opus-4-5"),
					("contains", "jp.anthropic.claude-opus-4-5"),
				),
			),
			(5.5, 0.55, 27.5, 6.875),
			"regional.anthropic.claude-opus-4-5-v1:0",
		),
		(
			(
				"or",
				(
					("starts_with", "anthropic.claude-opus-4-6"),
					("starts_with", "claude-opus-4-6"),
					("contains", "us.anthropic.claude-opus-4-6"),
					("contains", "au.anthropic.claude-opus-4-6"),
					("contains", "apac.anthropic.claude-opus-4-6"),
					("contains", "eu.anthropic.claude-opus-4-6"),
					("contains", "us-gov.anthropic.claude-opus-4-6"),
					("contains", "jp.anthropic.claude-opus-4-6"),
				),
			),
			(5.5, 0.55, 27.5, 6.875),
			"regional.anthropic.claude-opus-4-6-v1:0",
		),
		(
			(
				"or",
				(
					("starts_with", "anthropic.claude-opus-4-7"),
					("starts_with", "claude-opus-4-7"),
					("contains", "us.anthropic.claude-opus-4-7"),
					("contains", "au.anthropic.claude-opus-4-7"),
					("contains", "apac.anthropic.claude-opus-4-7"),
					("contains", "eu.anthropic.claude-opus-4-7"),
					("contains", "us-gov.anthropic.claude-opus-4-7"),
					("contains", "jp.anthropic.claude-opus-4-7"),
				),
			),
			(5.5, 0.55, 27.5, 6.875),
			"regional.anthropic.claude-opus-4-7-v1:0",
		),
		(
			(
				"or",
				(
					("starts_with", "anthropic.claude-opus-4-8"),
					("starts_with", "claude-opus-4-8"),
					("contains", "us.anthropic.claude-opus-4-8"),
					("contains", "au.anthropic.claude-opus-4-8"),
					("contains", "eu.anthropic.claude-opus-4-8"),
					("contains", "jp.anthropic.claude-opus-4-8"),
				),
			),
			(5.5, 0.55, 27.5, 6.875),
			"regional.anthropic.claude-opus-4-8-v1:0",
		),
		(
			(
				"or",
				(
					("equals", "anthropic.claude-opus-5"),
					("equals", "claude-opus-5"),
					("starts_with", "anthropic.claude-opus-5-v1"),
					("starts_with", "claude-opus-5-v1"),
					("equals", "us.anthropic.claude-opus-5"),
					("equals", "au.anthropic.claude-opus-5"),
					("equals", "eu.anthropic.claude-opus-5"),
					("equals", "jp.anthropic.claude-opus-5"),
					("equals", "in.anthropic.claude-opus-5"),
					("contains", "us.anthropic.claude-opus-5-v1"),
					("contains", "au.anthropic.claude-opus-5-v1"),
					("contains", "eu.anthropic.claude-opus-5-v1"),
					("contains", "jp.anthropic.claude-opus-5-v1"),
					("contains", "in.anthropic.claude-opus-5-v1"),
				),
			),
			(5.5, 0.55, 27.5, 6.875),
			"regional.anthropic.claude-opus-5",
		),
		(
			(
				"or",
				(
					("equals", "anthropic.claude-opus-5-5"),
					("equals", "claude-opus-5-5"),
					("starts_with", "anthropic.claude-opus-5-5-v1"),
					("starts_with", "claude-opus-5-5-v1"),
					("equals", "us.anthropic.claude-opus-5-5"),
					("equals", "au.anthropic.claude-opus-5-5"),
					("equals", "eu.anthropic.claude-opus-5-5"),
					("equals", "jp.anthropic.claude-opus-5-5"),
					("contains", "us.anthropic.claude-opus-5-5-v1"),
					("contains", "au.anthropic.claude-opus-5-5-v1"),
					("contains", "eu.anthropic.claude-opus-5-5-v1"),
					("contains", "jp.anthropic.claude-opus-5-5-v1"),
				),
			),
			(4.4, 0.22, 22.0, 5.5),
			"regional.anthropic.claude-opus-5-5",
		),
		(
			(
				"or",
				(
					("starts_with", "anthropic.claude-sonnet-4-20250514"),
					("starts_with", "claude-sonnet-4-20250514"),
					("contains", "us.anthropic.claude-sonnet-4-20250514"),
					("contains", "au.anthropic.claude-sonnet-4-20250514"),
					("contains", "apac.anthropic.claude-sonnet-4-20250514"),
					("contains", "eu.anthropic.claude-sonnet-4-20250514"),
					("contains", "us-gov.anthropic.claude-sonnet-4-20250514"),
					("contains", "jp.anthropic.claude-sonnet-4-20250514"),
				),
			),
			(3.0, 0.3, 15.0, 3.75),
			"regional.anthropic.claude-sonnet-4-20250514-v1:0",
		),
		(
			(
				"or",
				(
					("starts_with", "anthropic.claude-sonnet-4-5-20250929"),
					("starts_with", "claude-sonnet-4-5-20250929"),
					("contains", "us.anthropic.claude-sonnet-4-5-20250929"),
					("contains", "au.anthropic.claude-sonnet-4-5-20250929"),
					("contains", "apac.anthropic.claude-sonnet-4-5-20250929"),
					("contains", "eu.anthropic.claude-sonnet-4-5-20250929"),
					("contains", "us-gov.anthropic.claude-sonnet-4-5-20250929"),
					("contains", "jp.anthropic.claude-sonnet-4-5-20250929"),
				),
			),
			(3.3, 0.33, 16.5, 4.125),
			"regional.anthropic.claude-sonnet-4-5-20250929-v1:0",
		),
		(
			(
				"or",
				(
					("starts_with", "anthropic.claude-sonnet-4-6"),
					("starts_with", "claude-sonnet-4-6"),
					("contains", "us.anthropic.claude-sonnet-4-6"),
					("contains", "au.anthropic.claude-sonnet-4-6"),
					("contains", "apac.anthropic.claude-sonnet-4-6"),
					("contains", "eu.anthropic.claude-sonnet-4-6"),
					("contains", "us-gov.anthropic.claude-sonnet-4-6"),
					("contains", "jp.anthropic.claude-sonnet-4-6"),
				),
			),
			(3.3, 0.33, 16.5, 4.125),
			"regional.anthropic.claude-sonnet-4-6-v1:0",
		),
		(
			(
				"or",
				(
					("equals", "anthropic.claude-sonnet-5-5"),
					("equals", "claude-sonnet-5-5"),
					("starts_with", "anthropic.claude-sonnet-5-5-v1"),
					("starts_with", "claude-sonnet-5-5-v1"),
					("equals", "us.anthropic.claude-sonnet-5-5"),
					("equals", "au.anthropic.claude-sonnet-5-5"),
					("equals", "apac.anthropic.claude-sonnet-5-5"),
					("equals", "eu.anthropic.claude-sonnet-5-5"),
					("equals", "us-gov.anthropic.claude-sonnet-5-5"),
					("equals", "jp.anthropic.claude-sonnet-5-5"),
					("contains", "us.anthropic.claude-sonnet-5-5-v1"),
					("contains", "au.anthropic.claude-sonnet-5-5-v1"),
					("contains", "apac.anthropic.claude-sonnet-5-5-v1"),
					("contains", "eu.anthropic.claude-sonnet-5-5-v1"),
					("contains", "us-gov.anthropic.claude-sonnet-5-5-v1"),
					("contains", "jp.anthropic.claude-sonnet-5-5-v1"),
				),
			),
			(2.2, 0.11, 11.0, 2.75),
			"regional.anthropic.claude-sonnet-5-5",
		),
		(
			(
				"or",
				(
					("equals", "anthropic.claude-sonnet-5"),
					("equals", "claude-sonnet-5"),
					("starts_with", "anthropic.claude-sonnet-5-v1"),
					("starts_with", "claude-sonnet-5-v1"),
					("equals", "us.anthropic.claude-sonnet-5"),
					("equals", "au.anthropic.claude-sonnet-5"),
					("equals", "apac.anthropic.claude-sonnet-5"),
					("equals", "eu.anthropic.claude-sonnet-5"),
					("equals", "us-gov.anthropic.claude-sonnet-5"),
					("equals", "jp.anthropic.claude-sonnet-5"),
					("equals", "in.anthropic.claude-sonnet-5"),
					("contains", "us.anthropic.claude-sonnet-5-v1"),
					("contains", "au.anthropic.claude-sonnet-5-v1"),
					("contains", "apac.anthropic.claude-sonnet-5-v1"),
					("contains", "eu.anthropic.claude-sonnet-5-v1"),
					("contains", "us-gov.anthropic.claude-sonnet-5-v1"),
					("contains", "jp.anthropic.claude-sonnet-5-v1"),
					("contains", "in.anthropic.claude-sonnet-5-v1"),
				),
			),
			(2.2, 0.22, 11.0, 2.75),
			"regional.anthropic.claude-sonnet-5-v1:0",
		),
	),
	"google": (
		(("contains", "claude-3-5-haiku"), (0.8, 0.08, 4.0, 1.0), "claude-3-5-haiku"),
		(("contains", "claude-3-5-sonnet"), (3.0, 0.3, 15.0, 3.75), "claude-3-5-sonnet"),
		(("contains", "claude-3-7-sonnet"), (3.0, 0.3, 15.0, 3.75), "claude-3-7-sonnet"),
		(("contains", "claude-3-haiku"), (0.25, 0.03, 1.25, 0.3), "claude-3-haiku"),
		(("contains", "claude-3-opus"), (15.0, 1.5, 75.0, 18.75), "claude-3-opus"),
		(
			(
				"or",
				(
					("contains", "claude-4-opus"),
					("contains", "claude-opus-4@"),
					("contains", "claude-opus-4-0"),
					("contains", "claude-opus-4-1"),
					("equals", "claude-opus-4"),
				),
			),
			(15.0, 1.5, 75.0, 18.75),
			"claude-4-opus",
		),
		(
			(
				"or",
				(
					("contains", "claude-4-sonnet"),
					("contains", "claude-sonnet-4-0"),
					("contains", "claude-sonnet-4@"),
					("contains", "claude-sonnet-4-2025"),
					("equals", "claude-sonnet-4"),
					("equals", "anthropic/claude-sonnet-4"),
				),
			),
			(3.0, 0.3, 15.0, 3.75),
			"claude-4-sonnet",
		),
		(
			("or", (("ends_with", "claude-fable-5"), ("contains", "claude-fable-5@"))),
			(10.0, 1.0, 50.0, 12.5),
			"claude-fable-5",
		),
		(
			("or", (("ends_with", "claude-fable-5-1"), ("contains", "claude-fable-5-1@"))),
			(10.0, 0.25, 50.0, 12.5),
			"claude-fable-5-1",
		),
		(
			("or", (("ends_with", "claude-fable-5-2"), ("contains", "claude-fable-5-2@"))),
			(8.0, 0.2, 40.0, 10.0),
			"claude-fable-5-2",
		),
		(
			("or", (("contains", "claude-haiku-4-5"), ("contains", "claude-haiku-4.5"))),
			(1.0, 0.1, 5.0, 1.25),
			"claude-haiku-4-5",
		),
		(
			(
				"or",
				(
					("contains", "claude-haiku-5-5"),
					("contains", "claude-haiku-5.5"),
					("contains", "claude-5-5-haiku"),
					("contains", "claude-5.5-haiku"),
				),
			),
			(0.1, 0.01, 0.5, 0.125),
			"claude-haiku-5-5",
		),
		(
			(
				"or",
				(
					("contains", "claude-4-5-opus"),
					("contains", "claude-opus-4-5"),
					("contains", "claude-4.5-opus"),
					("contains", "claude-opus-4.5"),
				),
			),
			(5.0, 0.5, 25.0, 6.25),
			"claude-opus-4-5",
		),
		(
			(
				"or",
				(
					("contains", "claude-4-6-opus"),
					("contains", "claude-opus-4-6"),
					("contains", "claude-4.6-opus"),
					("contains", "claude-opus-4.6"),
				),
			),
			(5.0, 0.5, 25.0, 6.25),
			"claude-opus-4-6",
		),
		(
			(
				"or",
				(
					("contains", "claude-4-7-opus"),
					("contains", "claude-opus-4-7"),
					("contains", "claude-4.7-opus"),
					("contains", "claude-opus-4.7"),
				),
			),
			(5.0, 0.5, 25.0, 6.25),
			"claude-opus-4-7",
		),
		(
			(
				"or",
				(
					("contains", "claude-4-8-opus"),
					("contains", "claude-opus-4-8"),
					("contains", "claude-4.8-opus"),
					("contains", "claude-opus-4.8"),
				),
			),
			(5.0, 0.5, 25.0, 6.25),
			"claude-opus-4-8",
		),
		(
			(
				"or",
				(
					("contains", "claude-5-opus"),
					("ends_with", "claude-opus-5"),
					("contains", "claude-opus-5@"),
					("contains", "claude-5.0-opus"),
					("contains", "claude-opus-5.0"),
				),
			),
			(5.0, 0.5, 25.0, 6.25),
			"claude-opus-5",
		),
		(
			(
				"or",
				(
					("contains", "claude-5-5-opus"),
					("ends_with", "claude-opus-5-5"),
					("contains", "claude-opus-5-5@"),
					("contains", "claude-5.5-opus"),
					("contains", "claude-opus-5.5"),
				),
			),
			(4.0, 0.2, 20.0, 5.0),
			"claude-opus-5-5",
		),
		(
			("or", (("contains", "claude-sonnet-4-5"), ("contains", "claude-sonnet-4.5"))),
			(3.0, 0.3, 15.0, 3.75),
			"claude-sonnet-4-5",
		),
		(
			("or", (("contains", "claude-sonnet-4-6"), ("contains", "claude-sonnet-4.6"))),
			(3.0, 0.3, 15.0, 3.75),
			"claude-sonnet-4-6",
		),
		(
			(
				"or",
				(
					("contains", "claude-sonnet-5-5"),
					("contains", "claude-sonnet-5.5"),
					("contains", "claude-5-5-sonnet"),
					("contains", "claude-5.5-sonnet"),
				),
			),
			(2.0, 0.1, 10.0, 2.5),
			"claude-sonnet-5-5",
		),
		(
			("equals", "gemini-1.0-pro-vision-001"),
			(0.125, 0.125, 0.375, None),
			"gemini-1.0-pro-vision-001",
		),
		(("contains", "gemini-1.5-flash"), (0.075, 0.01875, 0.3, None), "gemini-1.5-flash"),
		(("contains", "gemini-1.5-pro"), (1.25, 1.25, 5.0, None), "gemini-1.5-pro"),
		(
			(
				"or",
				(
					("ends_with", "gemini-2.0-flash"),
					("contains", "gemini-2.0-flash-0"),
					("contains", "gemini-2.0-flash-exp"),
					("contains", "gemini-2.0-flash-thinking"),
					("contains", "gemini-2.0-flash-latest"),
				),
			),
			(0.1, 0.025, 0.4, None),
			"gemini-2.0-flash",
		),
		(("contains", "gemini-2.0-flash-lite"), (0.075, 0.075, 0.3, None), "gemini-2.0-flash-lite"),
		(
			(
				"or",
				(
					("equals", "gemini-2.5-flash"),
					("equals", "gemini-2.5-flash-latest"),
					("equals", "gemini-2.5-flash-preview-09-2025"),
				),
			),
			(0.3, 0.03, 2.5, None),
			"gemini-2.5-flash",
		),
		(
			(
				"or",
				(
					("equals", "gemini-2.5-flash-image"),
					("equals", "gemini-2.5-flash-image-preview"),
				),
			),
			(0.3, 0.3, 2.5, None),
			"gemini-2.5-flash-image",
		),
		(
			(
				"or",
				(
					("equals", "gemini-2.5-flash-lite"),
					(
						"and",
						(
							("starts_with", "gemini-2.5-flash-lite-preview"),
							("regex", "^(?!.*-[tT][tT][sS](?:$|-))"),
						),
					),
				),
			),
			(0.1, 0.01, 0.4, None),
			"gemini-2.5-flash-lite",
		),
		(
			("equals", "gemini-2.5-flash-lite-preview-tts"),
			(0.5, 0.5, 10.0, None),
			"gemini-2.5-flash-lite-preview-tts",
		),
		(
			(
				"or",
				(
					("contains", "gemini-2.5-flash-preview-05-20"),
					("contains", "gemini-2.5-flash-preview-04-17"),
					("equals", "gemini-2.5-flash-preview-05-20:thinking"),
					("equals", "gemini-2.5-flash-preview"),
					("equals", "gemini-2.5-flash-preview:thinking"),
				),
			),
			(0.15, 0.15, 0.6, None),
			"gemini-2.5-flash-preview",
		),
		(
			(
				"or",
				(("equals", "gemini-2.5-flash-tts"), ("equals", "gemini-2.5-flash-preview-tts")),
			),
			(0.5, 0.5, 10.0, None),
			"gemini-2.5-flash-tts",
		),
		(
			("and", (("starts_with", "gemini-2.5-pro"), ("regex", "^(?!.*-[tT][tT][sS](?:$|-))"))),
			(1.25, 0.125, 10.0, None),
			"gemini-2.5-pro",
		),
		(
			("or", (("equals", "gemini-2.5-pro-tts"), ("equals", "gemini-2.5-pro-preview-tts"))),
			(1.0, 1.0, 20.0, None),
			"gemini-2.5-pro-tts",
		),
		(
			(
				"or",
				(("equals", "gemini-3-flash-preview"), ("starts_with", "gemini-3-flash-preview-")),
			),
			(0.5, 0.05, 3.0, None),
			"gemini-3-flash-preview",
		),
		(
			(
				"or",
				(("equals", "gemini-3-pro-image"), ("starts_with", "gemini-3-pro-image-preview")),
			),
			(2.0, 2.0, 12.0, None),
			"gemini-3-pro-image-preview",
		),
		(
			(
				"or",
				(("starts_with", "gemini-3-pro-preview"), ("equals", "gemini-3-pro-text-preview")),
			),
			(2.0, 0.2, 12.0, None),
			"gemini-3-pro-preview",
		),
		(
			(
				"or",
				(
					("equals", "gemini-3.1-flash-image"),
					("starts_with", "gemini-3.1-flash-image-preview"),
				),
			),
			(0.5, 0.5, 3.0, None),
			"gemini-3.1-flash-image-preview",
		),
		(
			(
				"or",
				(
					("equals", "gemini-3.1-flash-lite"),
					("starts_with", "gemini-3.1-flash-lite-preview"),
				),
			),
			(0.25, 0.025, 1.5, None),
			"gemini-3.1-flash-lite",
		),
		(
			("starts_with", "gemini-3.1-flash-lite-image"),
			(0.25, 0.25, 1.5, None),
			"gemini-3.1-flash-lite-image",
		),
		(
			("starts_with", "gemini-3.1-flash-live-preview"),
			(0.75, 0.75, 4.5, None),
			"gemini-3.1-flash-live-preview",
		),
		(
			("equals", "gemini-3.1-flash-tts-preview"),
			(1.0, 1.0, 20.0, None),
			"gemini-3.1-flash-tts-preview",
		),
		(
			("or", (("starts_with", "gemini-3.1-pro-preview"), ("equals", "gemini-pro-latest"))),
			(2.0, 0.2, 12.0, None),
			"gemini-3.1-pro-preview",
		),
		(
			(
				"or",
				(
					("equals", "gemini-3.5-flash"),
					("starts_with", "gemini-3.5-flash-preview"),
					("regex", "^gemini-3\\.5-flash-\\d"),
				),
			),
			(1.5, 0.15, 9.0, None),
			"gemini-3.5-flash",
		),
		(
			(
				"or",
				(("starts_with", "gemini-3.5-flash-lite"), ("equals", "gemini-flash-lite-latest")),
			),
			(0.3, 0.03, 2.5, None),
			"gemini-3.5-flash-lite",
		),
		(("starts_with", "gemini-3.6-flash"), (0.75, 0.075, 3.75, None), "gemini-3.6-flash"),
		(("starts_with", "gemini-3.7-flash"), (0.75, 0.075, 3.75, None), "gemini-3.7-flash"),
		(
			(
				"or",
				(
					(
						"and",
						(
							("starts_with", "gemini-3.8-flash"),
							("regex", "^(?!.*-[tT][tT][sS](?:$|-))"),
						),
					),
					("equals", "gemini-flash-latest"),
				),
			),
			(0.75, 0.075, 3.75, None),
			"gemini-3.8-flash",
		),
		(
			("equals", "gemini-3.8-flash-lite-tts"),
			(0.5, 0.5, 6.0, None),
			"gemini-3.8-flash-lite-tts",
		),
		(("equals", "gemini-3.8-flash-tts"), (0.5, 0.5, 9.0, None), "gemini-3.8-flash-tts"),
		(("starts_with", "gemini-3.8-live"), (0.75, 0.75, 4.5, None), "gemini-3.8-live"),
		(
			(
				"or",
				(
					("equals", "gemini-4-argon"),
					("starts_with", "gemini-4-argon-preview"),
					("regex", "^gemini-4-argon-\\d"),
				),
			),
			(4.0, 0.2, 20.0, None),
			"gemini-4-argon",
		),
		(("equals", "gemini-flash-1.5"), (0.075, 0.01875, 0.3, None), "gemini-flash-1.5"),
		(("equals", "gemini-flash-1.5-8b"), (0.0375, 0.01, 0.15, None), "gemini-flash-1.5-8b"),
		(
			(
				"or",
				(
					("starts_with", "gemini-live-2.5-flash"),
					("starts_with", "gemini-2.5-flash-native-audio-preview"),
					("equals", "gemini-2.5-flash-native-audio-latest"),
				),
			),
			(0.5, 0.5, 2.0, None),
			"gemini-live-2.5-flash",
		),
		(("equals", "gemini-nano-banana-2.1"), (1.5, 1.5, 7.5, None), "gemini-nano-banana-2.1"),
		(("equals", "gemini-omni-1.1-flash"), (1.5, 1.5, 9.0, None), "gemini-omni-1.1-flash"),
		(
			("starts_with", "gemini-omni-flash-preview"),
			(1.5, 1.5, 9.0, None),
			"gemini-omni-flash-preview",
		),
		(
			("or", (("equals", "gemini-pro"), ("equals", "gemini-1.0-pro"))),
			(0.125, 0.125, 0.375, None),
			"gemini-pro",
		),
		(("equals", "gemini-pro-1.5"), (1.25, 0.3125, 5.0, None), "gemini-pro-1.5"),
		(
			("equals", "gemini-robotics-er-2-preview"),
			(1.0, 0.1, 5.0, None),
			"gemini-robotics-er-2-preview",
		),
		(
			("equals", "gemini-robotics-er-2-streaming-preview"),
			(1.0, 1.0, 5.0, None),
			"gemini-robotics-er-2-streaming-preview",
		),
		(("equals", "gemma-2-27b-it"), (0.65, 0.65, 0.65, None), "gemma-2-27b-it"),
		(
			("equals", "gemma-4-26b-a4b-it-maas"),
			(0.15, 0.015, 0.6, None),
			"gemma-4-26b-a4b-it-maas",
		),
	),
	"openai": (
		(("or", (("equals", "ada"), ("equals", "text-ada-001"))), (0.4, 0.4, 0.4, None), "ada"),
		(("equals", "babbage"), (0.5, 0.5, 0.5, None), "babbage"),
		(("equals", "babbage-002"), (0.4, 0.4, 0.4, None), "babbage-002"),
		(("equals", "chatgpt-4o-latest"), (5.0, 5.0, 15.0, None), "chatgpt-4o-latest"),
		(("equals", "chatgpt-image-latest"), (5.0, 1.25, 10.0, None), "chatgpt-image-latest"),
		(
			("or", (("equals", "codex-mini"), ("equals", "codex-mini-latest"))),
			(1.5, 0.375, 6.0, None),
			"codex-mini",
		),
		(("starts_with", "computer-use"), (3.0, 3.0, 12.0, None), "computer-use"),
		(
			("or", (("equals", "curie"), ("equals", "text-curie-001"))),
			(2.0, 2.0, 2.0, None),
			"curie",
		),
		(
			("or", (("equals", "davinci"), ("equals", "text-davinci-001"))),
			(20.0, 20.0, 20.0, None),
			"davinci",
		),
		(("equals", "davinci-002"), (2.0, 2.0, 2.0, None), "davinci-002"),
		(("starts_with", "ft:gpt-3.5-turbo"), (3.0, 3.0, 6.0, None), "ft:gpt-3.5-turbo-"),
		(("starts_with", "ft:gpt-4o-2024-"), (3.75, 3.75, 15.0, None), "ft:gpt-4o"),
		(("starts_with", "ft:gpt-4o-mini-2024-"), (0.3, 0.3, 1.2, None), "ft:gpt-4o-mini"),
		(
			("or", (("equals", "gpt-3.5-turbo-0301"), ("equals", "gpt-3.5-0301"))),
			(1.5, 1.5, 2.0, None),
			"gpt-3.5-0301",
		),
		(
			(
				"or",
				(
					("equals", "gpt-3.5-turbo"),
					("equals", "gpt-35-turbo"),
					("equals", "gpt-3.5-turbo-0125"),
				),
			),
			(0.5, 0.5, 1.5, None),
			"gpt-3.5-turbo",
		),
		(("equals", "gpt-3.5-turbo-0613"), (1.5, 1.5, 2.0, None), "gpt-3.5-turbo-0613"),
		(("equals", "gpt-3.5-turbo-1106"), (1.0, 1.0, 2.0, None), "gpt-3.5-turbo-1106"),
		(
			(
				"or",
				(
					("equals", "gpt-3.5-turbo-16k"),
					("equals", "gpt-3.5-turbo-16k-0613"),
					("equals", "gpt-35-turbo-16k-0613"),
					("equals", "gpt-35-turbo-16k"),
				),
			),
			(3.0, 3.0, 4.0, None),
			"gpt-3.5-turbo-16k",
		),
		(
			(
				"or",
				(
					("starts_with", "gpt-3.5-turbo-instruct"),
					("equals", "gpt-3.5-turbo-instruct-0914"),
				),
			),
			(1.5, 1.5, 2.0, None),
			"gpt-3.5-turbo-instruct",
		),
		(
			(
				"or",
				(
					("equals", "gpt-4"),
					("equals", "gpt-4-0314"),
					("equals", "gpt-4-0613"),
					("starts_with", "ft:gpt-4-0"),
				),
			),
			(30.0, 30.0, 60.0, None),
			"gpt-4",
		),
		(
			(
				"or",
				(
					("equals", "gpt-4-32k"),
					("equals", "gpt-4-32k-0314"),
					("equals", "gpt-4-32k-0613"),
				),
			),
			(60.0, 60.0, 120.0, None),
			"gpt-4-32k",
		),
		(
			(
				"or",
				(
					("equals", "gpt-4-turbo"),
					("equals", "gpt-4-turbo-2024-04-09"),
					("equals", "gpt-4-turbo-0125-preview"),
					("equals", "gpt-4-0125-preview"),
					("equals", "gpt-4-1106-preview"),
					("equals", "gpt-4-turbo-preview"),
				),
			),
			(10.0, 10.0, 30.0, None),
			"gpt-4-turbo",
		),
		(
			("or", (("equals", "gpt-4-vision-preview"), ("equals", "gpt-4-1106-vision-preview"))),
			(10.0, 10.0, 30.0, None),
			"gpt-4-vision-preview",
		),
		(
			("or", (("equals", "gpt-4.1"), ("equals", "gpt-4.1-2025-04-14"))),
			(2.0, 0.5, 8.0, None),
			"gpt-4.1",
		),
		(
			("or", (("equals", "gpt-4.1-mini"), ("equals", "gpt-4.1-mini-2025-04-14"))),
			(0.4, 0.1, 1.6, None),
			"gpt-4.1-mini",
		),
		(
			("or", (("equals", "gpt-4.1-nano"), ("equals", "gpt-4.1-nano-2025-04-14"))),
			(0.1, 0.025, 0.4, None),
			"gpt-4.1-nano",
		),
		(("starts_with", "gpt-4.5-preview"), (75.0, 37.5, 150.0, None), "gpt-4.5-preview"),
		(
			(
				"or",
				(
					("equals", "gpt-4o"),
					("equals", "gpt-4o-2024-08-06"),
					("equals", "gpt-4o-2024-11-20"),
				),
			),
			(2.5, 1.25, 10.0, None),
			"gpt-4o",
		),
		(("equals", "gpt-4o-2024-05-13"), (5.0, 5.0, 15.0, None), "gpt-4o-2024-05-13"),
		(("starts_with", "gpt-4o-audio-preview"), (2.5, 2.5, 10.0, None), "gpt-4o-audio-preview"),
		(
			(
				"or",
				(
					("equals", "gpt-4o-mini"),
					("equals", "gpt-4o-mini-2024-07-18"),
					("equals", "gpt-4o-mini-search-preview"),
					("equals", "gpt-4o-mini-search-preview-2025-03-11"),
				),
			),
			(0.15, 0.075, 0.6, None),
			"gpt-4o-mini",
		),
		(
			("starts_with", "gpt-4o-mini-2024-07-18.ft-"),
			(0.3, 0.3, 1.2, None),
			"gpt-4o-mini-2024-07-18.ft-",
		),
		(
			("starts_with", "gpt-4o-mini-audio"),
			(0.15, 0.15, 0.6, None),
			"gpt-4o-mini-audio-preview",
		),
		(
			("starts_with", "gpt-4o-mini-realtime"),
			(0.6, 0.3, 2.4, None),
			"gpt-4o-mini-realtime-preview",
		),
		(("equals", "gpt-4o-mini-transcribe"), (1.25, 1.25, 5.0, None), "gpt-4o-mini-transcribe"),
		(("equals", "gpt-4o-mini-tts"), (0.6, 0.6, 12.0, None), "gpt-4o-mini-tts"),
		(("starts_with", "gpt-4o-realtime"), (5.0, 2.5, 20.0, None), "gpt-4o-realtime-preview"),
		(
			(
				"or",
				(
					("equals", "gpt-4o-search-preview"),
					("equals", "gpt-4o-search-preview-2025-03-11"),
				),
			),
			(2.5, 2.5, 10.0, None),
			"gpt-4o-search-preview",
		),
		(
			("or", (("equals", "gpt-4o-transcribe"), ("equals", "gpt-4o-transcribe-diarize"))),
			(2.5, 2.5, 10.0, None),
			"gpt-4o-transcribe",
		),
		(("equals", "gpt-4o:extended"), (6.0, 6.0, 18.0, None), "gpt-4o:extended"),
		(
			(
				"or",
				(
					("equals", "gpt-5"),
					("equals", "gpt-5-2025-08-07"),
					("equals", "gpt-5-chat"),
					("equals", "gpt-5-chat-latest"),
					("equals", "gpt-5-codex"),
				),
			),
			(1.25, 0.125, 10.0, None),
			"gpt-5",
		),
		(("equals", "gpt-5-image"), (10.0, 1.25, 10.0, None), "gpt-5-image"),
		(("equals", "gpt-5-image-mini"), (2.5, 0.25, 2.0, None), "gpt-5-image-mini"),
		(
			("or", (("equals", "gpt-5-mini"), ("equals", "gpt-5-mini-2025-08-07"))),
			(0.25, 0.025, 2.0, None),
			"gpt-5-mini",
		),
		(
			("or", (("equals", "gpt-5-nano"), ("starts_with", "gpt-5-nano-"))),
			(0.05, 0.005, 0.4, None),
			"gpt-5-nano",
		),
		(
			("or", (("equals", "gpt-5-pro"), ("equals", "gpt-5-pro-2025-10-06"))),
			(15.0, 15.0, 120.0, None),
			"gpt-5-pro",
		),
		(("equals", "gpt-5-search-api"), (1.25, 0.125, 10.0, None), "gpt-5-search-api"),
		(
			(
				"or",
				(
					("equals", "gpt-5.1"),
					("equals", "gpt-5.1-2025-11-13"),
					("equals", "gpt-5.1-codex"),
					("equals", "gpt-5.1-codex-max"),
					("equals", "gpt-5.1-chat"),
					("equals", "gpt-5.1-chat-latest"),
					("equals", "gpt-5-1"),
					("equals", "gpt-5-1-2025-11-13"),
					("equals", "gpt-5-1-codex"),
					("equals", "gpt-5-1-codex-max"),
					("equals", "gpt-5-1-chat"),
					("equals", "gpt-5-1-chat-latest"),
				),
			),
			(1.25, 0.125, 10.0, None),
			"gpt-5.1",
		),
		(
			(
				"or",
				(
					("equals", "gpt-5.1-codex-mini"),
					("equals", "gpt-5.1-mini"),
					("equals", "gpt-5-1-codex-mini"),
					("equals", "gpt-5-1-mini"),
				),
			),
			(0.25, 0.025, 2.0, None),
			"gpt-5.1-codex-mini",
		),
		(
			(
				"or",
				(
					("equals", "gpt-5.2"),
					("equals", "gpt-5.2-2025-12-11"),
					("equals", "gpt-5-2"),
					("equals", "gpt-5-2-2025-12-11"),
					("equals", "gpt-5.2-chat"),
					("equals", "gpt-5.2-chat-latest"),
					("equals", "gpt-5-2-chat"),
					("equals", "gpt-5-2-chat-latest"),
					("equals", "gpt-5.2-codex"),
					("equals", "gpt-5-2-codex"),
				),
			),
			(1.75, 0.175, 14.0, None),
			"gpt-5.2",
		),
		(
			(
				"or",
				(
					("equals", "gpt-5.2-pro"),
					("equals", "gpt-5.2-pro-2025-12-11"),
					("equals", "gpt-5-2-pro-2025-12-11"),
				),
			),
			(21.0, 21.0, 168.0, None),
			"gpt-5.2-pro",
		),
		(
			(
				"or",
				(
					("equals", "gpt-5.3"),
					("equals", "gpt-5-3"),
					("equals", "gpt-5.3-chat"),
					("equals", "gpt-5.3-chat-latest"),
					("equals", "gpt-5-3-chat"),
					("equals", "gpt-5-3-chat-latest"),
				),
			),
			(1.75, 0.175, 14.0, None),
			"gpt-5.3",
		),
		(
			("or", (("equals", "gpt-5.3-codex"), ("equals", "gpt-5-3-codex"))),
			(1.75, 0.175, 14.0, None),
			"gpt-5.3-codex",
		),
		(
			(
				"or",
				(
					("equals", "gpt-5.4"),
					("equals", "gpt-5.4-2026-03-05"),
					("equals", "gpt-5-4"),
					("equals", "gpt-5-4-2026-03-05"),
				),
			),
			(2.5, 0.25, 15.0, None),
			"gpt-5.4",
		),
		(("equals", "gpt-5.4-image-2"), (8.0, 2.0, 15.0, None), "gpt-5.4-image-2"),
		(
			(
				"or",
				(
					("equals", "gpt-5.4-mini"),
					("equals", "gpt-5.4-mini-2026-03-17"),
					("equals", "gpt-5-4-mini"),
					("equals", "gpt-5-4-mini-2026-03-17"),
				),
			),
			(0.75, 0.075, 4.5, None),
			"gpt-5.4-mini",
		),
		(
			(
				"or",
				(
					("equals", "gpt-5.4-nano"),
					("equals", "gpt-5.4-nano-2026-03-17"),
					("equals", "gpt-5-4-nano"),
					("equals", "gpt-5-4-nano-2026-03-17"),
				),
			),
			(0.2, 0.02, 1.25, None),
			"gpt-5.4-nano",
		),
		(
			(
				"or",
				(
					("equals", "gpt-5.4-pro"),
					("equals", "gpt-5.4-pro-2026-03-05"),
					("equals", "gpt-5-4-pro"),
					("equals", "gpt-5-4-pro-2026-03-05"),
				),
			),
			(30.0, 30.0, 180.0, None),
			"gpt-5.4-pro",
		),
		(
			(
				"or",
				(
					("equals", "gpt-5.5"),
					("equals", "gpt-5.5-2026-04-23"),
					("equals", "gpt-5.5-2026-04-24"),
					("equals", "gpt-5-5"),
					("equals", "gpt-5-5-2026-04-23"),
					("equals", "gpt-5-5-2026-04-24"),
					("equals", "gpt-5.5-chat"),
					("equals", "gpt-5.5-chat-latest"),
					("equals", "gpt-5-5-chat"),
					("equals", "gpt-5-5-chat-latest"),
					("equals", "gpt-5.5-codex"),
					("equals", "gpt-5-5-codex"),
				),
			),
			(5.0, 0.5, 30.0, None),
			"gpt-5.5",
		),
		(("equals", "gpt-5.5-cyber"), (12.5, 1.25, 75.0, None), "gpt-5.5-cyber"),
		(
			(
				"or",
				(
					("equals", "gpt-5.5-pro"),
					("equals", "gpt-5.5-pro-2026-04-23"),
					("equals", "gpt-5-5-pro"),
					("equals", "gpt-5-5-pro-2026-04-23"),
				),
			),
			(30.0, 30.0, 180.0, None),
			"gpt-5.5-pro",
		),
		(("equals", "gpt-5.6-cyber"), (12.5, 1.25, 75.0, 15.625), "gpt-5.6-cyber"),
		(
			(
				"or",
				(
					("equals", "gpt-5.6-luna"),
					("equals", "gpt-5-6-luna"),
					("regex", "^gpt-5\\.6-luna-\\d{4}-\\d{2}-\\d{2}$"),
					("regex", "^gpt-5-6-luna-\\d{4}-\\d{2}-\\d{2}$"),
				),
			),
			(0.2, 0.02, 1.2, 0.25),
			"gpt-5.6-luna",
		),
		(
			(
				"or",
				(
					("equals", "gpt-5.6-sol"),
					("equals", "gpt-5-6-sol"),
					("equals", "gpt-5.6"),
					("equals", "gpt-5-6"),
					("regex", "^gpt-5\\.6-sol-\\d{4}-\\d{2}-\\d{2}$"),
					("regex", "^gpt-5-6-sol-\\d{4}-\\d{2}-\\d{2}$"),
				),
			),
			(4.0, 0.4, 20.0, 5.0),
			"gpt-5.6-sol",
		),
		(
			(
				"or",
				(
					("equals", "gpt-5.6-terra"),
					("equals", "gpt-5-6-terra"),
					("regex", "^gpt-5\\.6-terra-\\d{4}-\\d{2}-\\d{2}$"),
					("regex", "^gpt-5-6-terra-\\d{4}-\\d{2}-\\d{2}$"),
				),
			),
			(2.0, 0.2, 12.0, 2.5),
			"gpt-5.6-terra",
		),
		(
			("or", (("equals", "gpt-6-astra"), ("regex", "^gpt-6-astra-\\d{4}-\\d{2}-\\d{2}$"))),
			(10.0, 1.0, 50.0, 12.5),
			"gpt-6-astra",
		),
		(("equals", "gpt-6-cyber"), (20.0, 2.0, 100.0, 25.0), "gpt-6-cyber"),
		(
			("or", (("equals", "gpt-6-luna"), ("regex", "^gpt-6-luna-\\d{4}-\\d{2}-\\d{2}$"))),
			(0.1, 0.01, 0.5, 0.125),
			"gpt-6-luna",
		),
		(("equals", "gpt-6-rosalind"), (15.0, 1.5, 75.0, 18.75), "gpt-6-rosalind"),
		(
			("or", (("equals", "gpt-6-sol"), ("regex", "^gpt-6-sol-\\d{4}-\\d{2}-\\d{2}$"))),
			(2.0, 0.2, 10.0, 2.5),
			"gpt-6-sol",
		),
		(
			("or", (("equals", "gpt-6.1-sol"), ("regex", "^gpt-6\\.1-sol-\\d{4}-\\d{2}-\\d{2}$"))),
			(2.0, 0.1, 10.0, 2.5),
			"gpt-6.1-sol",
		),
		(
			(
				"or",
				(("equals", "gpt-6.1-terra"), ("regex", "^gpt-6\\.1-terra-\\d{4}-\\d{2}-\\d{2}$")),
			),
			(1.0, 0.05, 5.0, 1.25),
			"gpt-6.1-terra",
		),
		(
			(
				"or",
				(
					("equals", "gpt-audio"),
					("equals", "gpt-audio-2025-08-28"),
					("equals", "gpt-audio-1.5"),
				),
			),
			(2.5, 2.5, 10.0, None),
			"gpt-audio",
		),
		(
			(
				"or",
				(
					("equals", "gpt-audio-mini"),
					("equals", "gpt-audio-mini-2025-10-06"),
					("equals", "gpt-audio-mini-2025-12-15"),
				),
			),
			(0.6, 0.6, 2.4, None),
			"gpt-audio-mini",
		),
		(
			("or", (("equals", "gpt-chat-latest"), ("equals", "chat-latest"))),
			(5.0, 0.5, 30.0, None),
			"gpt-chat-latest",
		),
		(("equals", "gpt-image-1"), (5.0, 1.25, 40.0, None), "gpt-image-1"),
		(("or", (("equals", "gpt-image-1-mini"),)), (2.0, 0.2, 8.0, None), "gpt-image-1-mini"),
		(
			("or", (("equals", "gpt-image-1.5"), ("equals", "gpt-image-1.5-2025-12-16"))),
			(5.0, 1.25, 10.0, None),
			"gpt-image-1.5",
		),
		(
			("or", (("equals", "gpt-image-2"), ("equals", "gpt-image-2-2026-04-21"))),
			(5.0, 1.25, 30.0, None),
			"gpt-image-2",
		),
		(
			(
				"or",
				(("equals", "gpt-image-2.5-flare"), ("equals", "gpt-image-2.5-flare-2026-09-08")),
			),
			(5.0, 1.25, 30.0, None),
			"gpt-image-2.5-flare",
		),
		(
			(
				"or",
				(
					("equals", "gpt-image-2.5-sunburst"),
					("equals", "gpt-image-2.5-sunburst-2026-09-08"),
				),
			),
			(5.0, 1.25, 30.0, None),
			"gpt-image-2.5-sunburst",
		),
		(("equals", "gpt-oss-120b"), (0.039, 0.039, 0.18, None), "gpt-oss-120b"),
		(("equals", "gpt-oss-20b"), (0.029, 0.029, 0.14, None), "gpt-oss-20b"),
		(("equals", "gpt-oss-safeguard-20b"), (0.075, 0.037, 0.3, None), "gpt-oss-safeguard-20b"),
		(
			(
				"or",
				(
					("equals", "gpt-realtime"),
					("equals", "gpt-realtime-2025-08-28"),
					("equals", "gpt-realtime-1.5"),
				),
			),
			(4.0, 0.4, 16.0, None),
			"gpt-realtime",
		),
		(
			("or", (("equals", "gpt-realtime-2"), ("equals", "gpt-realtime-2.1"))),
			(4.0, 0.4, 24.0, None),
			"gpt-realtime-2",
		),
		(
			(
				"or",
				(
					("equals", "gpt-realtime-mini"),
					("equals", "gpt-realtime-2.1-mini"),
					("equals", "gpt-realtime-mini-2025-12-15"),
					("equals", "gpt-realtime-mini-2025-10-06"),
				),
			),
			(0.6, 0.06, 2.4, None),
			"gpt-realtime-mini",
		),
		(("equals", "gpt-rosalind-discovery"), (5.0, 0.5, 25.0, None), "gpt-rosalind-discovery"),
		(("equals", "gpt-rosalind-research"), (5.0, 0.5, 25.0, None), "gpt-rosalind-research"),
		(("or", (("equals", "o1"), ("equals", "o1-2024-12-17"))), (15.0, 7.5, 60.0, None), "o1"),
		(
			("or", (("equals", "o1-mini"), ("equals", "o1-mini-2024-09-12"))),
			(1.1, 0.55, 4.4, None),
			"o1-mini",
		),
		(
			("or", (("equals", "o1-preview"), ("equals", "o1-preview-2024-09-12"))),
			(15.0, 7.5, 60.0, None),
			"o1-preview",
		),
		(
			("or", (("equals", "o1-pro"), ("equals", "o1-pro-2025-03-19"))),
			(150.0, 150.0, 600.0, None),
			"o1-pro",
		),
		(("or", (("equals", "o3"), ("equals", "o3-2025-04-16"))), (2.0, 0.5, 8.0, None), "o3"),
		(
			("or", (("equals", "o3-deep-research"), ("equals", "o3-deep-research-2025-06-26"))),
			(10.0, 2.5, 40.0, None),
			"o3-deep-research",
		),
		(
			(
				"or",
				(
					("equals", "o3-mini"),
					("equals", "o3-mini-2025-01-31"),
					("equals", "o3-mini-high"),
				),
			),
			(1.1, 0.55, 4.4, None),
			"o3-mini",
		),
		(
			("or", (("equals", "o3-pro"), ("equals", "o3-pro-2025-06-10"))),
			(20.0, 20.0, 80.0, None),
			"o3-pro",
		),
		(
			(
				"or",
				(
					("equals", "o4-mini-2025-04-16"),
					("equals", "o4-mini-high"),
					("equals", "o4-mini"),
				),
			),
			(1.1, 0.275, 4.4, None),
			"o4-mini",
		),
		(
			(
				"or",
				(
					("equals", "o4-mini-deep-research"),
					("equals", "o4-mini-deep-research-2025-06-26"),
				),
			),
			(2.0, 0.5, 8.0, None),
			"o4-mini-deep-research",
		),
		(("equals", "text-davinci-002"), (20.0, 20.0, 20.0, None), "text-davinci-002"),
		(("equals", "text-davinci-003"), (20.0, 20.0, 20.0, None), "text-davinci-003"),
	),
}
"""genai-prices' match rules in its order, each with its model's price: an id that is not
in `PRICES` (a fine-tune ``ft:gpt-4o-mini-2024-07-18:org::id``, a dated preview, another
spelling) is priced as genai-prices prices it, and tiered as its model (the id after the
price, a key of `TIERS`). A rule: ``(kind, text)`` with kind ``starts_with``,
``ends_with``, ``contains``, ``regex`` or ``equals``, or ``("or" | "and", rules)``."""

TIERS: dict[str, dict[str, tuple[tuple[int, tuple[float, float, float, float | None]], ...]]] = {
	"anthropic": {
		"claude-haiku-5-5": ((100000, (0.5, 0.05, 2.5, 0.625)),),
		"claude-sonnet-4-5": ((200000, (6.0, 0.6, 22.5, 7.5)),),
		"global.anthropic.claude-haiku-5-5": ((100000, (0.5, 0.05, 2.5, 0.625)),),
		"regional.anthropic.claude-haiku-5-5": ((100000, (0.55, 0.055, 2.75, 0.6875)),),
	},
	"google": {
		"claude-haiku-5-5": ((100000, (0.5, 0.05, 2.5, 0.625)),),
		"claude-sonnet-4-5": ((200000, (6.0, 0.6, 22.5, 7.5)),),
		"gemini-1.5-flash": ((128000, (0.15, 0.0375, 0.6, None)),),
		"gemini-1.5-pro": ((128000, (2.5, 2.5, 10.0, None)),),
		"gemini-2.5-pro": ((200000, (2.5, 0.25, 15.0, None)),),
		"gemini-3-pro-preview": ((200000, (4.0, 0.4, 18.0, None)),),
		"gemini-3.1-pro-preview": ((200000, (4.0, 0.4, 18.0, None)),),
		"gemini-flash-1.5": ((128000, (0.15, 0.0375, 0.6, None)),),
		"gemini-flash-1.5-8b": ((128000, (0.075, 0.02, 0.3, None)),),
		"gemini-pro-1.5": ((128000, (2.5, 0.625, 10.0, None)),),
	},
	"openai": {
		"gpt-5.4": ((272000, (5.0, 0.5, 22.5, None)),),
		"gpt-5.4-pro": ((272000, (60.0, 60.0, 270.0, None)),),
		"gpt-5.5": ((272000, (10.0, 1.0, 45.0, None)),),
		"gpt-5.5-pro": ((272000, (60.0, 60.0, 270.0, None)),),
		"gpt-5.6-luna": ((272000, (0.4, 0.04, 1.8, 0.5)),),
		"gpt-5.6-sol": ((272000, (8.0, 0.8, 30.0, 10.0)),),
		"gpt-5.6-terra": ((272000, (4.0, 0.4, 18.0, 5.0)),),
		"gpt-6-astra": ((272000, (20.0, 2.0, 75.0, 25.0)),),
		"gpt-6-luna": ((272000, (0.2, 0.02, 0.75, 0.25)),),
		"gpt-6-rosalind": ((272000, (30.0, 3.0, 112.5, 37.5)),),
		"gpt-6-sol": ((272000, (4.0, 0.4, 15.0, 5.0)),),
		"gpt-6.1-sol": ((272000, (4.0, 0.2, 15.0, 5.0)),),
		"gpt-6.1-terra": ((272000, (2.0, 0.1, 7.5, 2.5)),),
	},
}
"""The tiered models by genai-prices id: ``(start, price)`` in ascending order; a prompt of
more than ``start`` tokens (cached and written ones included) pays that price for all its
tokens, input and output (the "cliff" model of the price pages and genai-prices)."""

MEDIA: dict[str, tuple[str, ...]] = {
	"anthropic": (),
	"google": (
		"gemini-2.5-flash-image",
		"gemini-2.5-flash-lite-preview-tts",
		"gemini-2.5-flash-tts",
		"gemini-2.5-pro-tts",
		"gemini-3-pro-image-preview",
		"gemini-3.1-flash-image-preview",
		"gemini-3.1-flash-lite-image",
		"gemini-3.1-flash-live-preview",
		"gemini-3.1-flash-tts-preview",
		"gemini-3.8-flash-lite-tts",
		"gemini-3.8-flash-tts",
		"gemini-3.8-live",
		"gemini-live-2.5-flash",
		"gemini-nano-banana-2.1",
	),
	"openai": (
		"ada",
		"babbage",
		"babbage-002",
		"chatgpt-image-latest",
		"computer-use",
		"curie",
		"davinci",
		"davinci-002",
		"gpt-3.5-turbo-instruct",
		"gpt-4o-mini-realtime-preview",
		"gpt-4o-mini-transcribe",
		"gpt-4o-mini-tts",
		"gpt-4o-realtime-preview",
		"gpt-4o-transcribe",
		"gpt-audio",
		"gpt-audio-mini",
		"gpt-image-1",
		"gpt-image-1-mini",
		"gpt-image-1.5",
		"gpt-image-2",
		"gpt-image-2.5-flare",
		"gpt-image-2.5-sunburst",
		"gpt-realtime",
		"gpt-realtime-2",
		"gpt-realtime-mini",
		"text-davinci-002",
		"text-davinci-003",
	),
}
"""The models of `PRICES` genai-prices prices for audio or images apart from text tokens
(output audio or images, image input: realtime, audio, live and image models), the
text-to-speech and transcription models (named ``-tts``, ``transcribe``), and the legacy
completion and computer-use models, which take no agent's conversation: ``openmolt
models`` leaves them out unless ``--all``."""

AUDIO: dict[str, dict[str, tuple[float, float, float | None]]] = {
	"anthropic": {},
	"google": {
		"gemini-2.0-flash": (0.7, 0.175, None),
		"gemini-2.5-flash": (1.0, 0.1, None),
		"gemini-2.5-flash-lite": (0.3, 0.03, None),
		"gemini-3-flash-preview": (1.0, 0.1, None),
		"gemini-3.1-flash-lite": (0.5, 0.05, None),
		"gemini-3.1-flash-live-preview": (3.0, 3.0, 12.0),
		"gemini-3.8-live": (3.0, 3.0, 12.0),
		"gemini-live-2.5-flash": (3.0, 3.0, 12.0),
	},
	"openai": {
		"gpt-4o-audio-preview": (40.0, 40.0, 80.0),
		"gpt-4o-mini-audio-preview": (10.0, 10.0, 20.0),
		"gpt-4o-mini-realtime-preview": (10.0, 0.3, 20.0),
		"gpt-4o-mini-transcribe": (3.0, 3.0, None),
		"gpt-4o-realtime-preview": (40.0, 2.5, 80.0),
		"gpt-4o-transcribe": (6.0, 6.0, None),
		"gpt-audio": (32.0, 32.0, 64.0),
		"gpt-audio-mini": (10.0, 10.0, 20.0),
		"gpt-realtime": (32.0, 0.4, 64.0),
		"gpt-realtime-2": (32.0, 0.4, 64.0),
		"gpt-realtime-mini": (10.0, 0.3, 20.0),
	},
}
"""The models by genai-prices id whose audio costs other than text: (input audio, cached
input audio, output audio or None: the output price) per million tokens. Audio tokens are
among a prompt's (a reply's) tokens; the usage says how many (Gemini:
``promptTokensDetails``, ``candidatesTokensDetails``, modality ``AUDIO``; Chat Completions:
``prompt_tokens_details.audio_tokens``, ``completion_tokens_details.audio_tokens``)."""
