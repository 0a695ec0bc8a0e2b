"""GitHub REST API: repositories, issues, pull requests and reviews, branches, commits, files, Actions.

Every request sends ``X-GitHub-Api-Version: 2026-03-10`` and ``Accept: application/vnd.github+json``.
Lists page with ``per_page`` (up to 100) and ``page``, and return GitHub's ``Link`` header (its
``rel="next"`` says there is another page) beside the body. File contents travel base64-encoded: the
``putFile`` tool encodes text itself (``content``) or takes bytes already encoded
(``content_base64``).
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations.schema import (
	array,
	boolean,
	integer,
	nullable,
	obj,
	passthrough,
	string,
)

__all__ = [
	"GITHUB_API_VERSION",
	"INTEGRATION",
	"SEARCH_SORTS",
	"SEARCH_TYPES",
	"TOOLS",
	"register_integrations",
]

GITHUB_API_VERSION = "2026-03-10"
"""The ``X-GitHub-Api-Version`` header every request sends."""

SEARCH_TYPES = ["code", "commits", "issues", "repositories", "users"]
"""What the ``search`` tool can search (``/search/<type>``)."""

SEARCH_SORTS = {
	"code": ["indexed"],
	"commits": ["author-date", "committer-date"],
	"issues": [
		"comments",
		"reactions",
		"reactions-+1",
		"reactions--1",
		"reactions-smile",
		"reactions-thinking_face",
		"reactions-heart",
		"reactions-tada",
		"interactions",
		"created",
		"updated",
	],
	"repositories": ["stars", "forks", "help-wanted-issues", "updated"],
	"users": ["followers", "repositories", "joined"],
}
"""The ``sort`` values GitHub's OpenAPI lists for each search type (``/search/<type>``)."""


_OWNER = string("The account owning the repository (user or organization), e.g. octocat.")
_REPO = string("The repository name without the owner, e.g. hello-world.")
_ISSUE = integer("The issue (or pull request) number.", minimum=1)
_PULL = integer("The pull request number.", minimum=1)
_PER_PAGE = integer("Results per page (1-100).", minimum=1, maximum=100, default=30)
_PAGE = integer("Page number, from 1.", minimum=1, default=1)
_DIRECTION = string("Sort direction.", enum=["asc", "desc"])
_REPO_PROPS = {"owner": _OWNER, "repo": _REPO}
_REPO_REQUIRED = ["owner", "repo"]
_R = "/repos/{{ input.owner }}/{{ input.repo }}"
_PAGED = (
	' The reply is {body, headers}: while headers.Link names a page with rel="next", there '
	"are more; ask for that page (page + 1)."
)


def _paged_list(
	handle: str,
	description: str,
	endpoint: str,
	props: dict[str, Any],
	required: list[str],
	*query: str,
) -> HttpTool:
	"""A GET that lists one page (``per_page``, ``page``; `_PAGED`'s Link header says more).

	Args:
		handle: The tool's handle.
		description: What it lists (`_PAGED` is added).
		endpoint: The path, under `_R` or not.
		props: The inputs before the page's two (the repository's, a number, filters).
		required: The required inputs.
		*query: The inputs among ``props`` sent in the query, before the page's two.
	"""
	return HttpTool(
		handle=handle,
		description=description + _PAGED,
		scopes=["read"],
		response_headers=["Link"],
		method="GET",
		endpoint=endpoint,
		query_params=passthrough(*query, "per_page", "page"),
		input_schema={
			"type": "object",
			"properties": {**props, "per_page": _PER_PAGE, "page": _PAGE},
			"required": required,
		},
	)


_REVIEW_EVENT = string(
	"APPROVE, REQUEST_CHANGES or COMMENT (leave out to keep a pending draft review).",
	enum=["APPROVE", "REQUEST_CHANGES", "COMMENT"],
)

TOOLS = [
	HttpTool(
		handle="listMyRepos",
		description="List repositories the authenticated user can access (own, collaborator, organization)."
		+ _PAGED,
		scopes=["read"],
		response_headers=["Link"],
		method="GET",
		endpoint="/user/repos",
		query_params=passthrough(
			"visibility", "affiliation", "sort", "direction", "per_page", "page"
		),
		input_schema={
			"type": "object",
			"properties": {
				"visibility": string("Filter by visibility.", enum=["all", "public", "private"]),
				"affiliation": string("Comma list of owner, collaborator, organization_member."),
				"sort": string("Sort field.", enum=["created", "updated", "pushed", "full_name"]),
				"direction": _DIRECTION,
				"per_page": _PER_PAGE,
				"page": _PAGE,
			},
		},
	),
	HttpTool(
		handle="getRepo",
		description="Get a repository: description, default branch, visibility, counts, topics.",
		scopes=["read"],
		method="GET",
		endpoint=_R,
		input_schema={"type": "object", "properties": _REPO_PROPS, "required": _REPO_REQUIRED},
	),
	HttpTool(
		handle="listIssues",
		description=(
			"List a repository's issues (pull requests are included too; they have a "
			"`pull_request` key). Filter by state, labels, assignee, creator, since."
		)
		+ _PAGED,
		scopes=["read"],
		response_headers=["Link"],
		method="GET",
		endpoint=f"{_R}/issues",
		query_params=passthrough(
			"state",
			"labels",
			"assignee",
			"creator",
			"mentioned",
			"sort",
			"direction",
			"since",
			"per_page",
			"page",
		),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"state": string("Issue state.", enum=["open", "closed", "all"], default="open"),
				"labels": string("Comma-separated label names, e.g. bug,ui."),
				"assignee": string("A login, none (unassigned) or * (any)."),
				"creator": string("Login of the author."),
				"mentioned": string("Login of a mentioned user."),
				"sort": string("Sort field.", enum=["created", "updated", "comments"]),
				"direction": _DIRECTION,
				"since": string("Only updated at or after this ISO 8601 time.", format="date-time"),
				"per_page": _PER_PAGE,
				"page": _PAGE,
			},
			"required": _REPO_REQUIRED,
		},
	),
	HttpTool(
		handle="createIssue",
		description="Open an issue, with labels and assignees if given.",
		scopes=["write"],
		method="POST",
		endpoint=f"{_R}/issues",
		body=passthrough("title", "body", "labels", "assignees", "milestone", "type"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"title": string("The issue title."),
				"body": string("The issue text (Markdown)."),
				"labels": array({"type": "string"}, "Label names."),
				"assignees": array({"type": "string"}, "Logins to assign."),
				"milestone": integer("Milestone number."),
				"type": string("The organization's issue type name, e.g. Bug."),
			},
			"required": [*_REPO_REQUIRED, "title"],
		},
	),
	HttpTool(
		handle="getIssue",
		description=(
			"Get one issue (or pull request) by number: title, body, state, labels, assignees, "
			"milestone, comment count."
		),
		scopes=["read"],
		method="GET",
		endpoint=f"{_R}/issues/{{{{ input.issue_number }}}}",
		input_schema={
			"type": "object",
			"properties": {**_REPO_PROPS, "issue_number": _ISSUE},
			"required": [*_REPO_REQUIRED, "issue_number"],
		},
	),
	HttpTool(
		handle="updateIssue",
		description="Edit an issue or pull request: title, body, labels, assignees, or close/reopen it.",
		scopes=["write"],
		method="PATCH",
		endpoint=f"{_R}/issues/{{{{ input.issue_number }}}}",
		body=passthrough(
			"title", "body", "state", "state_reason", "labels", "assignees", "milestone"
		),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"issue_number": _ISSUE,
				"title": string("New title."),
				"body": string("New text (Markdown)."),
				"state": string("open or closed.", enum=["open", "closed"]),
				"state_reason": string(
					"Why it was closed or reopened.",
					enum=["completed", "not_planned", "duplicate", "reopened"],
				),
				"labels": array({"type": "string"}, "Replace all labels with these."),
				"assignees": array({"type": "string"}, "Replace all assignees with these."),
				"milestone": nullable(integer("Milestone number."), "null removes the milestone."),
			},
			"required": [*_REPO_REQUIRED, "issue_number"],
		},
	),
	_paged_list(
		"listIssueComments",
		"List the comments of an issue or pull request, oldest first.",
		f"{_R}/issues/{{{{ input.issue_number }}}}/comments",
		{
			**_REPO_PROPS,
			"issue_number": _ISSUE,
			"since": string(
				"Only comments updated at or after this ISO 8601 time.", format="date-time"
			),
		},
		[*_REPO_REQUIRED, "issue_number"],
		"since",
	),
	HttpTool(
		handle="createIssueComment",
		description="Comment on an issue or pull request.",
		scopes=["write"],
		method="POST",
		endpoint=f"{_R}/issues/{{{{ input.issue_number }}}}/comments",
		body=passthrough("body"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"issue_number": _ISSUE,
				"body": string("The comment (Markdown)."),
			},
			"required": [*_REPO_REQUIRED, "issue_number", "body"],
		},
	),
	HttpTool(
		handle="addLabels",
		description=(
			"Add labels to an issue or pull request, keeping its others (updateIssue's labels "
			"replaces them all). A label that does not exist yet is created. Returns the labels."
		),
		scopes=["write"],
		method="POST",
		endpoint=f"{_R}/issues/{{{{ input.issue_number }}}}/labels",
		body=passthrough("labels"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"issue_number": _ISSUE,
				"labels": array({"type": "string"}, "Label names, e.g. bug.", minItems=1),
			},
			"required": [*_REPO_REQUIRED, "issue_number", "labels"],
		},
	),
	HttpTool(
		handle="removeLabel",
		description="Take one label off an issue or pull request (404 if it does not carry it).",
		scopes=["write"],
		method="DELETE",
		endpoint=f"{_R}/issues/{{{{ input.issue_number }}}}/labels/{{{{ input.name }}}}",
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"issue_number": _ISSUE,
				"name": string("The label's name, e.g. needs-triage."),
			},
			"required": [*_REPO_REQUIRED, "issue_number", "name"],
		},
	),
	_paged_list(
		"listPulls",
		"List pull requests, filtered by state, head (user:branch) and base branch.",
		f"{_R}/pulls",
		{
			**_REPO_PROPS,
			"state": string("PR state.", enum=["open", "closed", "all"], default="open"),
			"head": string("Source branch as user:branch, e.g. octocat:fix-typo."),
			"base": string("Target branch name, e.g. main."),
			"sort": string(
				"Sort field.", enum=["created", "updated", "popularity", "long-running"]
			),
			"direction": _DIRECTION,
		},
		_REPO_REQUIRED,
		"state",
		"head",
		"base",
		"sort",
		"direction",
	),
	HttpTool(
		handle="getPull",
		description="Get a pull request: branches, state, mergeability, review and diff counts.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_R}/pulls/{{{{ input.pull_number }}}}",
		input_schema={
			"type": "object",
			"properties": {**_REPO_PROPS, "pull_number": _PULL},
			"required": [*_REPO_REQUIRED, "pull_number"],
		},
	),
	HttpTool(
		handle="createPull",
		description="Open a pull request from head into base.",
		scopes=["write"],
		method="POST",
		endpoint=f"{_R}/pulls",
		body=passthrough("title", "head", "base", "body", "draft", "maintainer_can_modify"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"title": string("The pull request title."),
				"head": string(
					"Branch with the changes; user:branch for a fork, e.g. octocat:fix."
				),
				"base": string("Branch to merge into, e.g. main."),
				"body": string("Description (Markdown)."),
				"draft": boolean("Open as a draft.", default=False),
				"maintainer_can_modify": boolean("Let maintainers push to the head branch."),
			},
			"required": [*_REPO_REQUIRED, "title", "head", "base"],
		},
	),
	_paged_list(
		"listPullFiles",
		"List the files a pull request changes (up to 3000): filename, status (added, "
		"modified, removed, renamed...), additions, deletions and the diff `patch`.",
		f"{_R}/pulls/{{{{ input.pull_number }}}}/files",
		{**_REPO_PROPS, "pull_number": _PULL},
		[*_REPO_REQUIRED, "pull_number"],
	),
	HttpTool(
		handle="requestReviewers",
		description="Ask users or teams to review a pull request (they are notified).",
		scopes=["write"],
		method="POST",
		endpoint=f"{_R}/pulls/{{{{ input.pull_number }}}}/requested_reviewers",
		body=passthrough("reviewers", "team_reviewers"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"pull_number": _PULL,
				"reviewers": array({"type": "string"}, "Logins of the users to ask."),
				"team_reviewers": array(
					{"type": "string"}, "Slugs of the organization's teams to ask."
				),
			},
			"required": [*_REPO_REQUIRED, "pull_number"],
		},
	),
	HttpTool(
		handle="mergePull",
		description="Merge a pull request (fails with 405 if it is not mergeable, 409 if head moved).",
		scopes=["write"],
		method="PUT",
		endpoint=f"{_R}/pulls/{{{{ input.pull_number }}}}/merge",
		body=passthrough("merge_method", "commit_title", "commit_message", "sha"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"pull_number": _PULL,
				"merge_method": string(
					"How to merge.", enum=["merge", "squash", "rebase"], default="merge"
				),
				"commit_title": string("Title of the merge commit."),
				"commit_message": string("Extra detail for the merge commit."),
				"sha": string("Merge only if the head is still this commit SHA."),
			},
			"required": [*_REPO_REQUIRED, "pull_number"],
		},
	),
	HttpTool(
		handle="getContent",
		description=(
			"Get a file (base64 `content` plus its `sha`, needed to update it) or list a directory. "
			"Files up to 1 MB."
		),
		scopes=["read"],
		method="GET",
		# An empty path (or "/") lists the repository's root: /contents/ as Octokit sends it.
		endpoint=(
			f"{_R}/contents/"
			'{% if input.path != "" and input.path != "/" %}'
			"{{ input.path | path_segments }}{% endif %}"
		),
		query_params=passthrough("ref"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"path": string(
					'Path in the repository, e.g. docs/index.md; "" lists the root directory.'
				),
				"ref": string("Branch, tag or commit; default: the default branch."),
			},
			"required": [*_REPO_REQUIRED, "path"],
		},
	),
	HttpTool(
		handle="putFile",
		description=(
			"Create a file, or replace one (give its current `sha` from getContent), as one "
			"commit. Give text as `content` (it is base64-encoded for you) or bytes already "
			"encoded as `content_base64`."
		),
		scopes=["write"],
		method="PUT",
		endpoint=f"{_R}/contents/{{{{ input.path | path_segments }}}}",
		body=passthrough(
			"message",
			"sha",
			"branch",
			content="{% if input.content_base64 %}{{ input.content_base64 }}"
			"{% else %}{{ input.content | base64 }}{% endif %}",
		),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"path": string("Path of the file, e.g. docs/index.md."),
				"message": string("The commit message."),
				"content": string("The new file content as text (UTF-8)."),
				"content_base64": string(
					"The new file content, base64-encoded (for binary files)."
				),
				"sha": string("Blob SHA of the file being replaced; omit to create a file."),
				"branch": string("Branch to commit to; default: the default branch."),
			},
			"required": [*_REPO_REQUIRED, "path", "message"],
		},
	),
	HttpTool(
		handle="search",
		description=(
			"Search GitHub with its query syntax: code (e.g. addClass repo:jquery/jquery "
			"language:js), issues (e.g. is:pr is:open author:octocat repo:o/r), repositories "
			"(e.g. topic:ml stars:>1000), commits or users. Search allows 30 requests a minute."
		),
		scopes=["read"],
		method="GET",
		endpoint="/search/{{ input.type }}",
		query_params=passthrough("q", "sort", "order", "per_page", "page"),
		input_schema={
			"type": "object",
			"properties": {
				"type": string("What to search.", enum=SEARCH_TYPES),
				"q": string("The search query with qualifiers."),
				"sort": string(
					"Sort field, one of the type's: "
					+ "; ".join(f"{t}: {', '.join(v)}" for t, v in SEARCH_SORTS.items())
					+ ". Default: best match.",
					enum=list(dict.fromkeys(v for values in SEARCH_SORTS.values() for v in values)),
				),
				"order": string("Sort direction.", enum=["asc", "desc"]),
				"per_page": _PER_PAGE,
				"page": _PAGE,
			},
			"required": ["type", "q"],
		},
	),
	HttpTool(
		handle="dispatchWorkflow",
		description=(
			"Start a GitHub Actions workflow that has a workflow_dispatch trigger; returns the "
			"new run's id and URLs."
		),
		scopes=["actions"],
		method="POST",
		endpoint=f"{_R}/actions/workflows/{{{{ input.workflow_id }}}}/dispatches",
		body=passthrough("ref", "inputs"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"workflow_id": string(
					"The workflow file name (e.g. deploy.yml) or its numeric id."
				),
				"ref": string("Branch or tag to run on, e.g. main."),
				"inputs": obj(
					{},
					description='Values for the workflow\'s inputs (at most 25), e.g. {"environment": "staging"}.',
					maxProperties=25,  # "The maximum number of properties is 25" (REST docs)
				),
			},
			"required": [*_REPO_REQUIRED, "workflow_id", "ref"],
		},
	),
	HttpTool(
		handle="listWorkflowRuns",
		description="List recent GitHub Actions runs, filtered by branch, event, status or actor."
		+ _PAGED,
		scopes=["read"],
		response_headers=["Link"],
		method="GET",
		endpoint=f"{_R}/actions/runs",
		query_params=passthrough(
			"branch", "event", "status", "actor", "head_sha", "per_page", "page"
		),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"branch": string("Only runs for this branch."),
				"event": string("Only runs triggered by this event, e.g. push, workflow_dispatch."),
				"status": string(
					"Only runs with this status or conclusion.",
					enum=[
						"completed",
						"action_required",
						"cancelled",
						"failure",
						"neutral",
						"skipped",
						"stale",
						"success",
						"timed_out",
						"in_progress",
						"queued",
						"requested",
						"waiting",
						"pending",
					],
				),
				"actor": string("Only runs started by this login."),
				"head_sha": string("Only runs for this commit."),
				"per_page": _PER_PAGE,
				"page": _PAGE,
			},
			"required": _REPO_REQUIRED,
		},
	),
	HttpTool(
		handle="getWorkflowRun",
		description=(
			"Get one GitHub Actions run (dispatchWorkflow returns its id): status (queued, "
			"in_progress, completed...), conclusion (success, failure...), branch, commit, URLs."
		),
		scopes=["read"],
		method="GET",
		endpoint=f"{_R}/actions/runs/{{{{ input.run_id }}}}",
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"run_id": integer("The workflow run's id.", minimum=1),
			},
			"required": [*_REPO_REQUIRED, "run_id"],
		},
	),
	HttpTool(
		handle="createRelease",
		description="Create a release (and its tag if missing), optionally with generated notes.",
		scopes=["write"],
		method="POST",
		endpoint=f"{_R}/releases",
		body=passthrough(
			"tag_name",
			"target_commitish",
			"name",
			"body",
			"draft",
			"prerelease",
			"generate_release_notes",
			"make_latest",
		),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"tag_name": string("The tag, e.g. v1.2.0."),
				"target_commitish": string(
					"Branch or commit the tag is created from if it does not exist."
				),
				"name": string("The release title."),
				"body": string("Release notes (Markdown)."),
				"draft": boolean("Create an unpublished draft.", default=False),
				"prerelease": boolean("Mark as a pre-release.", default=False),
				"generate_release_notes": boolean(
					"Let GitHub write notes from merged pull requests.", default=False
				),
				"make_latest": string(
					"Whether it becomes the latest release.", enum=["true", "false", "legacy"]
				),
			},
			"required": [*_REPO_REQUIRED, "tag_name"],
		},
	),
	_paged_list(
		"listReleases",
		"List a repository's releases, newest first, drafts included for those who can push.",
		f"{_R}/releases",
		_REPO_PROPS,
		_REPO_REQUIRED,
	),
	HttpTool(
		handle="getLatestRelease",
		description="Get the latest published release (not a draft or pre-release): tag, "
		"name, notes, assets.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_R}/releases/latest",
		input_schema={"type": "object", "properties": _REPO_PROPS, "required": _REPO_REQUIRED},
	),
	_paged_list(
		"listPullReviews",
		"List the reviews of a pull request (state APPROVED, CHANGES_REQUESTED, COMMENTED, "
		"PENDING...), oldest first.",
		f"{_R}/pulls/{{{{ input.pull_number }}}}/reviews",
		{**_REPO_PROPS, "pull_number": _PULL},
		[*_REPO_REQUIRED, "pull_number"],
	),
	HttpTool(
		handle="createPullReview",
		description=(
			"Review a pull request: approve, request changes or comment, with optional line "
			"comments. Without `event` the review stays PENDING (a draft only you see) until "
			"submitPullReview."
		),
		scopes=["write"],
		method="POST",
		endpoint=f"{_R}/pulls/{{{{ input.pull_number }}}}/reviews",
		body=passthrough("commit_id", "body", "event", "comments"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"pull_number": _PULL,
				"commit_id": string("The commit SHA reviewed; default: the pull request's head."),
				"body": string(
					"The review text (Markdown); required for REQUEST_CHANGES and COMMENT."
				),
				"event": _REVIEW_EVENT,
				"comments": array(
					obj(
						{
							"path": string("File path in the repository, e.g. src/app.py."),
							"body": string("The comment (Markdown)."),
							"line": integer("The line in the file's new version (side RIGHT)."),
							"side": string("Side of the diff for line.", enum=["LEFT", "RIGHT"]),
							"start_line": integer("First line of a multi-line comment."),
							"start_side": string(
								"Side of the diff for start_line.", enum=["LEFT", "RIGHT"]
							),
							"position": integer(
								"Lines below the file's first @@ hunk header (instead of line)."
							),
						},
						["path", "body"],
					),
					'Line comments, e.g. [{"path": "app.py", "line": 12, "body": "Typo"}].',
				),
			},
			"required": [*_REPO_REQUIRED, "pull_number"],
		},
	),
	HttpTool(
		handle="submitPullReview",
		description="Submit a PENDING review (made by createPullReview without event) as an approval, change request or comment.",
		scopes=["write"],
		method="POST",
		endpoint=f"{_R}/pulls/{{{{ input.pull_number }}}}/reviews/{{{{ input.review_id }}}}/events",
		body=passthrough("body", "event"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"pull_number": _PULL,
				"review_id": integer("The pending review's id (from createPullReview).", minimum=1),
				"body": string(
					"The review text (Markdown); required for REQUEST_CHANGES and COMMENT."
				),
				"event": _REVIEW_EVENT,
			},
			"required": [*_REPO_REQUIRED, "pull_number", "review_id", "event"],
		},
	),
	HttpTool(
		handle="deleteFile",
		description="Delete a file as one commit. Needs the file's current blob `sha` (from getContent).",
		scopes=["write"],
		method="DELETE",
		endpoint=f"{_R}/contents/{{{{ input.path | path_segments }}}}",
		body=passthrough("message", "sha", "branch"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"path": string("Path of the file, e.g. docs/old.md."),
				"message": string("The commit message."),
				"sha": string("Blob SHA of the file being deleted (getContent's sha)."),
				"branch": string("Branch to commit to; default: the default branch."),
			},
			"required": [*_REPO_REQUIRED, "path", "message", "sha"],
		},
	),
	_paged_list(
		"listBranches",
		"List a repository's branches with their head commit sha; protected=true lists only "
		"protected ones.",
		f"{_R}/branches",
		{
			**_REPO_PROPS,
			"protected": boolean("Only protected branches (false: only unprotected ones)."),
		},
		_REPO_REQUIRED,
		"protected",
	),
	HttpTool(
		handle="createBranch",
		description=(
			"Create a branch pointing at a commit (a git reference refs/heads/<name>). To branch "
			"from main, take the sha of listCommits with sha=main and per_page=1."
		),
		scopes=["write"],
		method="POST",
		endpoint=f"{_R}/git/refs",
		body=passthrough("ref", "sha"),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"ref": string(
					"The new branch's full reference name, e.g. refs/heads/fix-typo.",
					pattern="^refs/heads/[^/].*$",
				),
				"sha": string("The commit SHA the branch starts at."),
			},
			"required": [*_REPO_REQUIRED, "ref", "sha"],
		},
	),
	HttpTool(
		handle="listCommits",
		description="List commits, newest first, of a branch or from a commit SHA; filter by path, author and dates."
		+ _PAGED,
		scopes=["read"],
		response_headers=["Link"],
		method="GET",
		endpoint=f"{_R}/commits",
		query_params=passthrough(
			"sha", "path", "author", "committer", "since", "until", "per_page", "page"
		),
		input_schema={
			"type": "object",
			"properties": {
				**_REPO_PROPS,
				"sha": string(
					"Branch name or commit SHA to start from; default: the default branch."
				),
				"path": string("Only commits touching this file or directory path."),
				"author": string("Only commits by this login or email."),
				"committer": string("Only commits committed by this login or email."),
				"since": string("Only commits at or after this ISO 8601 time.", format="date-time"),
				"until": string("Only commits before this ISO 8601 time.", format="date-time"),
				"per_page": _PER_PAGE,
				"page": _PAGE,
			},
			"required": _REPO_REQUIRED,
		},
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"mergePull": [],
		"dispatchWorkflow": [],
		"getContent": ["private", "untrusted"],
		"listIssues": ["untrusted"],
		"getIssue": ["untrusted"],
		"listIssueComments": ["untrusted"],
		"listPulls": ["untrusted"],
		"getPull": ["untrusted"],
		"search": ["untrusted"],
		"createIssue": ["outbound"],
		"updateIssue": ["outbound"],
		"createIssueComment": ["outbound"],
		"createPull": ["outbound"],
		"putFile": ["outbound"],
		"createRelease": ["outbound"],
		"listPullReviews": ["untrusted"],
		"listCommits": ["private", "untrusted"],
		"createPullReview": ["outbound"],
		"submitPullReview": ["outbound"],
		"deleteFile": ["outbound"],
		"createBranch": ["outbound"],
		"addLabels": ["outbound"],
		"removeLabel": ["outbound"],
		"requestReviewers": ["outbound"],
		"listPullFiles": ["private", "untrusted"],
		# A run carries its head commit (message, author's name and email) and its display
		# title (a pull request's title or a commit message), as listCommits does.
		"listWorkflowRuns": ["private", "untrusted"],
		"getWorkflowRun": ["private", "untrusted"],
		"listBranches": [],
		# Release notes are written by the repository's maintainers and contributors.
		"listReleases": ["untrusted"],
		"getLatestRelease": ["untrusted"],
		# Others' words: repository descriptions and topics their owners write.
		"getRepo": ["untrusted"],
		"listMyRepos": ["private", "untrusted"],
	},
	id="github",
	name="GitHub",
	description="Work with GitHub repositories: issues, pull requests and reviews, branches, commits, files, search, Actions and releases.",
	api_version=GITHUB_API_VERSION,
	api_setup=ApiSetup(
		base_url="https://api.github.com",
		headers={
			"Accept": "application/vnd.github+json",
			"X-GitHub-Api-Version": GITHUB_API_VERSION,
		},
	),
	credential_setup=[
		BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"}),
		OAuth2Credential(
			type="oauth2",
			auth_url="https://github.com/login/oauth/authorize",
			token_url="https://github.com/login/oauth/access_token",
			client_id="{{ config.clientId }}",
			client_secret="{{ config.clientSecret }}",
			refresh_token="{{ config.refreshToken }}",
			scopes=["repo", "workflow"],
			# GitHub OAuth apps: space-separated scopes, PKCE (S256) accepted, the client secret
			# at the token URL; private repositories need ``repo`` even to read.
			pkce="supported",
			client_secret_required=True,
			scope_map={"read": ["repo"], "write": ["repo", "workflow"], "actions": ["repo"]},
			device_url="https://github.com/login/device/code",  # when the app enables it
		),
	],
	scopes={
		"read": "Read repositories, branches, issues, pull requests, their files and reviews, commits, files, workflow runs, releases; search.",
		"write": "Open and edit issues and pull requests, label them, comment, review and ask for reviews, merge, create branches, commit and delete files, release.",
		"actions": "Start GitHub Actions workflows.",
	},
	tools=TOOLS,
	docs="""## Get a token

Create a **fine-grained personal access token** at <https://github.com/settings/personal-access-tokens/new>:
pick the repositories, then grant *Contents* (read and write for putFile, deleteFile, createBranch, releases and merges),
*Issues*, *Pull requests* (read and write to review), *Actions* (read and write to dispatch workflows) and *Metadata* (read).
A classic token needs the `repo` and `workflow` scopes. A GitHub App installation token works too.

```python
om = OpenMolt(integrations={"github": {"apiKey": "github_pat_..."}})
```

For an OAuth App, authorize at `https://github.com/login/oauth/authorize` and exchange the code
at `https://github.com/login/oauth/access_token`; pass `{"type": "oauth2", "config":
{"accessToken", "clientId", "clientSecret"}}` (plus `refreshToken` if the app issues expiring tokens).

Requests send `X-GitHub-Api-Version: 2026-03-10`.
""",
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the GitHub integration."""
	register(INTEGRATION)
