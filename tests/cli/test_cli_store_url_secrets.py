"""A database URL given to ``openmolt sessions`` or the durable store is named in messages without
its password, however the password is written: SQLAlchemy reads every character up to the ``@``
(``/``, ``?``, ``#`` too), and a ``password=`` query is one as well."""

from __future__ import annotations

from pathlib import Path

import pytest

from openmolt_core.cli import main as openmolt_main
from openmolt_dbos import parse_settings
from tests._leaks import leaks

SECRET = "Pa55-w0rd-Secret"

STORES = [
	f"postgresql://ada:{SECRET[:4]}/{SECRET[4:]}@127.0.0.1:1/x",
	f"postgresql://ada:{SECRET[:4]}?{SECRET[4:]}@127.0.0.1:1/x",
	f"postgresql://ada:{SECRET[:4]}#{SECRET[4:]}@127.0.0.1:1/x",
	f"postgresql://ada@127.0.0.1:1/x?password={SECRET}",
]
IDS = ["slash", "question mark", "hash", "query"]


def _password(store: str) -> str:
	"""The password the store's driver connects with."""
	from sqlalchemy.engine import make_url

	url = make_url(store)
	return url.password or str(url.query["password"])


@pytest.mark.parametrize("store", STORES, ids=IDS)
@pytest.mark.parametrize("action", [["list"], ["show", "ada"], ["prune"]], ids=lambda a: a[0])
def test_a_store_that_cannot_be_opened_is_named_without_its_password(
	store: str, action: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
	"""The one line said when the store is down names it (the host), never the password."""
	password = _password(store)
	assert openmolt_main(["sessions", *action, "--store", store]) == 2
	out = capsys.readouterr()
	assert "cannot open the store postgresql://ada" in out.err, out.err
	assert not leaks(out.out + out.err, password), out.err


@pytest.mark.parametrize("store", STORES, ids=IDS)
def test_the_durable_store_is_described_without_its_password(store: str) -> None:
	"""`Settings.describe`, which every durable message about the store uses."""
	shown = parse_settings(store).describe()
	assert shown.startswith("postgresql://ada"), shown
	assert not leaks(shown, _password(store)), shown
