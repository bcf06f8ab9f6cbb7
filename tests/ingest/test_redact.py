import json

import pytest

from memvault.ingest.redact import redact, redact_json, redact_text

SECRETS = {
    "openai_key": "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
    "anthropic_key": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
    "github_token": "ghp_" + "a1B2" * 9,
    "aws_access_key": "AKIAIOSFODNN7EXAMPLE",
    "slack_token": "xoxb-1234567890-abcdefghij",
    "google_api_key": "AIza" + "x" * 35,
    "stripe_key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_X",
}


@pytest.mark.parametrize(("kind", "secret"), SECRETS.items())
def test_each_kind_of_secret_is_replaced_by_a_marker_naming_it(kind, secret):
    redacted = redact_text(f"export VALUE={secret} # used by the build")
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted
    assert redacted.endswith("# used by the build")


def test_private_blocks_are_removed_whole_across_lines():
    text = "before <private>my home address\nand phone</private> after"
    assert redact_text(text) == "before [REDACTED:private] after"


def test_private_key_blocks_are_removed():
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----"
    assert redact_text(f"key:\n{key}\nend") == "key:\n[REDACTED:private_key]\nend"


def test_bearer_tokens_keep_the_scheme():
    assert (
        redact_text("Authorization: Bearer abcdefghijklmnop1234")
        == "Authorization: Bearer [REDACTED:bearer]"
    )


@pytest.mark.parametrize(
    "text",
    ["password=hunter2hunter2", 'API_KEY: "abc123def456"', "client_secret = s3cr3tvalue"],
)
def test_secret_assignments_keep_the_name_and_lose_the_value(text):
    redacted = redact_text(text)
    assert "[REDACTED:secret]" in redacted
    assert redacted.split("[REDACTED")[0].strip(" =:\"'").lower().replace("_", "") in (
        "password",
        "apikey",
        "clientsecret",
    )


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("postgres://app:hunter2secret@db.internal:5432/app", "postgres://app:"),
        ("git clone https://dev:ghx-pass-123@git.example.com/repo.git", "https://dev:"),
        ("REDIS_URL=redis://default:s3cr3t@cache:6379", "redis://default:"),
        ("HTTPS://admin:Sup3rS3cret@example.com", "HTTPS://admin:"),
    ],
)
def test_the_password_in_a_connection_url_is_redacted(text, kept):
    redacted = redact_text(text)
    assert kept + "[REDACTED:url_password]@" in redacted
    assert redacted.split("@", 1)[1] == text.split("@", 1)[1]  # the host stays


@pytest.mark.parametrize(
    "text",
    [
        "https://user@host.example/path and http://host.example:8080/a:b@c",
        "the token budget is 2000",
        "password reset flow is broken",
        "ask-someone about the sk- prefix",
        "run pytest -k api_key_parsing",
        "记忆系统不应该丢数据",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert redact_text(text) == text


def test_nested_json_values_are_redacted_everywhere():
    secret = SECRETS["github_token"]
    data = {"tool_input": {"env": [f"GH={secret}"]}, "note": "ok", "n": 3, "flag": True}
    value, text = redact_json(data)
    assert secret not in text
    assert value["tool_input"]["env"] == ["GH=[REDACTED:github_token]"]
    assert value["n"] == 3 and value["flag"] is True
    assert json.loads(text) == value


def test_dict_values_under_secret_keys_are_redacted():
    value, _ = redact_json({"password": "correct-horse-battery"})
    assert value == {"password": "[REDACTED:secret]"}


def test_a_private_block_cut_across_two_strings_is_redacted_from_its_opener():
    data = ["<private>first half", {"b": "second half</private>"}]
    value, text = redact_json(data)
    assert json.loads(text) == value
    # Each string is redacted on its own: the opener's string loses everything after it,
    # and a closer with no opener before it is ordinary text.
    assert value == ["[REDACTED:private]", {"b": "second half</private>"}]


def test_clean_values_come_back_unchanged():
    data = {"tool_name": "Read", "tool_input": {"file_path": "src/app.py"}}
    value, text = redact_json(data)
    assert value is data
    assert json.loads(text) == data


def test_redact_copies_rather_than_mutating():
    data = {"a": "sk-proj-abcdefghijklmnopqrstuvwxyz012345"}
    copy = redact(data)
    assert data["a"].startswith("sk-proj")
    assert copy["a"] == "[REDACTED:openai_key]"


def test_secrets_right_after_a_newline_tab_or_quote_are_found():
    token = "ghp_" + "a1B2" * 9
    key = "sk-proj-" + "Q" * 30
    value, text = redact_json({"out": f'# keys\n{token}\n\t{key}\n"{token}"'})
    assert token not in text and key not in text
    assert value["out"] == (
        '# keys\n[REDACTED:github_token]\n\t[REDACTED:openai_key]\n"[REDACTED:github_token]"'
    )


@pytest.mark.parametrize("key", ["password", "token", "api_key", "clientSecret", "refresh_token"])
def test_values_under_secret_named_keys_are_redacted(key):
    value, _ = redact_json({key: "short1", "other": "kept"})
    assert value == {key: "[REDACTED:secret]", "other": "kept"}


def test_keys_that_only_mention_tokens_keep_their_values():
    data = {"tokens": 5, "token_budget": "2000", "max_tokens": "4096"}
    assert redact_json(data)[0] == data


def test_an_unclosed_private_block_is_redacted_to_the_end_of_the_string():
    text = "before <private>my home address\nand phone, and the closer was cut off"
    assert redact_text(text) == "before [REDACTED:private]"


def test_an_unclosed_private_key_block_is_redacted_to_the_end_of_the_string():
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
    assert redact_text(f"$ head -2 id_ed25519\n{key}") == (
        "$ head -2 id_ed25519\n[REDACTED:private_key]"
    )


MIB = 1 << 20


def _filled(unit: str, size: int = MIB) -> str:
    return unit * (size // len(unit))


@pytest.mark.parametrize(
    ("opener", "marker"),
    [
        ("<private>x", "[REDACTED:private]"),
        ("<PRIVATE>", "[REDACTED:private]"),
        ("-----BEGIN RSA PRIVATE KEY-----\n", "[REDACTED:private_key]"),
    ],
)
def test_a_mebibyte_of_openers_with_no_closer_is_redacted_from_the_first(opener, marker):
    assert redact_text("kept " + _filled(opener)) == "kept " + marker


# Each rule's worst case: a mebibyte of text that looks like the start of a match again and
# again but never completes one. The filler stays as it is, and a real secret after it is
# still found.
WORST_CASES = {
    "anthropic_key": ("-sk-ant-" + "a" * 12 + " ", SECRETS["anthropic_key"]),
    "openai_key": ("sk-" + "a" * 19 + " ", SECRETS["openai_key"]),
    "github_token": ("-ghp_" + "a" * 29 + " ", SECRETS["github_token"]),
    "aws_access_key": ("AKIA" + "A" * 15 + " ", SECRETS["aws_access_key"]),
    "slack_token": ("-xoxb-" + "a" * 9 + " ", SECRETS["slack_token"]),
    "google_api_key": ("-AIza" + "x" * 34 + " ", SECRETS["google_api_key"]),
    "stripe_key": ("sk_live_" + "a" * 15 + " ", SECRETS["stripe_key"]),
    "jwt": ("-eyJ", SECRETS["jwt"]),
    "bearer": ("bearer ", "Bearer abcdefghijklmnop1234"),
    "url_password": ("a.", "postgres://app:hunter2secret@db.internal"),
    "secret": ("password" + " " * 60 + "\n", "password=hunter2hunter2"),
}


@pytest.mark.parametrize(("kind", "case"), WORST_CASES.items(), ids=list(WORST_CASES))
def test_each_rules_worst_case_filler_is_kept_and_the_secret_after_it_found(kind, case):
    unit, secret = case
    filler = _filled(unit)
    redacted = redact_text(f"{filler} {secret} end")
    assert redacted.startswith(filler + " ")
    assert f"[REDACTED:{kind}]" in redacted[len(filler) :]
    assert redacted.endswith(" end")


@pytest.mark.parametrize(
    "text",
    [
        _filled("api_key password secret_key client auth access "),
        _filled("apiapi"),
        _filled("eyJabcdefgh.-"),
        _filled("x://y:z:"),
        _filled("Bearer short "),
    ],
)
def test_a_mebibyte_of_trigger_words_with_nothing_to_redact_comes_back_unchanged(text):
    assert redact_text(text) == text


def test_a_character_whose_lowercase_is_longer_does_not_shift_what_is_removed():
    text = "İstanbul password=hunter2hunter2 İ <private>x</private> kept"
    assert redact_text(text) == "İstanbul password=[REDACTED:secret] İ [REDACTED:private] kept"


def test_an_assigned_value_that_another_rule_removed_keeps_that_rules_marker():
    assert redact_text("OPENAI_API_KEY=" + SECRETS["openai_key"]) == (
        "OPENAI_API_KEY=[REDACTED:openai_key]"
    )
