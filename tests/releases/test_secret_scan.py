"""The secret scan: each kind of secret a developer pastes is found; ordinary code is not."""

from __future__ import annotations

import pytest

from releases.secret_scan import HIGH_ENTROPY, findings

# Made-up values in the shapes real ones have (none of them is a live credential).
PLANTED = {
    "aws access key id": 'AWS_ACCESS_KEY_ID = "AKIAQ7XJ4KZ2PLM3TY5W"',
    "aws secret in an env file": "AWS_SECRET_ACCESS_KEY=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",
    "private key block": (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        "MIIEowIBAAKCAQEAu3n8Zq1Xc4VbT7pLm2Ks9WdYf6Jh0RtNq5Ae8GiUo3BxCvZl\n"
        "-----END RSA PRIVATE KEY-----"
    ),
    "private key body alone": "MIIEowIBAAKCAQEAu3n8Zq1Xc4VbT7pLm2Ks9WdYf6Jh0RtNq5Ae8GiUo3BxCvZl",
    "github token": 'token = "ghp_7Qk2Vx9Lm4Tn8Wr1Yz6Bs3Hd5Jc0Pf2Ga9Ue"',
    "slack token": "SLACK = 'xoxb-284619573015-7382910465123-Zq8Wm3Kx9Lt2Vn7Pb4Rs6Yd1'",
    "stripe key": "stripe.api_key = sk_live_51Hq8Zr2fKx9LmT4vWn7YpB3s",
    "password in a url": 'DB = "postgres://deploy:Tr0ub4dor-and-3@db.internal.example:5432/app"',
    "password assignment": 'password = "correct-horse-battery-staple-7"',
    "jwt": "auth = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.Zq8Wm3Kx9Lt2Vn7Pb4Rs6Yd1Hf5Jc0Ga9'",
}


@pytest.mark.parametrize("text", PLANTED.values(), ids=PLANTED.keys())
def test_each_planted_secret_is_found(text):
    assert findings("def handler(event):\n    " + text + "\n    return event\n")


def test_a_bare_random_token_is_a_high_entropy_finding():
    assert HIGH_ENTROPY in findings("# pasted: Zq8Wm3Kx9Lt2Vn7Pb4Rs6Yd1Hf5Jc0Ga9Ue2Tb\n")


@pytest.mark.parametrize(
    "code",
    [
        "def add(a, b):\n    return a + b\n",
        "password = request.POST.get('password')\n",
        "uvicorn.run(app, host='0.0.0.0', port=8000)\n",
        "class AbstractSingletonProxyFactoryBean(object):\n    pass\n",
        "id = '123e4567-e89b-12d3-a456-426614174000'\n",
    ],
)
def test_ordinary_code_is_not_flagged(code):
    assert findings(code) == set()


def test_findings_name_the_kind_never_the_value():
    found = findings(PLANTED["github token"])
    assert found and all("ghp_" not in kind for kind in found)
