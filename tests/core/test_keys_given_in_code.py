"""A signing or encryption key given in code is a secret of every instance, as its variable is.

``Approvals(key=...)``, ``accounts={"key": ...}`` and ``EncryptedFileStore(key=...)`` register
their key (`openmolt_core.secrets.register_key`); before, only the ``*_KEY`` variable was masked.
"""

from __future__ import annotations

import logging

import pytest

from openmolt import OpenMolt
from openmolt_core.approvals import Approvals
from openmolt_core.credstore import EncryptedFileStore
from openmolt_core.secrets import MASK


def shows(om: OpenMolt, secret: str) -> bool:
	return secret in om.secrets.mask(f"the key is {secret}.")


def test_an_approval_key_given_in_code_is_masked_in_runs_and_logs(
	caplog: pytest.LogCaptureFixture,
) -> None:
	key = "CANARY-approval-key-0001"
	om = OpenMolt(approvals=Approvals(key=key))
	assert not shows(om, key)
	assert not shows(OpenMolt(), key)  # every instance: a key signs for the process
	with caplog.at_level(logging.INFO, logger="openmolt.test"):
		logging.getLogger("openmolt.test").info("signing with %s", key)
	assert key not in caplog.text and MASK in caplog.text


def test_a_binary_key_is_masked_as_hex_and_base64() -> None:
	import base64

	key = bytes(range(200, 232))  # not UTF-8
	om = OpenMolt(approvals=Approvals(key=key))  # held by the instance: its key is known
	for spelling in (key.hex(), key.hex().upper(), base64.b64encode(key).decode()):
		assert not shows(om, spelling), spelling


def test_the_accounts_and_credential_store_keys_are_masked(tmp_path: object) -> None:
	accounts_key = "CANARY-accounts-key-0002"
	store_key = "CANARY-store-key-0003-fernet-like"
	om = OpenMolt(accounts={"key": accounts_key})
	assert om.accounts is not None
	store = EncryptedFileStore(f"{tmp_path}/c.enc", key=store_key)
	assert not shows(om, accounts_key)
	assert not shows(om, store_key)
	assert store.path.name == "c.enc"


def test_an_owner_collected_while_a_key_is_registered_never_deadlocks() -> None:
	"""A dead owner's finalizer may run inside any allocation, also one made under the lock.

	It took the registry's lock itself, so an owner freed by the cyclic collector while another
	key was being registered hung the process (the whole test run stopped here once).
	"""
	import gc
	import threading

	from openmolt_core.secrets import register_key, registered_keys

	class Owner:
		pass

	def churn() -> None:
		for n in range(200):
			dead = Owner()
			dead.me = dead  # type: ignore[attr-defined]  # a cycle: freed by the collector
			register_key(dead, f"cycle-key-{n:04d}-abcdefgh")
			del dead
			live = Owner()
			register_key(live, f"live-key-{n:04d}-abcdefgh")
			assert f"live-key-{n:04d}-abcdefgh" in registered_keys()

	old = gc.get_threshold()
	gc.set_threshold(1)  # collect at almost every allocation: inside the lock, too
	try:
		worker = threading.Thread(target=churn, daemon=True)
		worker.start()
		worker.join(timeout=30)
	finally:
		gc.set_threshold(*old)
	assert not worker.is_alive(), "register_key deadlocked on a finalizer"
	gc.collect()
	assert not any(k.startswith("cycle-key-") for k in registered_keys())


def test_a_finalizer_that_logs_inside_the_registrys_lock_never_deadlocks() -> None:
	"""Logging from a finalizer (asyncio's "Task was destroyed") reads the secrets' registry.

	The collector may run that finalizer inside any allocation, also one made while the
	registry is locked by the same thread (the lock's sections allocate): the thread must get
	in again. Here the finalizer's place is taken by a log call made under the lock.
	"""
	import threading

	from openmolt_core import secrets
	from openmolt_core._support import secretset  # the registry's lock

	secrets.register_key(
		test_a_finalizer_that_logs_inside_the_registrys_lock_never_deadlocks,
		"sk-registered-for-the-lock-test",
	)
	secrets.install_log_redaction()
	log = logging.getLogger("openmolt.test.finalizer")
	records: list[str] = []

	class Keep(logging.Handler):
		def emit(self, record: logging.LogRecord) -> None:
			records.append(record.getMessage())

	handler = Keep()
	log.addHandler(handler)

	def under_the_lock() -> None:
		with secretset._LOCK:
			log.warning("collected with sk-registered-for-the-lock-test")

	try:
		worker = threading.Thread(target=under_the_lock, daemon=True)
		worker.start()
		worker.join(timeout=10)
	finally:
		log.removeHandler(handler)
	assert not worker.is_alive(), "logging under the registry's lock deadlocked"
	assert records and "sk-registered-for-the-lock-test" not in records[0]
