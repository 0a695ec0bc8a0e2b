"""A secret a program shows re-cased (upper, lower, swapped) is masked; prose is not."""

import json

import pytest

from openmolt_core._support.masking import MASK, StreamMask, mask

TOKENS = (
	"sk-live-Abc123Def456Ghi789",
	"ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9",
	"0123456789abcdef0123456789abcdef",  # a hex key: shown upper-case by a hex-minded program
	"hunter2pass",
	"AbCdEfGhIjKlMnOpQrSt",  # letters only, long enough not to be a word
)


def recased(secret: str) -> dict[str, str]:
	"""The secret as a server or a log formatter may re-case it."""
	return {
		"upper": secret.upper(),
		"lower": secret.lower(),
		"swapped": secret.swapcase(),
		"title": secret.title(),
	}


@pytest.mark.parametrize("secret", TOKENS)
def test_a_recased_secret_is_masked_where_it_stands(secret: str) -> None:
	for how, spelt in recased(secret).items():
		for text in (
			f"ERROR: INVALID TOKEN {spelt} FOR USER",
			json.dumps({"echo": f"Bearer {spelt}"}),
			f"token={spelt}&x=1",
		):
			shown = mask(text, frozenset({secret}))
			assert spelt not in shown, (how, shown)
			assert MASK in shown, (how, shown)


@pytest.mark.parametrize(
	("secret", "prose"),
	[
		("password", "Enter your Password or PASSWORD here"),  # a word: its case is its own
		("changeme", "Please ChangeMe later"),
		("Summer", "SUMMER sale"),  # shorter than the encoded spellings' floor
		("letmeinplease", "LetMeInPlease, the user said"),  # letters only, too short to be a key
	],
)
def test_a_word_secret_is_masked_in_its_own_case_only(secret: str, prose: str) -> None:
	"""Re-cased matching would mask ordinary words: a secret of letters only, shorter than a key's
	line, is matched as written (as before)."""
	assert mask(prose, frozenset({secret})) == prose
	assert mask(f"x {secret} y", frozenset({secret})) == f"x {MASK} y"


@pytest.mark.parametrize("secret", TOKENS)
def test_a_recased_secret_streamed_in_two_pieces_is_masked_like_the_whole(secret: str) -> None:
	"""A stream holds back a tail that may start the secret in any case, as `mask` reads it."""
	secrets = frozenset({secret})
	for how, spelt in recased(secret).items():
		text = f"ERROR: INVALID TOKEN {spelt} FOR USER"
		whole = mask(text, secrets)
		for cut in range(len(text) + 1):
			stream = StreamMask(lambda: secrets)
			out = stream.feed(text[:cut]) + stream.feed(text[cut:]) + stream.flush()
			assert out == whole, (how, cut, out)
