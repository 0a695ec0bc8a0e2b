"""End to end against moto's S3 server on 127.0.0.1 with signature checking switched on."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_integrations import s3

pytestmark = pytest.mark.anyio

CONTENT = b"quarterly numbers\n" * 20
DATA_URL = "data:text/csv;base64," + base64.b64encode(CONTENT).decode()
POLICY = {
	"Version": "2012-10-17",
	"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
}


def _free_port() -> int:
	with socket.socket() as sock:
		sock.bind(("127.0.0.1", 0))
		return int(sock.getsockname()[1])


def _wait_until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
	deadline = time.monotonic() + 30
	while time.monotonic() < deadline:
		if process.poll() is not None:
			raise RuntimeError(f"moto server exited with {process.returncode}")
		try:
			with socket.create_connection(("127.0.0.1", port), timeout=0.5):
				return
		except OSError:
			time.sleep(0.2)
	raise RuntimeError("moto server did not start within 30 seconds")


@pytest.fixture(scope="module")
def moto_s3() -> Iterator[dict[str, Any]]:
	"""A moto server that authenticates requests after three set-up calls, and a key it accepts."""
	import botocore.session

	port = _free_port()
	env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3", "MOTO_PORT": str(port)}
	process = subprocess.Popen(
		[sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
		env=env,
		stdout=subprocess.DEVNULL,
		stderr=subprocess.DEVNULL,
	)
	try:
		_wait_until_listening(port, process)
		endpoint = f"http://127.0.0.1:{port}"
		iam = botocore.session.get_session().create_client(
			"iam",
			region_name="us-east-1",
			endpoint_url=endpoint,
			aws_access_key_id="bootstrap",
			aws_secret_access_key="bootstrap",
		)
		iam.create_user(UserName="agent")
		iam.put_user_policy(
			UserName="agent", PolicyName="s3-all", PolicyDocument=json.dumps(POLICY)
		)
		key = iam.create_access_key(UserName="agent")["AccessKey"]
		yield {
			"endpoint": endpoint,
			"region": "us-east-1",
			"forcePathStyle": True,
			"allowInternalHosts": ["127.0.0.1"],  # a self-hosted store on this machine
			"accessKeyId": key["AccessKeyId"],
			"secretAccessKey": key["SecretAccessKey"],
		}
	finally:
		process.terminate()
		try:
			process.wait(timeout=10)
		except subprocess.TimeoutExpired:
			process.kill()
			process.wait(timeout=10)


def _results(model: ScriptedModel) -> list[dict[str, Any]]:
	out = []
	for message in model.requests[-1].messages:
		if message.role == "user":
			turn = json.loads(message.content)
			if isinstance(turn, dict):
				out.extend(turn.get("results", []))
	return out


async def test_put_list_get_delete_with_accepted_signatures(moto_s3: dict[str, Any]) -> None:
	"""Every signed request is accepted: the object goes in, is listed, read back and deleted."""
	model = ScriptedModel(
		[
			call_tool("s3.createBucket", Bucket="reports"),
			call_tool("s3.putObject", Bucket="reports", Key="2026/q3 numbers.csv", file=DATA_URL),
			call_tool("s3.listObjects", Bucket="reports", prefix="2026/"),
			call_tool("s3.getObject", Bucket="reports", Key="2026/q3 numbers.csv"),
			call_tool("s3.deleteObject", Bucket="reports", Key="2026/q3 numbers.csv"),
			call_tool("s3.listObjects", Bucket="reports", prefix="2026/"),
			finish(result="done"),
		]
	)
	async with OpenMolt(plugins=[s3], entry_points=False) as om:
		agent = om.create_agent(
			name="Archivist",
			model=model,
			integrations=[
				{"integration": "s3", "credential": {"type": "aws_sigv4", "config": moto_s3}}
			],
		)
		result = await agent.run("Store, check and remove the report")
		assert result.output == {"result": "done"}
		created, put, listed, fetched, deleted, relisted = _results(model)
		for step in (created, put, listed, fetched, deleted, relisted):
			assert step["ok"] is True, step
		assert put["result"]["headers"]["ETag"].strip('"')
		contents = listed["result"]["ListBucketResult"]["Contents"]
		assert contents["Key"] == "2026/q3 numbers.csv"
		assert int(contents["Size"]) == len(CONTENT)
		stored = await om.files.open(fetched["result"]["file"])
		assert stored.data == CONTENT
		assert stored.media_type == "text/csv"
		assert deleted["result"]["status"] == 204
		assert "Contents" not in relisted["result"]["ListBucketResult"]
		assert relisted["result"]["ListBucketResult"]["KeyCount"] == "0"


async def test_metadata_round_trip_and_batch_delete(moto_s3: dict[str, Any]) -> None:
	"""Metadata stored by putObject come back from headObject; deleteObjects removes both keys."""
	model = ScriptedModel(
		[
			call_tool("s3.createBucket", Bucket="batch"),
			call_tool(
				"s3.putObject",
				Bucket="batch",
				Key="a.csv",
				file=DATA_URL,
				Metadata={"author": "Ana", "project-id": "42"},
			),
			call_tool("s3.putObject", Bucket="batch", Key="dir/b c.csv", file=DATA_URL),
			call_tool("s3.headObject", Bucket="batch", Key="a.csv"),
			call_tool(
				"s3.deleteObjects",
				Bucket="batch",
				Objects=[{"Key": "a.csv"}, {"Key": "dir/b c.csv"}],
			),
			call_tool("s3.listObjects", Bucket="batch"),
			finish(result="done"),
		]
	)
	async with OpenMolt(plugins=[s3], entry_points=False) as om:
		agent = om.create_agent(
			name="Archivist",
			model=model,
			integrations=[
				{"integration": "s3", "credential": {"type": "aws_sigv4", "config": moto_s3}}
			],
		)
		await agent.run("Store, inspect and remove")
	created, first, second, head, deleted, listed = _results(model)
	for step in (created, first, second, head, deleted, listed):
		assert step["ok"] is True, step
	headers = head["result"]["headers"]
	assert headers["x-amz-meta-author"] == "Ana"
	assert headers["x-amz-meta-project-id"] == "42"
	keys = deleted["result"]["DeleteResult"]["Deleted"]
	assert sorted(k["Key"] for k in keys) == ["a.csv", "dir/b c.csv"]
	assert "Error" not in deleted["result"]["DeleteResult"]
	assert "Contents" not in listed["result"]["ListBucketResult"]


async def test_a_wrong_secret_is_refused_by_the_server(moto_s3: dict[str, Any]) -> None:
	"""With a wrong secret the server rejects the signature, and the model hears why."""
	config = {**moto_s3, "secretAccessKey": "not-the-right-secret-key"}
	model = ScriptedModel([call_tool("s3.listBuckets"), finish(result="refused")])
	async with OpenMolt(plugins=[s3], entry_points=False) as om:
		agent = om.create_agent(
			name="Intruder",
			model=model,
			integrations=[
				{"integration": "s3", "credential": {"type": "aws_sigv4", "config": config}}
			],
		)
		await agent.run("List buckets")
	(failed,) = _results(model)
	assert failed["ok"] is False
	assert "403" in json.dumps(failed)
	assert (
		"SignatureDoesNotMatch" in json.dumps(failed) or "signature" in json.dumps(failed).lower()
	)
	assert "not-the-right-secret-key" not in json.dumps(failed)


async def test_a_prefix_with_a_space_lists_under_a_signature_s3_accepts(
	moto_s3: dict[str, Any],
) -> None:
	"""Query values with spaces and '+' are signed as sent (%20, as botocore writes them)."""
	model = ScriptedModel(
		[
			call_tool("s3.createBucket", Bucket="drafts"),
			call_tool("s3.putObject", Bucket="drafts", Key="my folder/a+b.csv", file=DATA_URL),
			call_tool("s3.putObject", Bucket="drafts", Key="my+folder/other.csv", file=DATA_URL),
			call_tool("s3.listObjects", Bucket="drafts", prefix="my folder/"),
			call_tool("s3.listObjects", Bucket="drafts", prefix="my+folder/"),
			finish(result="done"),
		]
	)
	async with OpenMolt(plugins=[s3], entry_points=False) as om:
		agent = om.create_agent(
			name="Archivist",
			model=model,
			integrations=[
				{"integration": "s3", "credential": {"type": "aws_sigv4", "config": moto_s3}}
			],
		)
		await agent.run("List the drafts")
		*_, spaced, plussed = _results(model)
		assert spaced["ok"] is True, spaced
		assert spaced["result"]["ListBucketResult"]["Contents"]["Key"] == "my folder/a+b.csv"
		assert plussed["ok"] is True, plussed
		assert plussed["result"]["ListBucketResult"]["Contents"]["Key"] == "my+folder/other.csv"
