from django.apps import AppConfig


class LockerConfig(AppConfig):
    name = "locker"
    verbose_name = "Customer's receipt locker"

    def ready(self) -> None:
        from locker import erasure, transport
        from messaging import transports
        from privacy.erasure import register

        transports.register(transport.SignInTransport(transport.SMS_CHANNEL))
        transports.register(transport.SignInTransport(transport.EMAIL_CHANNEL))
        register("locker", erasure.erase)
