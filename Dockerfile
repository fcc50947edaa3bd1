# Image for the web app, the Celery worker and beat (see docker-compose.yml).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY arena_site arena_site
COPY ingest ingest
COPY leaderboard leaderboard
COPY analysis analysis
COPY serving serving
COPY templates templates
COPY static static
COPY data data
COPY manage.py ./
RUN pip install --no-cache-dir . && \
    SECRET_KEY=build-only DEBUG=0 DATABASE_URL=sqlite:////tmp/build.sqlite3 python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "arena_site.wsgi", "--preload", "--bind", "0.0.0.0:8000", "--workers", "4"]
