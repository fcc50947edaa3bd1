"""Start an evaluation run on a catalogue model: queued for the workers, or run here (--inline)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalogue.models import ArenaModel
from evaluations import driver, services
from evaluations.models import EvaluationRun, JudgeEndpoint, Suite


def _model(key: str | None, role: str) -> ArenaModel | None:
    if key is None:
        return None
    model = ArenaModel.objects.filter(key=key).first()
    if model is None:
        raise CommandError(f"No catalogue model {key!r} ({role}).")
    return model


class Command(BaseCommand):
    help = (
        "Run HumanEval (humaneval), HumanEval-infilling (infilling) or the CodeArena judge "
        "(codearena) on a model through its provider. Queued for the Celery workers unless "
        "--inline; results appear in the admin and as external scores."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--suite", required=True, choices=Suite.values)
        parser.add_argument("--model", required=True, help="catalogue key of the model")
        parser.add_argument(
            "--judge", help="CodeArena: a catalogue key, or the name of a judge endpoint"
        )
        parser.add_argument("--baseline", help="CodeArena: catalogue key of the baseline model")
        parser.add_argument(
            "--dataset",
            help="infilling: single-line | random-span-light | multi-line; codearena: a "
            "question set's name (default: the shipped example set)",
        )
        parser.add_argument("--limit", type=int, help="only the first N items")
        parser.add_argument("--concurrency", type=int, help="items at once (lanes)")
        parser.add_argument(
            "--inline", action="store_true", help="run in this process and print the result"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        model = _model(options["model"], "model")
        assert model is not None
        judge_model = judge_endpoint = None
        if options["judge"]:
            judge_endpoint = JudgeEndpoint.objects.filter(name=options["judge"]).first()
            if judge_endpoint is None:
                judge_model = _model(options["judge"], "judge")
        try:
            run = services.create_run(
                suite=options["suite"],
                model=model,
                dataset=options["dataset"],
                judge_model=judge_model,
                judge_endpoint=judge_endpoint,
                baseline_model=_model(options["baseline"], "baseline"),
                limit=options["limit"],
                concurrency=options["concurrency"],
                created_by="run_evaluation",
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        if not options["inline"]:
            services.start_run(run)
            self.stdout.write(f"Run #{run.pk} queued: {run.total} items of {run.dataset}.")
            return
        status = driver.drive(run.pk)
        run = EvaluationRun.objects.get(pk=run.pk)
        score = "-" if run.score is None else f"{run.score:.1f}%"
        self.stdout.write(
            f"Run #{run.pk} {status}: {run.done}/{run.total} items, score {score}, "
            f"{run.errors} without a usable answer."
        )
        for key, value in run.summary.items():
            if key in ("pass_at_1", "well_formatted_rate", "issues", "statuses", "position_bias"):
                self.stdout.write(f"  {key}: {value}")
        if status != "done":
            raise CommandError(run.error or f"the run ended {status}")
