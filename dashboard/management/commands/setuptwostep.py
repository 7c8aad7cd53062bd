from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from dashboard import enrolment, twofactor


class Command(BaseCommand):
    help = (
        "Print a link that lets a dashboard user set up two-step sign-in: proof beyond the password, "
        f"for a user with no email address or a lost phone. It works once, within "
        f"{int(enrolment.OPERATOR_VALIDITY.total_seconds() // 3600)} hours, signed in as that user; "
        "it replaces the user's earlier links. Give it to that user only."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--reset", action="store_true", help="first remove the user's authenticator app and recovery codes"
        )

    def handle(self, *args, username, reset, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None or not user.is_staff:
            raise CommandError(f"No dashboard user named {username!r}")
        if reset and twofactor.reset(user):
            self.stderr.write(f"Removed the authenticator app and recovery codes of {username}.")
        elif twofactor.enrolled(user):
            self.stderr.write(
                f"{username} has an authenticator app: the link lets them replace it after a code from it "
                "(--reset removes it first)."
            )
        secret = enrolment.make_link(user, enrolment.OPERATOR_VALIDITY)
        self.stdout.write(settings.RECECO_WEB_URL.rstrip("/") + enrolment.link_path(secret))
