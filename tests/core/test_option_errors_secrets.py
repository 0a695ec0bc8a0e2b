"""An option model built in code with a wrong value says which field and why, never the value.

Pydantic's text repeats each wrong ``input_value``; the option models hold secrets (a webhook's
signing secret, a bot token, a client secret, a header's token, an API key), and a secret given
in the wrong shape (a list, a typo in its key) was printed whole by ``str(error)``, ``repr`` and
a traceback. Every option model (`openmolt_core.options.Options`) now leaves its inputs out.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from openmolt_core.integrations import BasicCredential, BearerCredential, OAuth2Credential
from openmolt_core.triggers import A2ATrigger, CallerToken, TelegramChannel, WebhookTrigger
from tests._leaks import leaks

KEY = "whsec_Options/Err+0123456789"

MADE: dict[str, tuple[Callable[[], Any], str]] = {
	"webhook secret in a list": (lambda: WebhookTrigger(secret=[KEY]), "secret"),
	"webhook secret, key misspelled": (lambda: WebhookTrigger(secrte=KEY), "secrte"),
	"bot token in a list": (lambda: TelegramChannel(type="telegram", token=[KEY]), "token"),
	"caller token in a dict": (lambda: CallerToken(token={"value": KEY}), "token"),
	"a2a token, key misspelled": (lambda: A2ATrigger(tokn=KEY), "tokn"),
	"client secret in a list": (
		lambda: OAuth2Credential(type="oauth2", token_url="https://t.example", client_secret=[KEY]),
		"client_secret",
	),
	"header token in a list": (
		lambda: BearerCredential(type="bearer", headers={"Authorization": [f"Bearer {KEY}"]}),
		"Authorization",
	),
	"password, key misspelled": (
		lambda: BasicCredential(type="basic", username="u", pasword=KEY),
		"pasword",
	),
}


@pytest.mark.parametrize("case", list(MADE))
def test_an_option_model_s_error_names_the_field_not_the_secret(case: str) -> None:
	"""``str``, ``repr`` and the traceback of the error name the field; the secret is left out."""
	make, field = MADE[case]
	with pytest.raises(ValidationError) as raised:
		make()
	error = raised.value
	shown = str(error) + repr(error) + "".join(traceback.format_exception(error))
	assert field in shown and not leaks(shown, KEY), shown


def test_a_provider_s_settings_error_shows_no_key() -> None:
	"""The built-in providers' settings are option models too."""
	settings = pytest.importorskip("openmolt_providers.settings")
	with pytest.raises(ValidationError) as raised:
		settings.OpenAISettings(api_key=[KEY], headers={"X-Api-Key": [KEY]})
	shown = str(raised.value)
	assert "api_key" in shown and "X-Api-Key" in shown and not leaks(shown, KEY), shown


SHORT = "pw-Short/Cred+1"  # short enough for an error to repeat a wrong value of its length


@pytest.mark.parametrize(
	"credential",
	[SHORT, {"config": SHORT}, {"config": [SHORT]}, {"type": "bearer", "config": (SHORT,)}],
	ids=["the credential", "its config", "its config in a list", "its config in a tuple"],
)
def test_a_credential_in_the_wrong_shape_is_not_repeated(credential: Any) -> None:
	"""A password given where a credential's dict goes is named by its type, never repeated.

	Short wrong values are repeated to help (``got str 'ten'``); under a name that says secret
	(``credential``, ``token``, ``headers``...) the value is a secret, whatever its length."""
	from openmolt import OpenMolt
	from openmolt_core.errors import ConfigurationError
	from openmolt_core.testing import ScriptedModel

	with pytest.raises(ConfigurationError) as raised:
		OpenMolt(entry_points=False).create_agent(
			name="a",
			model=ScriptedModel([]),
			integrations=[{"integration": "slack", "credential": credential}],
		)
	shown = str(raised.value)
	assert "credential" in shown and not leaks(shown, SHORT), shown


def test_a_short_wrong_value_elsewhere_is_still_repeated() -> None:
	"""The rule keeps its help where no secret goes: ``max_steps: 'ten'`` says what it got."""
	from openmolt import OpenMolt
	from openmolt_core.errors import ConfigurationError
	from openmolt_core.testing import ScriptedModel

	with pytest.raises(ConfigurationError, match="'ten'"):
		OpenMolt(entry_points=False).create_agent(
			name="a", model=ScriptedModel([]), config={"max_steps": "ten"}
		)
