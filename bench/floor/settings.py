"""Settings of Django's floor (bench/floor): the least a Django project can be and still
serve the benchmark's two calls. No app, no middleware, no template, no cache; one
database, the benchmark's (BENCH_DATABASE_URL), its connection kept between requests and
its parameters bound by the server, as the bare reference's psycopg binds them."""

import os

import dj_database_url

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or "bench-floor-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ROOT_URLCONF = "bench.floor.urls"
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
USE_TZ = True
TIME_ZONE = "UTC"

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/receco_bench_10k"),
        conn_max_age=600,
    )
}
DATABASES["default"]["ENGINE"] = "django.db.backends.postgresql"
DATABASES["default"]["OPTIONS"] = {"server_side_binding": True}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}
