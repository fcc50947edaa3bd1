"""Admin forms of the evaluations: starting runs on a model, importing a question set."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet

from catalogue.models import ArenaModel
from serving.models import ProviderKind

from .models import JudgeEndpoint, QuestionSet, Suite
from .services import EXAMPLE_SET_NAME
from .suites import INFILLING_SETS


def models_with_provider(*, chat: bool = False) -> QuerySet[ArenaModel]:
    qs = ArenaModel.objects.filter(provider__isnull=False, merged_into__isnull=True)
    if chat:
        qs = qs.filter(provider__kind=ProviderKind.OPENAI_CHAT)
    return qs.order_by("key")


class StartRunForm(forms.Form):
    model = forms.ModelChoiceField(queryset=ArenaModel.objects.none())
    suites = forms.MultipleChoiceField(
        choices=Suite.choices,
        widget=forms.CheckboxSelectMultiple,
        help_text="One run per suite. HumanEval and the CodeArena judge need a chat provider.",
    )
    infilling_set = forms.ChoiceField(
        choices=[(s, s) for s in INFILLING_SETS],
        initial="random-span-light",
        help_text="HumanEval-infilling set (the public-visibility check reads "
        "random-span-light unless EVALUATION_GUARD_SET says otherwise).",
    )
    question_set = forms.ModelChoiceField(
        queryset=QuestionSet.objects.exclude(name=EXAMPLE_SET_NAME),
        required=False,
        empty_label="codearena-example (shipped, 12 questions)",
        help_text="CodeArena judge: the questions.",
    )
    judge_model = forms.ModelChoiceField(
        queryset=ArenaModel.objects.none(),
        required=False,
        help_text="CodeArena judge: a catalogue model with a chat provider (it may be hidden).",
    )
    judge_endpoint = forms.ModelChoiceField(
        queryset=JudgeEndpoint.objects.all(),
        required=False,
        help_text="... or an OpenAI-compatible judge endpoint outside the catalogue.",
    )
    baseline_model = forms.ModelChoiceField(
        queryset=ArenaModel.objects.none(),
        required=False,
        help_text="CodeArena judge: who answers as the baseline (asked once per question, "
        "reused by later runs). Empty: the question set's own baseline answers.",
    )
    limit = forms.IntegerField(
        min_value=1, required=False, help_text="Only the first N items (empty: all)."
    )
    concurrency = forms.IntegerField(
        min_value=1,
        max_value=64,
        required=False,
        help_text="Items at once per worker (empty: EVALUATION_CONCURRENCY). Calls to one "
        "provider are capped across all workers by its limit.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields = self.fields
        fields["model"].queryset = models_with_provider()  # type: ignore[attr-defined]
        for name in ("judge_model", "baseline_model"):
            fields[name].queryset = models_with_provider(chat=True)  # type: ignore[attr-defined]


class ImportQuestionsForm(forms.Form):
    name = forms.SlugField(max_length=80, help_text="Replaces an earlier set of this name.")
    file = forms.FileField(help_text="JSON lines in CodeArena's layout (docs/evaluations.md).")
    taxonomy = forms.FileField(
        required=False,
        help_text="Optional: CodeArena's tasktype_to_levels.json, for rows without a category.",
    )
