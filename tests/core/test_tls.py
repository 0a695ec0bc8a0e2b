"""The shared client's TLS context: httpx's settings, its CA bundle read at the first handshake."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from pathlib import Path

import anyio
import httpx
import pytest
from anyio.abc import SocketStream

from openmolt_core._tls import client_context
from openmolt_core.integrations._client import PooledTransport, new_client


def _settings(context: ssl.SSLContext) -> dict[str, object]:
	return {
		"protocol": context.protocol,
		"verify_mode": context.verify_mode,
		"check_hostname": context.check_hostname,
		"options": context.options,
		"verify_flags": context.verify_flags,
		"minimum_version": context.minimum_version,
		"maximum_version": context.maximum_version,
		"post_handshake_auth": context.post_handshake_auth,
		"hostname_checks_common_name": context.hostname_checks_common_name,
		"keylog_filename": context.keylog_filename,
		"ciphers": [c["name"] for c in context.get_ciphers()],
	}


def _cas(context: ssl.SSLContext) -> int:
	return context.cert_store_stats()["x509_ca"]


def test_the_context_has_the_settings_and_the_bundle_of_httpx_s() -> None:
	ours, theirs = client_context(), httpx.create_ssl_context()
	assert _settings(ours) == _settings(theirs)
	assert _cas(ours) == 0  # nothing read yet
	ours.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.com")
	assert _cas(ours) == _cas(theirs) > 100
	ours.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.com")
	assert _cas(ours) == _cas(theirs)  # read once


@pytest.mark.parametrize("trust_env", [True, False])
@pytest.mark.parametrize("bundle", ["SSL_CERT_FILE", "certifi"])
def test_the_tests_own_clients_read_httpx_s_bundle_at_their_first_handshake(
	trust_env: bool, bundle: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""tests/conftest.py defers the bundle of the httpx clients tests make: same settings and CAs."""
	import certifi

	monkeypatch.delenv("SSL_CERT_DIR", raising=False)
	monkeypatch.delenv("SSL_CERT_FILE", raising=False)
	monkeypatch.setenv("SSLKEYLOGFILE", str(tmp_path / "keys.log"))  # kept, whatever trust_env
	if bundle == "SSL_CERT_FILE":  # one CA of certifi's, read instead when the client trusts it
		first = Path(certifi.where()).read_text().split("-----END CERTIFICATE-----")[0]
		(tmp_path / "one.pem").write_text(first + "-----END CERTIFICATE-----\n")
		monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "one.pem"))
	client = httpx.AsyncClient(trust_env=trust_env)
	ours = client._transport._pool._ssl_context  # type: ignore[attr-defined]
	theirs = httpx.create_ssl_context(trust_env=trust_env)
	assert _settings(ours) == _settings(theirs)
	assert _cas(ours) == 0  # nothing read yet
	ours.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.com")
	assert ours.get_ca_certs() == theirs.get_ca_certs()
	assert (_cas(theirs) == 1) == (trust_env and bundle == "SSL_CERT_FILE")


def test_the_key_log_file_of_the_environment_is_kept(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	monkeypatch.setenv("SSLKEYLOGFILE", str(tmp_path / "keys.log"))
	assert client_context().keylog_filename == str(tmp_path / "keys.log")


@pytest.mark.anyio
async def test_a_plain_http_request_reads_no_bundle() -> None:
	async def reply(stream: SocketStream) -> None:
		async with stream:
			await stream.receive()
			await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")

	listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
	port = listener.extra(anyio.abc.SocketAttribute.local_port)
	transport = PooledTransport(fast=False)
	async with listener, anyio.create_task_group() as tg, new_client(transport) as client:
		tg.start_soon(listener.serve, reply)
		assert (await client.get(f"http://127.0.0.1:{port}/")).text == "ok"
		assert transport._ssl is not None and _cas(transport._ssl) == 0
		tg.cancel_scope.cancel()


def _certificate(tmp_path: Path) -> tuple[Path, Path]:
	"""A self-signed certificate for 127.0.0.1 and its key, as PEM files."""
	from cryptography import x509
	from cryptography.hazmat.primitives import hashes, serialization
	from cryptography.hazmat.primitives.asymmetric import ec
	from cryptography.x509.oid import NameOID

	key = ec.generate_private_key(ec.SECP256R1())
	name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "openmolt test")])
	now = dt.datetime.now(dt.UTC)
	cert = (
		x509.CertificateBuilder()
		.subject_name(name)
		.issuer_name(name)
		.public_key(key.public_key())
		.serial_number(x509.random_serial_number())
		.not_valid_before(now - dt.timedelta(minutes=1))
		.not_valid_after(now + dt.timedelta(hours=1))
		.add_extension(
			x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
			critical=False,
		)
		.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
		.sign(key, hashes.SHA256())
	)
	cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
	cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
	key_file.write_bytes(
		key.private_bytes(
			serialization.Encoding.PEM,
			serialization.PrivateFormat.PKCS8,
			serialization.NoEncryption(),
		)
	)
	return cert_file, key_file


@pytest.mark.anyio
@pytest.mark.parametrize("trusted", [True, False])
async def test_an_https_request_checks_the_bundle_read_at_its_first_handshake(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: bool
) -> None:
	from anyio.streams.tls import TLSListener

	cert_file, key_file = _certificate(tmp_path)
	server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
	server_context.load_cert_chain(cert_file, key_file)

	async def reply(stream: SocketStream) -> None:
		async with stream:
			try:
				await stream.receive()
				await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
			except (anyio.BrokenResourceError, anyio.EndOfStream, ssl.SSLError):
				return

	tcp = await anyio.create_tcp_listener(local_host="127.0.0.1")
	port = tcp.extra(anyio.abc.SocketAttribute.local_port)
	listener = TLSListener(tcp, server_context, standard_compatible=False)
	# The bundle is the environment's at the first handshake, after the client was made.
	transport = PooledTransport(fast=False)
	async with listener, anyio.create_task_group() as tg, new_client(transport) as client:
		tg.start_soon(listener.serve, reply)
		monkeypatch.delenv("SSL_CERT_DIR", raising=False)
		if trusted:
			monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
			assert (await client.get(f"https://127.0.0.1:{port}/")).text == "ok"
			assert transport._ssl is not None and _cas(transport._ssl) == 1
		else:  # certifi's bundle: the certificate is checked, and refused
			monkeypatch.delenv("SSL_CERT_FILE", raising=False)
			with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
				await client.get(f"https://127.0.0.1:{port}/")
		tg.cancel_scope.cancel()
