"""A Customer Match upload stopped mid-call and replayed creates one offline user data job, not two.

The fake Google Ads API keeps its jobs (with their ``externalId``). The first process stops while
the job's ``run`` request is under way (the job was created and filled); the recovered run makes
the call again (the tool is safe to retry), finds the job by the call's id and runs it.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
from _durable import stop_process

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_integrations import google_ads

RUN = "customer-match-replay"
CUSTOMER = "https://googleads.googleapis.com/v26/customers/1234567890"
CREDENTIAL = {
	"type": "oauth2",
	"config": {
		"clientId": "client-id-123",
		"clientSecret": "client-secret-456",
		"refreshToken": "1//refresh-token-789",
		"accessToken": "ya29.access-token",
		"expiryDate": "2099-01-01T00:00:00Z",
		"developerToken": "dev-token-abc",
	},
}


class FakeAds:
	"""Offline user data jobs: created, filled, run; found by GAQL on their external id."""

	def __init__(self) -> None:
		self.jobs: dict[str, dict[str, Any]] = {}
		self.requests: list[str] = []
		self.hold_run = True  # the first process stops while its run request is under way
		self.running: anyio.Event | None = None  # set when a run request arrives

	async def __call__(self, request: httpx.Request) -> httpx.Response:
		path = request.url.path
		data = json.loads(request.content or b"{}")
		self.requests.append(path.rsplit("/", 1)[-1])
		if path.endswith("googleAds:search"):
			wanted = data["query"].rsplit("= ", 1)[-1]
			rows = [
				{"offlineUserDataJob": {"resourceName": name, "status": job["status"]}}
				for name, job in self.jobs.items()
				if job["externalId"] == wanted
			]
			return httpx.Response(200, json={"results": rows} if rows else {})
		if path.endswith("offlineUserDataJobs:create"):
			name = f"customers/1234567890/offlineUserDataJobs/{len(self.jobs) + 1}"
			self.jobs[name] = {"externalId": data["job"].get("externalId"), "status": "PENDING"}
			self.jobs[name]["people"] = 0
			return httpx.Response(200, json={"resourceName": name})
		name = path.split("/v26/", 1)[1].rsplit(":", 1)[0]
		if path.endswith(":addOperations"):
			self.jobs[name]["people"] += len(data["operations"])
			return httpx.Response(200, json={})
		if path.endswith(":run"):
			if self.running is not None:
				self.running.set()
			if self.hold_run:
				await anyio.sleep_forever()
			self.jobs[name]["status"] = "RUNNING"
			return httpx.Response(200, json={"name": "customers/1234567890/operations/op-1"})
		return httpx.Response(404, json={"error": {"message": f"no route {path}"}})


def _agent(durability: dict[str, Any], ads: FakeAds, model: ScriptedModel) -> Any:
	http = httpx.AsyncClient(transport=httpx.MockTransport(ads))
	om = OpenMolt(durability=durability, plugins=[google_ads], entry_points=False, http_client=http)
	return om.create_agent(
		name="Audiences",
		model=model,
		integrations=[{"integration": "googleAds", "credential": CREDENTIAL}],
	)


async def _until_run(durability: dict[str, Any], ads: FakeAds) -> None:
	upload = call_tool(
		"googleAds.addCustomerMatchContacts",
		customerId="1234567890",
		userList="customers/1234567890/userLists/555",
		contacts=[{"email": "bo@example.com"}, {"email": "ana@example.com"}],
	)
	agent = _agent(durability, ads, ScriptedModel([upload, finish(result="never")]))
	ads.running = anyio.Event()
	try:
		await agent.start("Add them.", run_id=RUN)
		with anyio.fail_after(30):
			await ads.running.wait()
	finally:
		await stop_process()


async def _recover(durability: dict[str, Any], ads: FakeAds) -> Any:
	ads.hold_run, ads.running = False, None
	om = _agent(durability, ads, ScriptedModel([finish(result="added")])).om
	durable = om.durability
	assert durable is not None
	try:
		await durable.start()  # recovers the run: the upload is in doubt, and retried
		with anyio.fail_after(60):
			return await om.result(RUN)
	finally:
		await stop_process()


def test_a_replayed_customer_match_upload_goes_on_with_the_job_it_created(store: str) -> None:
	"""One job, created once, filled and run; the replayed call found it by its external id."""
	durability = {"url": store, "worker_id": "ads-worker", "heartbeat": 0.2, "lapse": 1.0}
	ads = FakeAds()
	anyio.run(_until_run, durability, ads)
	assert ads.requests == [
		"googleAds:search",
		"offlineUserDataJobs:create",
		"1:addOperations",
		"1:run",
	]
	result = anyio.run(_recover, durability, ads)
	assert result is not None and result.output == {"result": "added"}
	assert list(ads.jobs) == ["customers/1234567890/offlineUserDataJobs/1"]  # one job, not two
	(job,) = ads.jobs.values()
	assert job["status"] == "RUNNING" and job["externalId"].isdigit()
	assert ads.requests[4:] == ["googleAds:search", "1:addOperations", "1:run"]  # no create
