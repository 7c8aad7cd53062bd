from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from merchants.management.commands._lookup import merchant_named
from merchants.models import MerchantMembership


class Command(BaseCommand):
    help = (
        "Give a staff user access to a merchant's dashboard in the admin (creating the user if "
        "needed). Members see the merchant, its keys, receipts and usage; owners also edit the "
        "merchant and make, rotate and revoke keys."
    )

    def add_arguments(self, parser):
        parser.add_argument("merchant", help="the merchant's id (merchant_string_id)")
        parser.add_argument("username")
        parser.add_argument("--password", help="required for a new user; checked by the password validators")
        parser.add_argument("--email", default="")
        parser.add_argument("--owner", action="store_true", help="may manage the merchant's settings and keys")

    def handle(self, *args, merchant, username, password, email, owner, **options):
        record = merchant_named(merchant)
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is None and not password:
            raise CommandError(f"{username} is a new user: give --password")
        if password:
            try:
                validate_password(password, user or User(username=username, email=email))
            except ValidationError as exc:
                raise CommandError("--password: " + " ".join(exc.messages)) from None
        role = MerchantMembership.Role.OWNER if owner else MerchantMembership.Role.MEMBER
        with transaction.atomic():
            created = user is None
            if created:
                user = User(username=username, email=email)
            user.is_staff = True
            if password:
                user.set_password(password)
            user.save()
            MerchantMembership.objects.update_or_create(user=user, merchant=record, defaults={"role": role})
        verb = "Created" if created else "Updated"
        self.stdout.write(f"{verb} staff user {username}: {role} of {record.string_id}; sign in at /admin/")
