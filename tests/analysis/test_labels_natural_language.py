"""Tests for analysis.labels.natural_language: language of comments and strings."""

from __future__ import annotations

import pytest

from analysis.labels import natural_language as nl
from analysis.labels.natural_language import (
    MIN_LETTERS,
    NATURAL_LANGUAGES,
    UNKNOWN,
    detect_natural_language,
    extract_comment_text,
    letter_count,
    words_of,
)


def detect(prefix: str, suffix: str = "", language: str | None = None) -> str:
    return detect_natural_language(prefix=prefix, suffix=suffix, programming_language=language)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            "# Load the configuration file and return the parsed settings\ndef load():\n    ",
            "en",
        ),
        (
            "// Calcula el promedio de las ventas de cada mes y devuelve la lista\n"
            "function promedio(ventas) {\n",
            "es",
        ),
        (
            "/* Récupère les données depuis le serveur et met à jour le tableau */\n"
            "async function charger() {",
            "fr",
        ),
        (
            '"""Berechnet den Durchschnitt der Werte und gibt ihn zurück."""\nx = ',
            "de",
        ),
        ("# 读取文件并返回结果列表\ndef read(path):\n    ", "zh"),
        (
            "-- Возвращает список активных пользователей за последний месяц\nSELECT ",
            "ru",
        ),
        (
            "<!-- Trang chủ hiển thị danh sách sản phẩm mới nhất -->\n<div>",
            "vi",
        ),
    ],
)
def test_detects_comment_language(code, expected):
    assert detect(code) == expected


def test_string_literals_count():
    code = 'raise ValueError("The uploaded file is empty, please choose another one")\n'
    assert detect(code) == "en"


def test_suffix_is_used_too():
    assert detect("x = 1\n", "\n# Send the weekly report to every subscriber by email\n") == "en"


@pytest.mark.parametrize(
    "code",
    [
        "",
        "x = compute(a, b)\nreturn x\n",
        "# TODO\n",
        "// _logger = logger;\n// myVar.doThing(42);\n",  # commented-out code is not prose
        'fetch("https://example.com/api/v1/items?id=42")\n',  # a URL is not a sentence
        "#include <iostream>\n#include <vector>\n#define MAX 100\n",  # directives, not comments
    ],
)
def test_too_little_text_is_unknown(code):
    assert detect(code) == UNKNOWN


def test_threshold_is_on_letters():
    short = "# open the door\n"  # 12 letters
    assert letter_count(words_of(" ".join(extract_comment_text(short)))) < MIN_LETTERS
    assert detect(short) == UNKNOWN
    longer = "# open the door and close the window before leaving the house\n"
    assert detect(longer) == "en"


def test_cjk_characters_weigh_more():
    # 8 ideographs: below 20 as characters, above it with the documented weight.
    words = words_of("读取文件返回结果")
    assert sum(len(w) for w in words) < MIN_LETTERS <= letter_count(words)


def test_prose_file_types_use_the_whole_text():
    text = "Thanks for the quick reply, I think Tuesday works better for everyone on our side."
    assert detect(text, language="plaintext") == "en"
    assert detect(text, language="markdown") == "en"
    # As code, an unquoted sentence has no comment or string to read.
    assert detect(text, language="python") == UNKNOWN


def test_extract_comment_text_syntaxes():
    code = (
        "#include <stdio.h>\n"
        "/* block comment */\n"
        "int x = 1; // line comment\n"
        "<!-- html comment -->\n"
        "-- sql comment\n"
        "i--; j -= 1;\n"
        "# hash comment\n"
        "s = 'single' + \"double\"\n"
        '"""triple"""\n'
        "url = http://example.com\n"
    )
    pieces = [p.strip() for p in extract_comment_text(code)]
    assert pieces == [
        "block comment",
        "line comment",
        "html comment",
        "sql comment",
        "hash comment",
        "single",
        "double",
        "triple",
    ]


def test_words_of_drops_identifiers():
    assert words_of("use my_var and myVar or x2 and obj.attr, keep these words") == [
        "use",
        "and",
        "or",
        "and",
        "keep",
        "these",
        "words",
    ]


def test_results_are_canonical_and_detector_is_cached():
    assert NATURAL_LANGUAGES[-1] == UNKNOWN
    assert len(set(NATURAL_LANGUAGES)) == len(NATURAL_LANGUAGES)
    assert 20 <= len(nl.DETECTABLE_LANGUAGES) <= 25
    assert nl._detector() is nl._detector()
    assert detect("# Initialise the database connection pool at start-up\n") in NATURAL_LANGUAGES


def test_english_prior_only_tips_ambiguous_text():
    # Technical English that n-gram models alone call German/Dutch stays English...
    assert nl.language_of_text("python code to loop times and print them") == "en"
    # ...while clearly non-English text is not pulled to English.
    assert nl.language_of_text("Detalles del libro aquí y el nombre del autor") == "es"
