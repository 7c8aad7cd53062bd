"""Make a signing key file (a JWK Set with one private key), or rotate the key in one.

    manage.py makesigningkey                     # the file RECECO_SIGNING_KEY_FILE names
    manage.py makesigningkey --file /secrets/receco-keys.json
    manage.py makesigningkey --if-missing        # ./dev up: make the development key once
    manage.py makesigningkey --rotate            # a new current key; the old one stays published

The file is written with mode 0600 and holds the private key: keep it out of the
repository and the image (docs/verification.md, "Keys").
"""

import json
import os
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from receco.lib.signingkeys import generate_jwk, parse


class Command(BaseCommand):
    help = "Make a signing key file, or rotate its key (the old key stays published)."
    # The system checks read the configured key (ledger.apps), which this may be making.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--file", help="the key file (default: RECECO_SIGNING_KEY_FILE)")
        parser.add_argument("--if-missing", action="store_true", help="do nothing when the file exists")
        parser.add_argument("--rotate", action="store_true", help="replace the current key, keep its public key")

    def handle(self, *args, file=None, if_missing=False, rotate=False, **options):
        path = Path(file or settings.RECECO_SIGNING_KEY_FILE or "")
        if not str(path) or str(path) == ".":
            raise CommandError("No key file: pass --file or set RECECO_SIGNING_KEY_FILE")
        new = generate_jwk()
        if path.exists():
            if if_missing:
                self.stdout.write(f"Signing key file {path} exists: kept")
                return
            if not rotate:
                raise CommandError(f"{path} exists: --rotate replaces its current key (the old one stays published)")
            try:
                old = json.loads(path.read_text(encoding="utf-8"))
                parse(old, str(path))
            except (json.JSONDecodeError, ImproperlyConfigured) as error:
                raise CommandError(f"{path} is not a signing key file: {error}") from None
            retired = [{name: value for name, value in jwk.items() if name != "d"} for jwk in old["keys"]]
            keys = [new, *retired]
        elif rotate:
            raise CommandError(f"No key file at {path} to rotate")
        else:
            keys = [new]
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".new")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            json.dump({"keys": keys}, out, indent=2)
            out.write("\n")
        os.replace(temporary, path)
        verb = "Rotated to" if rotate else "Made"
        self.stdout.write(f"{verb} signing key {new['kid']} in {path}")
