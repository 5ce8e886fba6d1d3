"""Secrets taken out of text (``palazzo.importers.redaction``)."""

import pytest

from palazzo.importers.redaction import redact

SECRETS = [
    ("anthropic key", "my key is sk-ant-api03-Zx9vQ2mN8bT4kL6pR1sW3yU5aC7eG0iJ, thanks"),
    ("openai key", "OPENAI sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234 here"),
    ("github token", "push with ghp_0123456789abcdefghijABCDEFGHIJ012345 please"),
    ("aws key id", "aws AKIAIOSFODNN7EXAMPLE in the config"),
    ("slack token", "token xoxb-1234567890-abcdefghij for the bot"),
    ("google api key", "key=AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    ("stripe key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc was leaked"),
    ("jwt", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
            "dBjftJeZ4CVPmB92K27uhbUJU1p1r"),
    ("secret", "export DB_PASSWORD=hunter2hunter2 && run"),
    ("private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
                    "-----END OPENSSH PRIVATE KEY-----\nafter"),
]


@pytest.mark.parametrize("kind,text", SECRETS)
def test_each_kind_of_secret_is_taken_out_and_the_rest_kept(kind, text):
    out, n = redact(text)
    assert n >= 1 and f"[redacted: {kind}]" in out
    assert out == redact(text)[0]  # the same every time
    assert len(out) < len(text) + 30  # (the secret replaced, not the sentence)


def test_the_value_of_a_secret_assignment_goes_and_its_name_stays():
    out, n = redact('API_KEY = "abcdef1234567890" and TOKEN: zyxw98765432')
    assert n == 2
    assert out == 'API_KEY = "[redacted: secret]" and TOKEN: [redacted: secret]'


def test_ordinary_text_is_left_alone():
    text = ("The skeleton key task-ant-colony is in the ask-anthropic folder; the password "
            "field is empty; sk-short; github_pat is a word; eyJ alone.")
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("text,expected", [
    ("export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345",
     "export GITHUB_TOKEN=[redacted: github token]"),
    ("OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234",
     "OPENAI_API_KEY=[redacted: openai key]"),
    ('{"password": "supersecret123"}', '{"password": "[redacted: secret]"}'),
    ("'api_key': 'abcdefgh12345678'", "'api_key': '[redacted: secret]'"),
    ("X-Api-Key: 0a1b2c3d4e5f6a7b", "X-Api-Key: [redacted: secret]"),
    ("Authorization: Bearer abcdefghijklmnop1234",
     "Authorization: Bearer [redacted: bearer token]"),
])
def test_a_secret_is_replaced_once_whatever_its_setting(text, expected):
    assert redact(text) == (expected, 1)


@pytest.mark.parametrize("text", ["tokenizer: cl100k_base_model", "MAX_TOKENS: 100000000",
                                  "sk-learn-compatible-estimators", "password_hint: none"])
def test_words_that_only_look_like_secrets_stay(text):
    assert redact(text) == (text, 0)
