"""Each OAuth scope an integration asks for is one its tools need, and each need is asked for.

The needs are the vendors' method references, tool by tool:

- Slack: https://docs.slack.dev/reference/methods/<method>, "Required scopes" for a bot token. A
  method on conversations of every type (conversations.history, .info, .open, ...) needs the
  scope of each type the tool reaches; a bot opens a DM or group DM with im:write
  (https://docs.slack.dev/reference/scopes/mpim.write lists only user and legacy bot tokens for
  mpim:write, so it is not a bot scope to ask for). search.messages takes a user token only (its
  search:read user scope is checked in test_messaging_conformance); chat.getPermalink and
  chat.scheduledMessages.list need none; the upload URL of files.getUploadURLExternal takes no
  token. No tool reads files (files.info, files.list): files:read is not needed.
- GitHub: https://docs.github.com/en/rest (each operation's "OAuth app tokens and personal access
  tokens (classic) need the ... scope") and "Scopes for OAuth apps": ``repo`` for every private
  repository operation, ``workflow`` to write a file under .github/workflows. No tool reads the
  user's profile (``read:user``).

A tool added without its needs here fails the coverage check, so the table cannot fall behind.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt_core.integrations import OAuth2Credential
from openmolt_integrations import github, slack

_CONVERSATION_READ = {"channels:read", "groups:read", "im:read", "mpim:read"}
_CONVERSATION_HISTORY = {"channels:history", "groups:history", "im:history", "mpim:history"}
_MANAGE = {"channels:manage", "groups:write"}

_SLACK: dict[str, set[str]] = {
	"postMessage": {"chat:write", "chat:write.public"},
	"updateMessage": {"chat:write"},
	"deleteMessage": {"chat:write"},
	"scheduleMessage": {"chat:write"},
	"listScheduledMessages": set(),
	"deleteScheduledMessage": {"chat:write"},
	"postEphemeral": {"chat:write"},
	"listConversations": _CONVERSATION_READ,
	"getConversationHistory": _CONVERSATION_HISTORY,
	"getThreadReplies": _CONVERSATION_HISTORY,
	"getConversationInfo": _CONVERSATION_READ,
	"openConversation": {"im:write"},
	"listUsers": {"users:read", "users:read.email"},
	"getUserInfo": {"users:read", "users:read.email"},
	"lookupUserByEmail": {"users:read.email"},
	"addReaction": {"reactions:write"},
	"getUploadUrl": {"files:write"},
	"uploadFileBytes": set(),
	"completeUpload": {"files:write"},
	"searchMessages": set(),
	"getPermalink": set(),
	"joinChannel": {"channels:join"},
	"listChannelMembers": _CONVERSATION_READ,
	"createChannel": _MANAGE,
	"renameChannel": _MANAGE,
	"archiveChannel": _MANAGE,
	"inviteToChannel": _MANAGE,
	"removeFromChannel": _MANAGE,
	"setChannelTopic": _MANAGE,
	"setChannelPurpose": _MANAGE,
}

_REPO = {"repo"}
_GITHUB: dict[str, set[str]] = {
	**{
		handle: _REPO
		for handle in (
			"listMyRepos",
			"getRepo",
			"listIssues",
			"createIssue",
			"getIssue",
			"updateIssue",
			"listIssueComments",
			"createIssueComment",
			"addLabels",
			"removeLabel",
			"listPulls",
			"getPull",
			"createPull",
			"listPullFiles",
			"requestReviewers",
			"mergePull",
			"getContent",
			"search",
			"dispatchWorkflow",
			"listWorkflowRuns",
			"getWorkflowRun",
			"createRelease",
			"listReleases",
			"getLatestRelease",
			"listPullReviews",
			"createPullReview",
			"submitPullReview",
			"listBranches",
			"createBranch",
			"listCommits",
		)
	},
	# A file under .github/workflows is written or deleted only with the workflow scope.
	"putFile": {"repo", "workflow"},
	"deleteFile": {"repo", "workflow"},
}

NEEDS: dict[str, tuple[Any, dict[str, set[str]]]] = {
	"slack": (slack, _SLACK),
	"github": (github, _GITHUB),
}


def _oauth(module: Any) -> OAuth2Credential:
	credential = module.INTEGRATION.credential("oauth2")
	assert isinstance(credential, OAuth2Credential)
	return credential


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_every_tool_has_its_needs_listed(name: str) -> None:
	"""The table names every tool of the integration, and only its tools."""
	module, needs = NEEDS[name]
	assert {t.handle for t in module.INTEGRATION.tools} == set(needs)


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_the_credential_asks_for_exactly_the_scopes_the_tools_need(name: str) -> None:
	"""No needed scope is missing (the call fails with missing_scope or 404) and no scope is
	asked for that no tool needs (the user grants more than the agent can use)."""
	module, needs = NEEDS[name]
	asked = set(_oauth(module).scopes)
	needed = set().union(*needs.values())
	assert not needed - asked, f"{name}: not asked for {sorted(needed - asked)}"
	assert not asked - needed, f"{name}: asked for {sorted(asked - needed)}, which no tool needs"


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_each_tool_scope_asks_for_what_its_tools_need(name: str) -> None:
	"""An agent given only a tool's tool scopes is asked for every OAuth scope that tool needs."""
	module, needs = NEEDS[name]
	credential = _oauth(module)
	mapped = {s for values in credential.scope_map.values() for s in values}
	always = set(credential.scopes) - mapped
	for tool in module.INTEGRATION.tools:
		granted = always.union(*(credential.scope_map.get(s, ()) for s in tool.scopes))
		missing = needs[tool.handle] - granted
		assert not missing, f"{name}.{tool.handle} ({tool.scopes}): not asked for {missing}"
