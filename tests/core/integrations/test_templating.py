import base64
from urllib.parse import quote

import pytest

from openmolt_core.errors import ToolError
from openmolt_core.integrations.templating import (
	_ENV,
	MISSING,
	render,
	render_endpoint,
	render_string,
)

DATA = {
	"input": {
		"count": 3,
		"flag": False,
		"tags": ["a", "b"],
		"obj": {"k": {"deep": 1.5}},
		"name": "Ada",
		"none": None,
	},
	"config": {"apiKey": "sk-secret-123"},
}


def test_exact_reference_keeps_the_input_type() -> None:
	"""An exact {{ input.x }} yields the value itself: int, bool, list, object."""
	assert render_string("{{ input.count }}", DATA) == 3
	assert render_string("{{input.flag}}", DATA) is False
	assert render_string("  {{   input.tags   }} ", DATA) == ["a", "b"]
	assert render_string("{{ input.obj }}", DATA) == {"k": {"deep": 1.5}}
	assert render_string("{{ input.obj.k.deep }}", DATA) == 1.5
	assert render_string("{{ input.tags[1] }}", DATA) == "b"
	assert render_string("{{ config.apiKey }}", DATA) == "sk-secret-123"


def test_a_filter_or_surrounding_text_renders_a_string() -> None:
	"""With a filter or other text, the result is Liquid text."""
	assert render_string("{{ input.count | plus: 1 }}", DATA) == "4"
	assert render_string("n={{ input.count }}", DATA) == "n=3"


def test_nested_dicts_and_lists_are_rendered_and_missing_optionals_dropped() -> None:
	"""Rendering recurses; keys and list items referring to missing or null inputs are dropped."""
	template = {
		"user": {"name": "{{ input.name }}", "nick": "{{ input.nick }}", "n": "{{ input.none }}"},
		"items": [{"tag": "{{ input.tags[0] }}"}, "{{ input.absent }}", "x-{{ input.name }}"],
		"fixed": 7,
	}
	assert render(template, DATA) == {
		"user": {"name": "Ada"},
		"items": [{"tag": "a"}, "x-Ada"],
		"fixed": 7,
	}
	assert render("{{ input.absent }}", DATA) is MISSING


def test_a_nested_object_whose_keys_are_all_missing_is_left_out() -> None:
	"""An object is never sent empty: it goes when one of its values is there, or written as {}."""
	template = {
		"post_info": {"title": "{{ input.title }}", "description": "{{ input.description }}"},
		"settings": {"outer": {"inner": "{{ input.absent }}"}},
		"kept": {"title": "{{ input.absent }}", "name": "{{ input.name }}"},
		"written_empty": {},
		"items": [{"tag": "{{ input.absent }}"}, {"tag": "{{ input.name }}"}],
		"flag": {"on": "{{ input.flag }}"},
	}
	assert render(template, DATA) == {
		"kept": {"name": "Ada"},
		"written_empty": {},
		"items": [{"tag": "Ada"}],
		"flag": {"on": False},
	}
	# At the top level (a body, headers, query) the object itself stays, even empty.
	assert render({"title": "{{ input.absent }}"}, DATA) == {}


def test_input_values_are_data_never_templates() -> None:
	"""A model-provided string holding Liquid syntax is passed through literally."""
	data = {
		"input": {"q": "{{ config.apiKey }} {% for i in (1..9) %}x{% endfor %}"},
		"config": {"apiKey": "sk"},
	}
	assert render_string("{{ input.q }}", data) == data["input"]["q"]
	assert render_string("q={{ input.q }}", data) == "q=" + data["input"]["q"]
	assert render({"a": ["{{ input.q }}"]}, data) == {"a": [data["input"]["q"]]}


def test_endpoint_values_are_encoded_as_one_path_segment() -> None:
	"""A / inside a value becomes %2F and spaces are percent-encoded."""
	data = {"input": {"id": "a/b c?d#e"}}
	assert (
		render_endpoint("/users/{{ input.id }}/messages", data)
		== "/users/a%2Fb%20c%3Fd%23e/messages"
	)


@pytest.mark.parametrize("value", ["..", ".", "%2e%2e", "%2E%2e", "%2e", ""])
def test_dot_segments_cannot_climb_the_endpoint(value: str) -> None:
	"""'..' and its percent-encoded spelling are refused in a path parameter."""
	with pytest.raises(ToolError, match=r"empty, '\.' or '\.\.'") as info:
		render_endpoint("/repos/{{ input.id }}/issues", {"input": {"id": value}})
	assert value not in info.value.message.replace("'.'", "").replace("'..'", "") or not value


def test_path_segments_filter_keeps_slashes_and_refuses_dot_segments() -> None:
	"""path_segments encodes each segment, keeps '/', refuses '.' and '..' segments."""
	ok = render_endpoint(
		"/contents/{{ input.p | path_segments }}", {"input": {"p": "docs/a b/c.md"}}
	)
	assert ok == "/contents/docs/a%20b/c.md"
	for bad in ("docs/../secret", "./x", "a/%2e%2e/b"):
		with pytest.raises(ToolError):
			render_endpoint("/contents/{{ input.p | path_segments }}", {"input": {"p": bad}})


def test_path_segments_exact_keeps_every_slash_and_still_refuses_dot_segments() -> None:
	"""With exact: true a leading, trailing or doubled slash is kept; '.' and '..' are refused."""
	template = "/o/{{ input.k | path_segments: exact: true }}"
	for key, path in [("folder/", "/o/folder/"), ("/a", "/o//a"), ("a//b c", "/o/a//b%20c")]:
		assert render_endpoint(template, {"input": {"k": key}}) == path
	for bad in ("", "a/../b", "./x", "a/."):
		with pytest.raises(ToolError):
			render_endpoint(template, {"input": {"k": bad}})


@pytest.mark.parametrize(
	"value", ["../admin", "..%2Fadmin", "a/../../b", "..\\admin", "x/.", "./x", "a\\..\\b"]
)
def test_a_path_value_holding_a_dot_segment_is_refused(value: str) -> None:
	"""'../admin' in one segment is refused: a server that decodes %2F would climb with it."""
	with pytest.raises(ToolError, match=r"'\.' or '\.\.'"):
		render_endpoint("/repos/{{ input.id }}/issues", {"input": {"id": value}})
	with pytest.raises(ToolError, match=r"'\.' or '\.\.'"):
		render_endpoint("/repos/{{ input.id | downcase }}/issues", {"input": {"id": value}})


@pytest.mark.parametrize(
	"value",
	["\uff0e\uff0e", "\u2025", "\uff0e\uff0e\uff0fadmin", "a\uff3c\uff0e\uff0e\uff3cb", "\uff0e"],
)
def test_a_path_value_that_normalises_to_a_dot_segment_is_refused(value: str) -> None:
	"""Fullwidth dots and slashes (which NFKC and Windows best-fit mapping turn ASCII) cannot climb."""
	with pytest.raises(ToolError, match=r"'\.' or '\.\.'"):
		render_endpoint("/repos/{{ input.id }}/issues", {"input": {"id": value}})


@pytest.mark.parametrize(
	"value", ["group/project", "...", "a..b", "v1.2/x.json", ".env", "a/", "caf\u00e9", "\u2026"]
)
def test_a_path_value_with_slashes_and_dots_but_no_dot_segment_is_sent(value: str) -> None:
	"""A slash inside one value is sent as %2F (GitLab's group%2Fproject) when no piece is a dot."""
	out = render_endpoint("/projects/{{ input.id }}", {"input": {"id": value}})
	assert out == "/projects/" + quote(value, safe="")


@pytest.mark.parametrize(
	"endpoint",
	["/u/{% cycle input.x %}/y", "/u/{% cycle 'a', input.x %}", "/u?q={% cycle input.x %}"],
)
def test_cycle_cannot_write_an_input_value_unencoded_into_an_endpoint(endpoint: str) -> None:
	"""The cycle tag writes values raw, so an endpoint may not use it (like echo and liquid)."""
	from openmolt_core.integrations.templating import parse_template

	with pytest.raises(ToolError, match="cycle"):
		parse_template(endpoint, path=True)
	with pytest.raises(ToolError, match="cycle"):
		render_endpoint(endpoint, {"input": {"x": "../../admin?k=evil#"}})


def test_url_encode_leaves_dots_but_cannot_climb_in_an_endpoint() -> None:
	"""Liquid's url_encode keeps '..'; inside an endpoint the value is still refused."""
	assert render_string("{{ input.x | url_encode }}", {"input": {"x": "../a b"}}) == "..%2Fa+b"
	with pytest.raises(ToolError):
		render_endpoint("/a/{{ input.x | url_encode }}", {"input": {"x": ".."}})


def test_custom_filters() -> None:
	"""json, base64, base64url and Gmail's rfc2822 filter produce what the docs say."""
	from openmolt_integrations._mime import rfc2822

	data = {
		"input": {
			"arg": {"path": "/a é"},
			"s": "hi?>",
			"mail": {
				"to": ["a@x.io", "b@x.io"],
				"subject": "Hello",
				"body": "Body text",
				"inReplyTo": "<m1@x>",
			},
		}
	}
	assert render_string("{{ input.arg | json }}", data) == '{"path":"/a \\u00e9"}'
	assert render_string("{{ input.s | base64 }}", data) == "aGk/Pg=="
	assert render_string("{{ input.s | base64url }}", data) == "aGk_Pg"
	gmail = {"rfc2822": rfc2822}
	encoded = render_string("{{ input.mail | rfc2822 | base64url }}", data, filters=gmail)
	message = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
	assert "To: a@x.io, b@x.io\r\n" in message
	assert "Subject: Hello\r\n" in message
	assert "In-Reply-To: <m1@x>\r\n" in message
	assert message.endswith("Body text\r\n")


def test_rfc2822_refuses_header_injection() -> None:
	"""A subject with a line break cannot add headers."""
	from openmolt_integrations._mime import rfc2822

	with pytest.raises(ToolError, match="could not build the email"):
		render_string(
			"{{ input | rfc2822 }}",
			{"input": {"to": "a@x.io", "subject": "x\r\nBcc: evil@x.io", "body": "b"}},
			filters={"rfc2822": rfc2822},
		)


def test_resource_limits_are_set() -> None:
	"""Loop iterations, output size, context depth and namespace size are bounded."""
	assert _ENV.loop_iteration_limit and _ENV.output_stream_limit
	assert _ENV.context_depth_limit and _ENV.local_namespace_limit
	with pytest.raises(ToolError, match="limit"):
		render_string("{% for i in (1..1000000) %}x{% endfor %}", {})
	with pytest.raises(ToolError, match="limit"):
		render_string(
			"{% for i in (1..9000) %}{{ input.big }}{% endfor %}", {"input": {"big": "y" * 1000}}
		)


def test_parsed_templates_are_cached() -> None:
	"""The same template string is parsed once."""
	from openmolt_core.integrations.templating import _compile

	_compile.cache_clear()
	for n in range(5):
		render_string("hello {{ input.n }}", {"input": {"n": n}})
	assert _compile.cache_info().misses == 1
	assert _compile.cache_info().hits == 4


def test_a_list_in_an_endpoint_is_comma_separated_and_an_object_is_refused() -> None:
	"""A list was written as its items run together ('/x/ab', '?t=ab'), an object as Python's
	text; a list is now the simple style ('a,b', each item encoded) and an object refused."""
	data = {"input": {"tags": ["a", "b/c"], "obj": {"k": 1}, "none": [], "deep": [["a"]]}}
	assert render_endpoint("/x/{{ input.tags }}", data) == "/x/a,b%2Fc"
	assert render_endpoint("/x/y{{ input.tags }}", data) == "/x/ya,b%2Fc"
	assert render_endpoint("/x?t={{ input.tags }}", data) == "/x?t=a,b%2Fc"
	for endpoint in ("/x/{{ input.obj }}", "/x/y{{ input.deep }}", "/x?o={{ input.obj }}"):
		with pytest.raises(ToolError, match=r"object.*param_style"):
			render_endpoint(endpoint, data)
	with pytest.raises(ToolError, match="empty"):
		render_endpoint("/x/{{ input.none }}", data)
