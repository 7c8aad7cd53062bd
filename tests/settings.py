"""Settings for the test suite: the project's own, with a throwaway secret key.

DATABASE_URL and REDIS_URL still decide where the suite runs (SQLite and local
memory when unset; .ci/run also runs it on PostgreSQL and Redis).
"""

import json
import os

from cryptography.fernet import Fernet

from receco.lib.signingkeys import generate_jwk

os.environ.setdefault("DJANGO_SECRET_KEY", "tests-only-secret-key-not-for-any-deployment")
os.environ.setdefault("RECECO_WEB_URL", "https://receipts.example.test")
# Without REDIS_URL the suite counts in its own memory: it is one process.
os.environ.setdefault("RECECO_LOCAL_CACHE", "1")
# Tasks run in the test's own process, right after its transaction commits, so that a
# test sees what a change sent (tests of the worker choose the database backend).
os.environ.setdefault("RECECO_TASKS_BACKEND", "immediate")
# A signing key of this run's own (the servers the suite starts inherit it): keys are never
# in the repository, not even a test one.
os.environ.setdefault("RECECO_SIGNING_KEYS", json.dumps({"keys": [generate_jwk()]}))
# The key that encrypts merchants' NRS credentials (einvoicing.vault), this run's own likewise.
os.environ.setdefault("RECECO_EINVOICING_KEYS", Fernet.generate_key().decode())

from receco.settings import *  # noqa: E402,F403

# The immediate task backend outside debug mode, which start-up refuses anywhere else (messaging.apps).
RECECO_IMMEDIATE_TASKS_FOR_TESTS = True

# Hashing staff passwords properly is slow by design; tests need no such cost.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"  # noqa: F405
# Serve static files straight from the apps, as in development: no collectstatic needed.
WHITENOISE_AUTOREFRESH = True
WHITENOISE_USE_FINDERS = True

# The suite runs in one process, where counting in local memory is correct; with
# REDIS_URL it runs on Redis, under a prefix of its own so that clearing the suite's
# counters never touches anything else in that database.
if REDIS_URL:  # noqa: F405
    RECECO_CACHE_PREFIX = f"receco-test-{os.getpid()}"
    CACHES["default"]["KEY_PREFIX"] = RECECO_CACHE_PREFIX  # noqa: F405

# Two-step sign-in is on outside debug; the suite signs staff in with passwords alone
# unless a test is about the second step (tests/dashboard/test_twofactor.py turns it on).
RECECO_DASHBOARD_REQUIRE_2FA = False
