"""Settings for the test suite: the project's own, with a throwaway secret key.

DATABASE_URL and REDIS_URL still decide where the suite runs (SQLite and local
memory when unset; .ci/run also runs it on PostgreSQL and Redis).
"""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "tests-only-secret-key-not-for-any-deployment")
os.environ.setdefault("RECECO_WEB_URL", "https://receipts.example.test")

from receco.settings import *  # noqa: E402,F403

# Hashing staff passwords properly is slow by design; tests need no such cost.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"  # noqa: F405
# Serve static files straight from the apps, as in development: no collectstatic needed.
WHITENOISE_AUTOREFRESH = True
WHITENOISE_USE_FINDERS = True

# --- Merchants, API keys and rate limits (issue 3) ---
# The suite runs in one process, where the local-memory cache counts rate limits
# correctly; with REDIS_URL it runs on Redis, under a prefix of its own so that
# clearing the test's counters never touches anything else in that database.
if CACHES["default"]["BACKEND"].endswith("LocMemCache"):  # noqa: F405
    SILENCED_SYSTEM_CHECKS = ["django_ratelimit.E003", "django_ratelimit.W001"]
else:
    CACHES["default"]["KEY_PREFIX"] = f"receco-test-{os.getpid()}"  # noqa: F405
