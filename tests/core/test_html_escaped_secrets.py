"""A secret holding ``&``, ``"``, ``<``, ``>`` or ``'`` is masked as an HTML page escapes it.

An HTML error page (a proxy's, a server's ``Invalid token: ...``) writes such a character as a
named reference (``&amp;``, ``&quot;``, ``&lt;``, ``&gt;``, ``&#x27;`` or ``&#39;``), and so
does a page that shows a JSON body (``<pre>{&quot;token&quot;: ...}</pre>``): the masker read
numeric references only (``&#115;``), so a password with an ``&`` reached a tool's result, and
the model, whole. Whole and streamed.
"""

from __future__ import annotations

import html
import json

import pytest

from openmolt_core._support.masking import MASK, StreamMask, mask

SECRETS = ["key=val&k2=v2!9", 'pa"ss<w0rd>99', "it's-a-s3cret&more", "p&amp;ss-w0rd-x"]


def _pages(secret: str) -> dict[str, str]:
	escaped = html.escape(secret)
	return {
		"escaped": f"<p>Invalid token: {escaped}</p>",
		"quotes kept": f"<p>Invalid token: {html.escape(secret, quote=False)}</p>",
		"&#39;": f"<p>token {escaped.replace('&#x27;', '&#39;')}</p>",
		"JSON in a page": f"<pre>{html.escape(json.dumps({'token': secret}))}</pre>",
		"attribute": f'<input value="{escaped}">',
	}


def _streamed(text: str, secrets: frozenset[str], size: int) -> str:
	stream = StreamMask(lambda: secrets)
	out = [stream.feed(text[i : i + size]) for i in range(0, len(text), size)]
	return "".join(out) + stream.flush()


@pytest.mark.parametrize("secret", SECRETS)
def test_a_secret_escaped_for_html_is_masked(secret: str) -> None:
	secrets = frozenset({secret})
	for how, page in _pages(secret).items():
		whole = mask(page, secrets)
		assert MASK in whole, (how, whole)
		assert html.unescape(whole).count(secret) == 0, (how, whole)
		for size in (1, 3):
			assert _streamed(page, secrets, size) == whole, (how, size)
