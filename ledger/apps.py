from django.apps import AppConfig


class LedgerConfig(AppConfig):
    name = "ledger"
    verbose_name = "Receipt log"

    def ready(self) -> None:
        from django.core import checks

        from ledger import metrics, tasks
        from receco.ops import health
        from receco.ops import metrics as ops_metrics
        from receipts import hooks

        # Not read here: `makesigningkey` must start when RECECO_SIGNING_KEY_FILE names the
        # file it is to make. The servers read it as they start (receco.wsgi, receco.asgi),
        # and every other command at its system checks.
        checks.register(check_signing_keys)
        health.register_detail("signing", signing_state)
        health.register_detail("log", log_state, reads_database=True)
        ops_metrics.register_collector(metrics.LogCollector())
        hooks.register(tasks.AppendOnCommit())


def check_signing_keys(app_configs=None, **kwargs) -> list:
    """System check: a key configured but unreadable stops manage.py's commands (runserver,
    migrate, db_worker, appendlog, ...) before they run, naming the variable."""
    from django.core import checks
    from django.core.exceptions import ImproperlyConfigured

    from receco.lib import signingkeys

    try:
        signingkeys.keyring()
    except ImproperlyConfigured as error:
        return [checks.Critical(str(error), id="ledger.E001")]
    return []


def signing_state() -> str:
    """/readyz's word on signing: on with which key, or off and why."""
    from receco.lib import signingkeys

    ring = signingkeys.keyring()
    return signingkeys.OFF_REASON if ring is None else f"on: key {ring.kid}"


def log_state() -> str:
    """/readyz's word on the log: its last ``verifylog`` outcome."""
    from django.db import DatabaseError

    from ledger.models import Head

    try:
        head = Head.objects.filter(id=1).first()
    except DatabaseError:  # before `migrate` made the table
        return "unknown: the log cannot be read"
    if head is None or head.audited_at is None:
        return "not verified yet (manage.py verifylog)"
    when = head.audited_at.isoformat(timespec="seconds")
    if head.audit_problems:
        first = head.audit_summary.split("\n", 1)[0]
        return f"{head.audit_problems} problem(s) found by verifylog at {when}, first: {first}"
    return f"verified by verifylog at {when}: {head.audited_size} entries, no problem"
