"""What people read for a slice value: `C#` for `csharp`, `Data/ML` for `data_ml`, and the order
values are listed in (context buckets by size, the rest alphabetically by what is shown).

The keys stay what the labellers store and the API sends; only pages use these names.
"""

from __future__ import annotations

from analysis.labels.context_length import CONTEXT_BUCKETS

from .aggregation import DIMENSIONS

_LANGUAGES = {
    "cpp": "C++", "csharp": "C#", "fsharp": "F#", "javascript": "JavaScript",
    "typescript": "TypeScript", "php": "PHP", "objective-c": "Objective-C",
    "visual-basic": "Visual Basic", "sql": "SQL", "html": "HTML", "css": "CSS", "json": "JSON",
    "yaml": "YAML", "toml": "TOML", "xml": "XML", "latex": "LaTeX", "cmake": "CMake",
    "graphql": "GraphQL", "protobuf": "Protocol Buffers", "cuda": "CUDA", "vhdl": "VHDL",
    "tcl": "Tcl", "coffeescript": "CoffeeScript", "gdscript": "GDScript",
    "powershell": "PowerShell", "matlab": "MATLAB", "ocaml": "OCaml", "cobol": "COBOL",
    "ini": "INI", "csv": "CSV", "plaintext": "Plain text", "r": "R", "d": "D",
    "other": "Other language", "unknown": "Unknown language",
}  # fmt: skip
_TASK_TYPES = {"data_ml": "Data/ML", "other": "Other task"}
_CONTEXT = {"<1k": "Under 1k tokens", "1-4k": "1k\u20134k tokens", "4-16k": "4k\u201316k tokens",
            ">16k": "Over 16k tokens"}  # fmt: skip
_NATURAL = {
    "en": "English", "zh": "Chinese", "es": "Spanish", "de": "German", "fr": "French",
    "ru": "Russian", "ja": "Japanese", "ko": "Korean", "pt": "Portuguese", "it": "Italian",
    "nl": "Dutch", "pl": "Polish", "tr": "Turkish", "vi": "Vietnamese", "uk": "Ukrainian",
    "id": "Indonesian", "hi": "Hindi", "ar": "Arabic", "fa": "Persian", "sv": "Swedish",
    "unknown": "Unknown (too little prose)",
}  # fmt: skip
_KIND = {"completion": "Completion", "edit": "Edit"}
_BY_DIMENSION = {
    "language": _LANGUAGES,
    "task_type": _TASK_TYPES,
    "context_bucket": _CONTEXT,
    "natural_language": _NATURAL,
    "kind": _KIND,
}


def value_label(dimension: str, value: str) -> str:
    """The shown name of one value of a dimension (unknown values: capitalised as they are)."""
    known = _BY_DIMENSION.get(dimension, {}).get(value)
    if known:
        return known
    if dimension == "natural_language":
        return value.upper()  # an ISO 639-1 code without a name here
    return value[:1].upper() + value[1:].replace("_", " ")


def category_label(dimension: str, value: str) -> str:
    """`Programming language: C#`; `Overall` for the overall board."""
    if dimension == "overall":
        return "Overall"
    return f"{DIMENSIONS.get(dimension, dimension)}: {value_label(dimension, value)}"


def value_order(dimension: str, value: str) -> tuple[int, str]:
    """Sort key within a dimension: context buckets by size, unknown/other last, else by name."""
    if dimension == "context_bucket" and value in CONTEXT_BUCKETS:
        return (CONTEXT_BUCKETS.index(value), "")
    last = value in ("other", "unknown")
    return (1 if last else 0, value_label(dimension, value).lower())
