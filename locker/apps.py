from django.apps import AppConfig


class LockerConfig(AppConfig):
    name = "locker"
    verbose_name = "Customer's receipt locker"

    def ready(self) -> None:
        from locker import erasure, retention, transport
        from messaging import transports
        from privacy import erasure as privacy_erasure
        from privacy import retention as privacy_retention

        transports.register(transport.SignInTransport(transport.SMS_CHANNEL))
        transports.register(transport.SignInTransport(transport.EMAIL_CHANNEL))
        privacy_erasure.register("locker", erasure.erase)
        privacy_retention.register("locker", retention.purge, retention.SAYS)
