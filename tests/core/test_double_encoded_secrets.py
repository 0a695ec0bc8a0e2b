"""A secret two encoders wrote one after the other is masked: the ones common libraries produce.

Each single spelling was masked; these were not (a run of them showed the secret whole):

- percent-encoded, then re-cased (an echo that upper-cases a query, a lower-cased header);
- base64 of the percent-encoded secret: OAuth2's client authentication form-encodes the id and
  the secret before HTTP Basic's base64 (RFC 6749, 2.3.1; authlib, oauthlib);
- base64 of the JSON-escaped secret (a JWT's payload);
- JSON inside a URL-encoded form (``payload=`` of Slack's interactive messages), a secret holding
  ``"``, ``\\`` or a non-ASCII letter escaped by the JSON encoder;
- percent-encoded twice (a URL inside a redirect's query), also re-cased or holding JSON.

Base64 of base64 is left out: no library writes it of a secret on its way out.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from urllib.parse import quote, quote_plus, urlencode

import pytest

from openmolt_core._support.masking import MASK, StreamMask, mask

SECRETS = [
	"sk-proj-AbC123/xyz+Q==",  # base64-like: "/", "+", "="
	"p@ss:w0rd/\u00e9!x",  # a login's password: "@", ":", a non-ASCII letter
	'Tk"9\\zQ#7&k=1',  # a JSON encoder escapes '"' and "\\"
	"Pw-7f3a9e21c4d8",  # nothing any encoder changes
]


def _b64(text: str) -> str:
	return base64.b64encode(text.encode()).decode()


FORMS: dict[str, Callable[[str], str]] = {
	"percent, upper-cased": lambda s: quote(s, safe="").upper(),
	"percent, lower-cased": lambda s: quote(s, safe="").lower(),
	"form-encoded, upper-cased": lambda s: quote_plus(s).upper(),
	"path-encoded, upper-cased": lambda s: quote(s, safe="/").upper(),
	"base64 of percent": lambda s: _b64(quote(s, safe="")),
	"base64url of percent": lambda s: (
		base64.urlsafe_b64encode(quote(s, safe="").encode()).decode().rstrip("=")
	),
	"OAuth2 client Basic": lambda s: "Basic " + _b64("my-client:" + quote_plus(s)),
	"base64 of JSON": lambda s: _b64(json.dumps({"k": s})),
	"JSON in a form": lambda s: urlencode({"payload": json.dumps({"k": s})}),
	"JSON unescaped in a form": lambda s: urlencode(
		{"payload": json.dumps({"k": s}, ensure_ascii=False)}
	),
	"JSON percent-encoded": lambda s: quote(json.dumps({"k": s}), safe=""),
	"percent twice": lambda s: quote(quote(s, safe=""), safe=""),
	"form-encoded twice": lambda s: quote_plus(quote_plus(s)),
	"percent twice, lower-cased": lambda s: quote(quote(s, safe=""), safe="").lower(),
	"JSON percent-encoded twice": lambda s: quote(quote(json.dumps(s), safe=""), safe=""),
	"JSON with a URL": lambda s: json.dumps({"u": "https://x.example/?a=" + quote(s, safe="")}),
}


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_double_encoding_is_masked(form: str, secret: str) -> None:
	written = FORMS[form](secret)
	text = f"sent {written} to the server"
	masked = mask(text, frozenset({secret}))
	assert masked != text and MASK in masked, (form, written)
	assert written not in masked
	assert masked.startswith("sent ") and masked.endswith(" to the server"), masked


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_double_encoding_streamed_in_pieces_is_masked(form: str) -> None:
	secret = SECRETS[0]
	text = f"sent {FORMS[form](secret)} to the server"
	stream = StreamMask(lambda: {secret})
	shown = "".join(stream.feed(text[i : i + 5]) for i in range(0, len(text), 5))
	shown += stream.flush()
	assert shown == mask(text, frozenset({secret})), (form, shown)


@pytest.mark.parametrize(
	"text",
	[
		"payload=" + quote_plus(json.dumps({"k": "another value entirely"})),
		"a=" + quote("SK-PROJ-ABC124/XYZ", safe="").upper(),  # one character apart
		_b64("my-client:" + quote_plus("sk-proj-AbC124/xyz+Q==")),
		"q=" + quote(quote("weather in oslo", safe=""), safe=""),
	],
)
def test_other_encoded_text_is_kept(text: str) -> None:
	assert mask(text, frozenset(SECRETS)) == text
