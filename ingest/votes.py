"""Plain values passed from the API edge to the ingest services.

A `VoteIn` is what every route (native, extension, batch, import) turns a request into.
It carries the code context only in memory: the service uses it to label the battle and
writes it to the database only when `keep_code` is true (privacy = Research).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CodeIn:
    prefix: str = ""
    suffix: str = ""
    completion_a: str = ""
    completion_b: str = ""
    code_to_edit: str = ""
    user_input: str = ""
    repo_url: str = ""


@dataclass(frozen=True)
class VoteIn:
    pair_id: str
    user_id: str
    model_a_id: int
    model_b_id: int
    outcome: int
    kind: str
    privacy: str
    source: str
    file_type: str = ""
    latency_a_ms: float | None = None
    latency_b_ms: float | None = None
    prefix_chars: int | None = None
    suffix_chars: int | None = None
    # Completion lengths a client sent without the text (the text's own length wins).
    completion_a_chars: int | None = None
    completion_b_chars: int | None = None
    client_version: str = ""
    received_at: object | None = None  # datetime for imports; None = now
    user_hash: str = ""  # already pseudonymised (re-imported exports); wins over user_id
    code: CodeIn = field(default_factory=CodeIn)

    @property
    def keep_code(self) -> bool:
        return self.privacy == "Research"


@dataclass(frozen=True)
class CompletionIn:
    completion_id: str
    model_id: int
    user_id: str
    privacy: str
    pair_completion_id: str = ""
    pair_id: str = ""
    pair_index: int | None = None
    latency_ms: float | None = None
    file_type: str = ""
    client_version: str = ""
    served_by_us: bool = False
    succeeded: bool = True
    pair_probability: float | None = None  # served pairs: the sampler's draw probability
    prompt: str = ""
    completion: str = ""

    @property
    def keep_code(self) -> bool:
        return self.privacy == "Research"
