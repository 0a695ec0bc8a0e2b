"""A third-party integration plugin, shaped exactly like a built-in one."""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	CustomCredential,
	HttpTool,
	Integration,
)

WEATHER = Integration(
	name="Weather",
	api_setup=ApiSetup(base_url="https://api.weather.example/v2"),
	credential_setup=[
		CustomCredential(type="custom", headers={"X-Api-Key": "{{ config.apiKey }}"})
	],
	scopes={"read": "Read forecasts."},
	# What each tool does with data (openmolt_core.taint): a forecast is public, and the city
	# sent is no secret. A tool with no entry would count as untrusted and outbound.
	labels={"getForecast": []},
	tools=[
		HttpTool(
			handle="getForecast",
			description="Forecast for a city, next 3 days.",
			scopes=["read"],
			method="GET",
			endpoint="/forecast/{{ input.city }}",
			input_schema={
				"type": "object",
				"properties": {"city": {"type": "string", "description": "City name."}},
				"required": ["city"],
			},
		),
	],
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the weather integration."""
	register(WEATHER)
