"""Django's floor as gunicorn serves it: ``gunicorn bench.floor.wsgi:application``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ["DJANGO_SETTINGS_MODULE"] = "bench.floor.settings"  # whatever the project's environment says

application = get_wsgi_application()
