import os

from django.core.asgi import get_asgi_application

from receco.lib.signingkeys import keyring

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "receco.settings")

application = get_asgi_application()

# A signing key configured but unreadable stops the server here, naming the variable
# (manage.py's commands stop at their system checks: ledger.apps).
keyring()
