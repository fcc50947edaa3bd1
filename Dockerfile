# The image of the web and pairs pools, the Celery worker and beat (docker-compose.yml).
# Stage 1 builds the wheel from the source; stage 2 installs only that wheel (with the
# locked dependencies of requirements/app.txt) into a slim runtime, collects the static files into it and runs as an unprivileged user.
# `make lint` checks this file with hadolint; deploy/smoke_test.py proves the same steps
# (wheel -> fresh environment -> collectstatic -> gunicorn) without a Docker engine.

FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

FROM python:3.11-slim-bookworm AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    STATIC_ROOT=/app/staticfiles \
    PROMETHEUS_MULTIPROC_DIR=/tmp/arena-metrics
# bubblewrap: the evaluation sandbox (evaluations/sandbox.py) runs models' programs under it.
# Not pinned: Debian stable's security updates replace the version a pin would name.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 arena \
    && useradd --system --uid 10001 --gid 10001 --home-dir /app --create-home arena
COPY --from=build /dist/ /tmp/dist/
# The locked versions of every dependency (requirements/app.txt, `make lock`), then the wheel.
COPY requirements/app.txt /tmp/requirements.txt
RUN pip install --no-cache-dir -r /tmp/requirements.txt /tmp/dist/*.whl \
    && rm -rf /tmp/dist /tmp/requirements.txt
WORKDIR /app
# Hashed, gzip- and brotli-compressed static files, part of the image (WhiteNoise serves them).
RUN SECRET_KEY=build-only USER_ID_HMAC_KEY=build-only DATABASE_URL=sqlite:////tmp/build.sqlite3 \
    arena-manage collectstatic --noinput --verbosity 0 && rm -f /tmp/build.sqlite3
USER 10001:10001
EXPOSE 8000 8001
# /healthz of the pool in this container (HEALTHCHECK_URL; the pairs service sets :8001).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["arena-healthcheck"]
CMD ["gunicorn", "-c", "python:arena_site.gunicorn_conf", "--preload", "--bind", "0.0.0.0:8000", "--workers", "4"]
