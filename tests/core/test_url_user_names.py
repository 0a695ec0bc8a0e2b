"""A web URL's user name alone is a secret when it may be a token, not when it reads as a name.

``https://TOKEN@github.com`` carries a token as its user; ``https://alice@git.example`` names a
person. A name taken as a secret was masked wherever the word appeared (every ``alice`` of a
conversation, ``git`` in every command). Unknown stays unsafe: any user with a digit, a sign a
token holds, or 20+ characters is a secret, as every password is.
"""

from __future__ import annotations

import pytest

from openmolt import OpenMolt
from openmolt_core._support.masking import mask_urls, shown_url
from openmolt_core.secrets import url_secrets
from openmolt_core.testing import ScriptedModel


@pytest.mark.parametrize(
	"url",
	[
		"https://alice@git.example/r.git",
		"https://git@git.example/r.git",
		"HTTPS://user@host.example/",
		"//x-access-token@host.example/",
		"https://first.last@host.example/",
		"https://alice%40corp.example@host.example/",  # an e-mail address, percent-encoded
		"https://bob.smith@corp.example@host.example/",  # the same, as a driver reads it
		"https://alice@[2001:db8::1]:8443/v1",
		"https:\\/\\/alice@host.example\\/v1",
	],
)
def test_a_name_alone_is_no_secret(url: str) -> None:
	"""A user of letters (a word, a dotted name, an e-mail address) names someone."""
	assert url_secrets(url) == set()


@pytest.mark.parametrize(
	("url", "token"),
	[
		("https://ghp_Token0123@github.com/o/r.git", "ghp_Token0123"),
		("https://oauth2@host.example/", "oauth2"),  # a digit: unknown, so a secret
		("https://AbCdEfGhIjKlMnOpQrStUv@host.example/", "AbCdEfGhIjKlMnOpQrStUv"),  # 20+
		("https://tok%2Ben@host.example/", "tok+en"),  # a sign no name holds
		("https://Zm9v+YmFy@host.example/", "Zm9v+YmFy"),
		("//a1b2c3d4@[::1]/", "a1b2c3d4"),
		("https://alice:Pw-secret@host.example/", "Pw-secret"),  # a password, whatever it is
	],
)
def test_a_user_that_may_be_a_token_stays_secret(url: str, token: str) -> None:
	"""Digits, signs or length make a user alone unknown, and unknown is a secret."""
	assert token in url_secrets(url)


def test_a_configured_url_naming_a_user_masks_no_word() -> None:
	"""An integration's endpoint with a user name leaves that word readable everywhere."""
	om = OpenMolt(
		integrations={"s3": {"endpoint": "https://alice@minio.local:9000"}}, entry_points=False
	)
	redact = om.create_agent(name="A", model=ScriptedModel([]))._redactor
	assert redact("alice asked") == "alice asked"
	assert (
		mask_urls("see https://alice@minio.local:9000/b") == "see https://alice@minio.local:9000/b"
	)
	assert shown_url("https://alice@minio.local:9000") == "https://alice@minio.local:9000"
