import pytest

from memvault.errors import InvalidInput
from memvault.ingest.envelope import Envelope, SessionStart, parse_json, validate
from tests.helpers import envelope


def test_a_valid_envelope_keeps_every_field():
    parsed = validate(Envelope, envelope(agentId="cursor"))
    assert parsed.hook_type == "post_tool_use"
    assert parsed.session_id == "s1"
    assert parsed.event_id == "s1-e0"
    assert parsed.agent_id == "cursor"
    assert parsed.data["tool_name"] == "Bash"


@pytest.mark.parametrize("field", ["hookType", "sessionId", "project", "cwd", "timestamp"])
def test_each_missing_required_field_is_named(field):
    body = envelope()
    del body[field]
    with pytest.raises(InvalidInput) as caught:
        validate(Envelope, body)
    assert caught.value.fields == [field]
    assert f"{field}: required" in caught.value.message


@pytest.mark.parametrize("field", ["hookType", "sessionId", "project", "cwd", "timestamp"])
def test_empty_strings_are_refused(field):
    with pytest.raises(InvalidInput, match=f"{field}: must be a non-empty string"):
        validate(Envelope, envelope(**{field: ""}))


def test_wrong_types_are_named_and_not_coerced():
    with pytest.raises(InvalidInput) as caught:
        validate(Envelope, envelope(sessionId=42, cwd=["/x"], eventId=7))
    assert set(caught.value.fields) == {"sessionId", "cwd", "eventId"}
    assert "sessionId: must be a string" in caught.value.message


def test_several_problems_are_reported_together():
    with pytest.raises(InvalidInput) as caught:
        validate(Envelope, {"hookType": "stop"})
    assert set(caught.value.fields) == {"sessionId", "project", "cwd", "timestamp"}


def test_unknown_hook_types_are_accepted():
    assert validate(Envelope, envelope(hookType="brand_new_hook")).hook_type == "brand_new_hook"


def test_unknown_fields_are_ignored():
    assert validate(Envelope, envelope(somethingElse=1)).session_id == "s1"


def test_data_may_be_any_json_value_or_absent():
    body = envelope()
    del body["data"]
    assert validate(Envelope, body).data is None
    assert validate(Envelope, envelope(data="plain text")).data == "plain text"


def test_an_empty_event_id_is_refused_rather_than_treated_as_absent():
    with pytest.raises(InvalidInput, match="eventId"):
        validate(Envelope, envelope(eventId=""))


def test_overlong_identifiers_are_refused():
    with pytest.raises(InvalidInput, match="sessionId: must be at most 256 characters"):
        validate(Envelope, envelope(sessionId="x" * 257))


def test_a_body_that_is_not_an_object_is_refused():
    with pytest.raises(InvalidInput, match="must be a JSON object, not list"):
        validate(Envelope, [envelope()])


def test_session_start_needs_session_project_and_cwd():
    with pytest.raises(InvalidInput) as caught:
        validate(SessionStart, {"sessionId": "s"})
    assert set(caught.value.fields) == {"project", "cwd"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "request body is empty"),
        (b"   ", "request body is empty"),
        (b'{"a": 1', "malformed JSON"),
        (b"\xff\xfe{}", "not valid UTF-8"),
        ('{"a": "caf\u00e9"}'.encode("latin-1"), "not valid UTF-8"),
    ],
)
def test_unreadable_bodies_say_what_is_wrong(body, message):
    with pytest.raises(InvalidInput, match=message):
        parse_json(body)


def test_cjk_text_decodes_intact():
    text = "记忆" * 5000
    assert parse_json(f'{{"t": "{text}"}}'.encode())["t"] == text
