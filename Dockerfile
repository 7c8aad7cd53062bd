# Receco web service: gunicorn serving receco.wsgi, static files through WhiteNoise.
# Configuration comes from the environment (see README, "Configuration").
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt

COPY . .
# Static files are collected at build time; the key and the cache are only for this step.
RUN DJANGO_SECRET_KEY=collectstatic-only RECECO_LOCAL_CACHE=1 python manage.py collectstatic --no-input \
    && useradd --system --uid 10001 --home-dir /app receco \
    && chown -R receco /app/staticfiles

USER receco
EXPOSE 8000
CMD ["gunicorn", "--config", "gunicorn.conf.py", "receco.wsgi"]
