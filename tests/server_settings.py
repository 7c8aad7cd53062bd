"""Settings of the gunicorn servers tests start (tests.servers): the production settings,
with static files served from the apps as in development, so no collectstatic is needed."""

from receco.settings import *  # noqa: F403

STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"  # noqa: F405
WHITENOISE_USE_FINDERS = True
