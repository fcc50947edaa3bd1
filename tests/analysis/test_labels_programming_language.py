"""Tests for analysis.labels.programming_language: fileType -> canonical language."""

from __future__ import annotations

import pytest

from analysis.labels import programming_language as pl
from analysis.labels.programming_language import OTHER, PROGRAMMING_LANGUAGES, normalize_language

# The Stack Overflow 2024 survey's most used languages (plus a few more), each as an
# editor would send it (VS Code language id or extension), with the expected name.
SURVEY_LANGUAGES: list[tuple[str, str]] = [
    ("javascript", "javascript"),
    ("html", "html"),
    ("css", "css"),
    ("python", "python"),
    ("sql", "sql"),
    ("typescriptreact", "typescript"),
    ("shellscript", "shell"),
    ("java", "java"),
    ("csharp", "csharp"),
    ("cpp", "cpp"),
    ("c", "c"),
    ("php", "php"),
    ("powershell", "powershell"),
    ("go", "go"),
    ("rust", "rust"),
    ("kotlin", "kotlin"),
    ("lua", "lua"),
    ("dart", "dart"),
    ("asm", "assembly"),
    ("ruby", "ruby"),
    ("swift", "swift"),
    ("r", "r"),
    ("vb", "visual-basic"),
    ("matlab", "matlab"),
    ("groovy", "groovy"),
    ("scala", "scala"),
    ("perl", "perl"),
    ("gdscript", "gdscript"),
    ("objective-c", "objective-c"),
    ("elixir", "elixir"),
    ("haskell", "haskell"),
    ("pas", "pascal"),
    ("lisp", "lisp"),
    ("clojure", "clojure"),
    ("julia", "julia"),
    ("zig", "zig"),
    ("fortran", "fortran"),
    ("solidity", "solidity"),
    ("ada", "ada"),
    ("erlang", "erlang"),
    ("fsharp", "fsharp"),
    ("apex", "apex"),
    ("prolog", "prolog"),
    ("ocaml", "ocaml"),
    ("cobol", "cobol"),
    ("crystal", "crystal"),
    ("nim", "nim"),
    ("dockerfile", "dockerfile"),
    ("yaml", "yaml"),
    ("json", "json"),
    ("markdown", "markdown"),
    ("vue", "vue"),
    ("svelte", "svelte"),
]


def test_covers_at_least_forty_common_languages():
    got = {file_type: normalize_language(file_type) for file_type, _ in SURVEY_LANGUAGES}
    wrong = {ft: (got[ft], want) for ft, want in SURVEY_LANGUAGES if got[ft] != want}
    assert not wrong
    distinct = {want for _, want in SURVEY_LANGUAGES}
    assert len(distinct) >= 40
    assert OTHER not in distinct


@pytest.mark.parametrize(
    ("file_type", "expected"),
    [
        ("py", "python"),
        (".py", "python"),
        ("PY", "python"),
        ("  python  ", "python"),
        (".tsx", "typescript"),
        ("tsx", "typescript"),
        ("javascriptreact", "javascript"),
        ("h", "c"),
        ("H", "c"),
        (".hpp", "cpp"),
        ("cc", "cpp"),
        ("ino", "cpp"),
        ("objective-cpp", "objective-c"),
        ("jupyter", "python"),
        ("ipynb", "python"),
        ("scss", "css"),
        ("less", "css"),
        ("blade", "html"),
        ("django-html", "html"),
        ("razor", "html"),
        ("jsonc", "json"),
        ("yml", "yaml"),
        ("dockercompose", "yaml"),
        ("tex", "latex"),
        ("cuda-cpp", "cuda"),
        ("tf", "terraform"),
        ("plaintext", "plaintext"),
        ("bat", "batch"),
        ("ps1", "powershell"),
        ("zsh", "shell"),
        ("m", "objective-c"),
        ("kts", "kotlin"),
        ("gradle", "groovy"),
    ],
)
def test_ids_and_extensions(file_type, expected):
    assert normalize_language(file_type) == expected


@pytest.mark.parametrize(
    ("file_type", "expected"),
    [
        ("Dockerfile", "dockerfile"),
        ("Dockerfile.dev", "dockerfile"),
        ("Makefile", "makefile"),
        ("CMakeLists.txt", "cmake"),
        ("src/app/page.tsx", "typescript"),
        ("C:\\proj\\src\\main.RS", "rust"),
        ("resources/views/home.blade.php", "html"),
        ("app/Http/Kernel.php", "php"),
        ("docker-compose.yml", "yaml"),
        (".bashrc", "shell"),
        ("requirements.txt", "plaintext"),
        ("archive.tar.gz", OTHER),
    ],
)
def test_file_names_and_paths(file_type, expected):
    assert normalize_language(file_type) == expected


@pytest.mark.parametrize("file_type", [None, "", "   ", "brainfuck", "xyz", "foo.unknownext", "."])
def test_unknown_or_missing_is_other(file_type):
    assert normalize_language(file_type) == OTHER


def test_canonical_values():
    assert PROGRAMMING_LANGUAGES[-1] == OTHER
    assert len(set(PROGRAMMING_LANGUAGES)) == len(PROGRAMMING_LANGUAGES)
    assert all(value == value.lower() for value in PROGRAMMING_LANGUAGES)
    # Every canonical name maps to itself, so stored labels can be re-normalised.
    for value in PROGRAMMING_LANGUAGES:
        assert normalize_language(value) == value


def test_every_output_is_canonical():
    inputs = [ft for ft, _ in SURVEY_LANGUAGES] + ["x.blade.php", "foo", "Dockerfile.prod"]
    assert {normalize_language(ft) for ft in inputs} <= set(PROGRAMMING_LANGUAGES)


def test_conflicting_alias_is_rejected(monkeypatch):
    monkeypatch.setattr(pl, "_ALIASES", {"c": ("h",), "cpp": ("h",)})
    with pytest.raises(ValueError, match="'h'"):
        pl._build_lookup()
