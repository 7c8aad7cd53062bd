# Receco web service: gunicorn serving receco.wsgi, static files through WhiteNoise.
# Configuration comes from the environment (docs/configuration.md).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
# requirements.txt installs ./verifier (receco-verify) from this folder: it is copied first.
COPY requirements.txt .
COPY verifier ./verifier
RUN pip install -r requirements.txt

COPY . .
# Static files are collected at build time; the key and the cache are only for this step.
RUN DJANGO_SECRET_KEY=collectstatic-only RECECO_LOCAL_CACHE=1 python manage.py collectstatic --no-input \
    && useradd --system --uid 10001 --home-dir /app receco \
    && chown -R receco /app/staticfiles

USER receco
EXPOSE 8000
# /healthz answers without the database or Redis: a failing check means the process
# itself is stuck. (No curl in the slim image: Python's urllib does it.)
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=4)"
CMD ["gunicorn", "--config", "gunicorn.conf.py", "receco.wsgi"]
