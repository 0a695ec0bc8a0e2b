"""A plugin's distribution name is read from its metadata's headers, without the email parser."""

import subprocess
import sys
import textwrap
from importlib import metadata

import pytest

from openmolt_core.plugins import _named


class _Dist(metadata.Distribution):
	"""A distribution whose metadata is the given text (None: no METADATA file)."""

	def __init__(self, text: str | None) -> None:
		self._text = text

	def read_text(self, filename: str) -> str | None:
		return self._text if filename == "METADATA" else None

	def locate_file(self, path):  # type: ignore[no-untyped-def]
		raise NotImplementedError


def test_every_installed_distribution_reads_as_its_metadata_says() -> None:
	"""The header scan gives `Distribution.name` for each distribution of this environment."""
	dists = list(metadata.distributions())
	assert len(dists) > 10
	for dist in dists:
		assert _named(dist) == dist.name, dist


@pytest.mark.parametrize(
	"text",
	[
		"Metadata-Version: 2.4\nName: openmolt-providers\nVersion: 0.1.0\n\nName: not-this\n",
		"Metadata-Version: 2.1\r\nname:  Spaced.Name \r\nVersion: 1\r\n",
		"Metadata-Version: 2.1\nNAME:\tTabbed\n",
		"Metadata-Version: 2.1\nSummary: x\nName: second-header\nName: third\n",
		"Metadata-Version: 2.1\nName: folded\n  onto-the-next-line\nVersion: 1\n",
		"Metadata-Version: 2.1\n\nName: in-the-body\n",
		"Name : spaced-colon\nName: kept\n",
		"",
	],
)
def test_the_name_is_the_email_parsers(text: str) -> None:
	"""Case, blanks, line ends, a folded header, the body and a missing header: as `email` reads."""
	dist = _Dist(text)
	assert _named(dist) == dist.name


def test_a_distribution_without_metadata_is_left_to_importlib() -> None:
	"""No METADATA file: `Distribution.name` decides (here: None)."""
	dist = _Dist(None)
	assert _named(dist) == dist.name


def test_loading_a_provider_loads_no_email_parser() -> None:
	"""Looking a provider up by its entry point reads its distribution's name, not the email parser."""
	code = textwrap.dedent(
		"""
		import sys
		from openmolt_core.plugins import Plugins
		plugins = Plugins()
		plugins.provider("openai")
		print(plugins.source("providers:openai"), "email.parser" in sys.modules)
		"""
	)
	out = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
	)
	assert out.stdout.split() == ["openmolt-providers", "False"]
