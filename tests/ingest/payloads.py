"""Request bodies as clients send them: the native API's votes and batches, and the
extension's completion items, outcomes and edit outcomes."""

from __future__ import annotations

import json
from typing import Any


def vote(**overrides) -> dict:
    body = {
        "pair_id": "p-1",
        "user_id": "machine-123",
        "model_a": "gpt-4o-2024-08-06",
        "model_b": "codestral-2405",
        "outcome": "model_a",
        "privacy": "Private",
        "file_type": "python",
        "latency_a_ms": 812.5,
        "latency_b_ms": 640.0,
        "client_version": "1.4.0",
    }
    body.update(overrides)
    return body


def batch(n: int, **overrides) -> dict:
    return {"battles": [vote(pair_id=f"b-{i}", **overrides) for i in range(n)]}


def completion_item(index: int, model: str, **extra) -> dict:
    # What /create_pair returned for one side, spread back by the extension plus its own fields.
    item = {
        "completionId": f"c-{index}",
        "userId": "vscode-machine-id",
        "timestamp": 1732900000123,
        "prompt": "<CODE>def add(a, b):",
        "completion": "    return a + b" if index == 0 else "    return sum([a, b])",
        "model": model,
        "pairCompletionId": f"c-{1 - index}",
        "pairIndex": index,
        "latency": 0.84 if index == 0 else 1.31,
        "prefix": "def add(a, b):\n",
        "suffix": "\n\nprint(add(1, 2))\n",
        "version": "0.2.2",
        "privacy": "Private",
        "fileType": "python",
        "username": "",
    }
    item.update(extra)
    return item


def outcome_payload(accepted: int = 0, privacy: str = "Private", **extra) -> dict:
    body = {
        "pairId": "pair-ext-1",
        "userId": "vscode-machine-id",
        "completionItems": [
            completion_item(0, "gpt-4o-2024-08-06", privacy=privacy),
            completion_item(1, "codestral-2405", privacy=privacy),
        ],
        "acceptedIndex": accepted,
        "version": "0.2.2",
        "privacy": privacy,
        "fileType": "python",
    }
    body.update(extra)
    return body


def edit_item(index: int, model: str) -> dict:
    return {
        "responseId": f"r-{index}",
        "userId": "vscode-machine-id",
        "timestamp": 1732900000123,
        "prompt": "rewrite with a loop",
        "response": "for i in range(3):\n    print(i)\n",
        "model": model,
        "language": "python",
        "codeToEdit": "print(0)\nprint(1)\nprint(2)\n",
        "userInput": "use a loop",
        "pairIndex": index,
        "latency": 2.0,
        "version": "0.2.2",
        "privacy": "Private",
        "fileType": "python",
    }


def edit_payload(accepted: int) -> dict:
    return {
        "pairId": "edit-1",
        "userId": "vscode-machine-id",
        "responseItems": [edit_item(0, "gpt-4o-2024-08-06"), edit_item(1, "deepseek-coder-fim")],
        "acceptedIndex": accepted,
        "version": "0.2.2",
        "privacy": "Private",
        "fileType": "python",
    }


def post_vote(client: Any, body: dict) -> Any:
    """POST one native vote with a test client."""
    return client.post("/api/v1/battles", data=json.dumps(body), content_type="application/json")
