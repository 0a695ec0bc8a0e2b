"""Where a message sends its reader: a page of the documentation, by its address on the web.

A message read by someone who installed OpenMolt from a registry (``pip install openmolt``)
cannot name ``docs/guides/durable.md``: that is a path of the source tree, which they do not
have. Every message names a page through `docs_url`, one address for the whole package; a test
checks that each page named exists under ``docs/``.
"""

from __future__ import annotations

__all__ = ["DOCS", "docs_url"]

DOCS = "https://github.com/openmolt/openmolt/blob/main/docs/"
"""The documentation's folder on the web (the repository of mkdocs.yml's ``repo_url``)."""


def docs_url(page: str) -> str:
	"""The address of one page of the documentation.

	Args:
		page: The page under ``docs/`` (``guides/durable.md``, ``cli.md``).
	"""
	return DOCS + page
