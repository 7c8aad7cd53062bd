"""The agent's core: accept a sale from the POS, make it durable, try to upload it at once,
and answer the POS; shared by the HTTP server and the ``test`` command."""

import dataclasses
import json
import logging
import sys
import threading
import time
from datetime import UTC, datetime
from typing import TextIO

from receco_agent import __version__, client, qr, timing
from receco_agent.busy import Busy
from receco_agent.config import Settings
from receco_agent.forwarder import Forwarder, outcome_of
from receco_agent.money import DEFAULT_CURRENCY, format_amount
from receco_agent.outbox import CREATE_RECEIPT, DuplicateKey, Entry, Outbox, Outcome
from receco_agent.pacing import Pacer
from receco_agent.refunds import REFUND_PROCEDURE, validate_refund
from receco_agent.refunds import to_service_input as refund_input
from receco_agent.service_rules import MAX_BODY_BYTES
from receco_agent.tokens import new_token, short_code_for
from receco_agent.transactions import (
    InvalidTransaction,
    decode_json,
    iso_utc,
    request_digest,
    to_service_input,
    validate,
)

log = logging.getLogger(__name__)

# The POS waits for this first attempt, so it is kept short; the forwarder is more patient.
SALE_UPLOAD_TIMEOUT = 5.0
QUEUE_UPLOAD_TIMEOUT = 15.0


class Agent:
    """Accepts sales and owns the queue, the forwarder and what is known about the service."""

    def __init__(self, settings: Settings, out: TextIO | None = None):
        self.settings = settings
        self.outbox = Outbox(settings.queue_path)
        # Every call to the service, a sale's or the backlog's, takes its turn by the
        # service's rate limits here.
        self.pacer = Pacer()
        # What the service's answers said of its load: while it is busy, sales queue.
        self.busy = Busy()
        self.forwarder = Forwarder(self, QUEUE_UPLOAD_TIMEOUT)
        self.online: bool | None = None
        self.last_contact: str | None = None
        self._out = out or sys.stdout
        self._print_lock = threading.Lock()
        self._claims: set[str] = set()
        self._claims_lock = threading.Lock()

    def claim(self, token: str) -> bool:
        """Reserve ``token`` for one upload at a time in this process; False if taken."""
        with self._claims_lock:
            if token in self._claims:
                return False
            self._claims.add(token)
            return True

    def release(self, token: str) -> None:
        """Give back a token reserved by claim()."""
        with self._claims_lock:
            self._claims.discard(token)

    def check_service(self) -> None:
        """Find out whether the service answers, for /health before the first sale."""
        reachable, detail = client.probe(
            self.settings.api_url, self.settings.api_key, SALE_UPLOAD_TIMEOUT, pacer=self.pacer
        )
        self._contact(reachable)
        (log.info if reachable else log.warning)("Receco service at %s: %s", self.settings.api_url, detail)

    def _contact(self, online: bool) -> None:
        self.online = online
        self.last_contact = iso_utc(datetime.now(UTC))

    def upload(
        self, token: str, body: str, timeout: float, during_sale: bool, procedure: str = CREATE_RECEIPT
    ) -> client.Answer:
        """Send one queued sale and record the outcome in the queue.

        A refusal during a sale removes the row (the POS is told); during draining it marks
        the row failed. A transient failure leaves the row pending, and so does the service's
        rate limit when it allows no call now (the forwarder sends the row when it does).
        """
        granted, _ = self.pacer.grant(1)
        if not granted:
            return client.Answer(client.TRANSIENT, None, "held back by the service's rate limit")
        started = time.monotonic()
        try:
            answer = client.create_receipt(
                self.settings.api_url, self.settings.api_key, token, body, timeout, procedure=procedure
            )
        except BaseException:
            self.pacer.unused(1)
            raise
        timing.mark("service")
        self.busy.heard(time.monotonic() - started, answer.status, answer.retry_after)
        self.pacer.heard(1, answer.limits, refused=int(answer.status == 429), retry_after=answer.retry_after)
        self._contact(answer.kind != client.TRANSIENT or answer.status == 429)
        if answer.kind == client.CONFIRMED:
            requested = json.loads(body).get("short_code")
            assigned = answer.data.get("short_code") or requested
            receipt_id = answer.data.get("id") if isinstance(answer.data.get("id"), int) else None
            amount = answer.data.get("amount") if procedure == REFUND_PROCEDURE else None
            self.outbox.mark_done(token, receipt_id, assigned, amount if isinstance(amount, int) else None)
            if requested and assigned != requested:
                log.warning(
                    "Short code %s was taken: the service gave receipt %s the code %s; "
                    "the receipt is still found by its QR code and by %s",
                    requested,
                    token,
                    assigned,
                    assigned,
                )
            log.info("Uploaded receipt %s (service id %s)", token, receipt_id)
        elif answer.kind == client.REFUSED:
            if during_sale:
                self.outbox.discard(token)
                self.outbox.record_attempt(None, answer.status, answer.message)
            else:
                self.outbox.mark_failed(token, answer.status, answer.message)
            log.error(
                "The service refused receipt %s: HTTP %s %s",
                token,
                answer.status,
                answer.message,
            )
        else:
            self.outbox.record_attempt(token, answer.status, answer.message)
            log.warning("Upload of receipt %s did not go through: %s", token, answer.message)
        return answer

    def settle(self, entries: list[Entry], answer: list[client.Answer] | client.Answer) -> None:
        """Record what the service answered to one batch of queued rows."""
        if isinstance(answer, client.Answer):
            self._contact(answer.status is not None and (answer.status < 500 or answer.status == 429))
            if client.service_wide(answer):
                # Nothing got through, or the service as a whole is unwell: the rows wait
                # for the queue's back-off, without a failure of their own.
                self.outbox.record_attempt(None, answer.status, answer.message)
                log.warning("Upload of %d sale(s) did not go through: %s", len(entries), answer.message)
                return
            # The service answered the batch as a whole: a row in it may be the cause, so
            # each row waits a back-off of its own and then travels alone.
            alone = len(entries) > 1
            outcomes = [
                Outcome(e.token, "retry", answer.status, answer.message, wait=outcome_of(e, answer).wait, alone=alone)
                for e in entries
            ]
            log.warning("The service refused a batch of %d sale(s): %s", len(entries), answer.message)
            self.outbox.settle(outcomes)
            return
        outcomes = [outcome_of(entry, own) for entry, own in zip(entries, answer, strict=True)]
        self._contact(any(a.kind != client.TRANSIENT or a.status == 429 for a in answer))
        self.outbox.settle(outcomes)
        for entry, outcome in zip(entries, outcomes, strict=True):
            if outcome.state == "failed":
                log.error("The service refused receipt %s: HTTP %s %s", entry.token, outcome.status, outcome.error)
            elif outcome.state == "retry":
                log.warning("Upload of receipt %s did not go through: %s", entry.token, outcome.error)
            elif entry.short_code and outcome.assigned_short_code not in (None, entry.short_code):
                log.warning(
                    "Short code %s was taken: the service gave receipt %s the code %s",
                    entry.short_code,
                    entry.token,
                    outcome.assigned_short_code,
                )
        done = sum(outcome.state == "done" for outcome in outcomes)
        log.info("Uploaded %d of %d queued receipt(s)", done, len(entries))

    def accept(self, body: bytes, idempotency_key: str | None = None) -> tuple[int, dict]:
        """Handle one POS request body; return (HTTP status, JSON answer) for the POS.

        A sale with the ``idempotency_key`` of an earlier sale answers that one's receipt
        when it is the same request, and 422 when it is not.
        """
        try:
            document = decode_json(body)
            tx = validate(document)
        except InvalidTransaction as exc:
            return 400, {"status": "error", "error": str(exc)}
        timing.mark("validated")
        digest = request_digest(document)
        idempotency_key = idempotency_key or tx.transaction_id
        earlier = self._earlier_answer(CREATE_RECEIPT, idempotency_key, digest)
        if earlier is not None:
            return earlier
        configured = self.settings.merchant_id
        if configured and tx.merchant_id != configured:
            return 400, {
                "status": "error",
                "error": f"merchantId {tx.merchant_id!r} is not the merchant this agent is set up for ({configured!r})",
            }
        token = new_token(self.settings.api_key)
        short_code = short_code_for(token)
        payload = json.dumps(
            to_service_input(tx, token, short_code, datetime.now(UTC)),
            separators=(",", ":"),
        )
        size = len(payload.encode("utf-8"))
        timing.token(token)
        timing.mark("prepared")
        if size > MAX_BODY_BYTES:
            return 400, {
                "status": "error",
                "error": f"The sale is {size} bytes once encoded for the service, which accepts at most "
                f"{MAX_BODY_BYTES}: send fewer or shorter items",
            }
        self.claim(token)
        try:
            try:
                self.outbox.add(
                    token, short_code, payload, tx.local_fields, idempotency_key=idempotency_key, request_digest=digest
                )
            except DuplicateKey:
                # The same key, sent again while the first request was being stored.
                return self._answer_again(self.outbox.by_key(idempotency_key), digest)
            except Exception as exc:
                log.exception(
                    "Could not store sale %s in the local queue %s",
                    token,
                    self.outbox.path,
                )
                return 500, {
                    "status": "error",
                    "error": f"Could not store the sale in the local queue: {exc}",
                }
            timing.mark("stored")
            if self.settings.offline_mode and (self.forwarder.draining() or self.busy.holding()):
                # A backlog is being uploaded, or the service is busy (it asked this agent to
                # wait, or answered slowly): this sale joins the queue rather than make the POS
                # wait on the service (receco_agent.busy).
                answer = client.Answer(client.TRANSIENT, None, "queued behind the backlog")
            else:
                try:
                    answer = self.upload(token, payload, SALE_UPLOAD_TIMEOUT, during_sale=True)
                except Exception as exc:
                    # The sale is committed; the forwarder settles it (an idempotent replay if
                    # the service already has it), so the POS is told it is queued.
                    log.exception("Recording the upload of %s failed", token)
                    answer = client.Answer(client.TRANSIENT, None, f"local queue error: {exc}")
        finally:
            self.release(token)
        timing.mark("uploaded")
        result = self._answer(token, short_code, tx.total_amount, tx.strings.get("currency"), answer)
        timing.mark("answered")
        return result

    def refund(self, body: bytes, idempotency_key: str | None = None) -> tuple[int, dict]:
        """Handle one POS refund; return (HTTP status, JSON answer).

        The refund is queued like a sale and uploaded after its sale when that one is still
        queued. The service gives the refund its short code: the answer has it when the
        refund went up at once, else ``shortCode`` is null and ``queued`` true.
        """
        try:
            document = decode_json(body)
            refund = validate_refund(document)
        except InvalidTransaction as exc:
            return 400, {"status": "error", "error": str(exc)}
        digest = request_digest(document)
        idempotency_key = idempotency_key or refund.transaction_id
        earlier = self._earlier_answer(REFUND_PROCEDURE, idempotency_key, digest)
        if earlier is not None:
            return earlier
        # The sale it names, by token or short code, when it was made here: the refund goes
        # after it, and names it by its token (its printed code may have been replaced).
        original = self.outbox.find_sale(refund.receipt_id)
        if original is not None:
            if original.state == "failed":
                return 409, {
                    "status": "error",
                    "error": f"The sale {original.token} was refused by the service ({original.last_error}), "
                    "so it cannot be refunded",
                }
            refund = dataclasses.replace(refund, receipt_id=original.token)
        token = new_token(self.settings.api_key)
        payload = json.dumps(refund_input(refund, token), separators=(",", ":"))
        self.claim(token)
        try:
            try:
                self.outbox.add(
                    token, "", payload, idempotency_key=idempotency_key, procedure=REFUND_PROCEDURE,
                    after_token=original.token if original is not None else None, request_digest=digest,
                )  # fmt: skip
            except DuplicateKey:
                return self._answer_again(self.outbox.by_key(idempotency_key, REFUND_PROCEDURE), digest)
            except Exception as exc:
                log.exception("Could not store refund %s in the local queue", token)
                return 500, {"status": "error", "error": f"Could not store the refund in the local queue: {exc}"}
            if (original is not None and original.state == "pending") or self.forwarder.draining():
                answer = client.Answer(client.TRANSIENT, None, "queued behind its sale")
            else:
                answer = self.upload(token, payload, SALE_UPLOAD_TIMEOUT, during_sale=True, procedure=REFUND_PROCEDURE)
        finally:
            self.release(token)
        if answer.kind == client.REFUSED:
            return answer.status, {"status": "error", "error": answer.message, "code": answer.code}
        receipt_url = self.settings.receipt_url(token)
        result = {
            "receiptId": token,
            "refundOf": refund.receipt_id,
            "receiptUrl": receipt_url,
            "qrCodeUrl": qr.png_data_url(receipt_url),
            "shortCode": answer.data.get("short_code") if answer.kind == client.CONFIRMED else None,
            "status": "success",
        }
        if answer.kind == client.CONFIRMED:
            result["amount"] = answer.data.get("amount")
        else:
            result["queued"] = True
            self.forwarder.notify_queued()
        return 200, result

    def _earlier_answer(self, procedure: str, idempotency_key: str | None, digest: str) -> tuple[int, dict] | None:
        """The answer to the sale (or refund, by ``procedure``) first sent with
        ``idempotency_key``, or None if there was none."""
        if idempotency_key is None:
            return None
        entry = self.outbox.by_key(idempotency_key, procedure)
        return None if entry is None else self._answer_again(entry, digest)

    def _answer_again(self, entry: Entry | None, digest: str) -> tuple[int, dict]:
        """The answer to a retry (its request's ``digest``) of the request that queued ``entry``."""
        kind = "refund" if entry is not None and entry.procedure == REFUND_PROCEDURE else "sale"
        if entry is None:  # removed meanwhile (e.g. 'clear-queue' of a failed sale)
            return 409, {"status": "error", "error": "This Idempotency-Key was used for a sale no longer in the queue"}
        if entry.request_digest is not None and entry.request_digest != digest:
            # As Stripe does: a key names one request; another one with it is a mistake of
            # the POS, which would otherwise be told its new request was made.
            return 422, {
                "status": "error",
                "error": f"This Idempotency-Key was first used for a different {kind}: a retry must send the same "
                f"request again, and a new {kind} needs a new key",
            }
        if entry.state == "failed":
            return entry.last_status or 400, {"status": "error", "error": entry.last_error}
        receipt_url = self.settings.receipt_url(entry.token)
        answer = {"receiptId": entry.token, "receiptUrl": receipt_url, "qrCodeUrl": qr.png_data_url(receipt_url)}
        if entry.procedure == REFUND_PROCEDURE:
            answer["refundOf"] = json.loads(entry.body)["token"]
            answer["shortCode"] = entry.assigned_short_code if entry.state == "done" else None
            if entry.state == "done":
                answer["amount"] = entry.amount
        else:
            answer["shortCode"] = entry.assigned_short_code or entry.short_code or None
        answer["status"] = "success"
        if entry.state == "pending":
            answer["queued"] = True
        return 200, answer

    def _answer(
        self, token: str, short_code: str, total: int, currency: str | None, answer: client.Answer
    ) -> tuple[int, dict]:
        if answer.kind == client.REFUSED:
            return answer.status, {
                "status": "error",
                "error": answer.message,
                "code": answer.code,
            }
        if answer.kind == client.TRANSIENT and not self.settings.offline_mode:
            self.outbox.discard(token)
            status = 502 if answer.status and answer.status >= 500 else 503
            return status, {
                "status": "error",
                "error": f"Receco service unavailable ({answer.message}); "
                "the sale was not queued because enableOfflineMode is false",
            }
        if answer.kind == client.CONFIRMED:
            short_code = answer.data.get("short_code") or short_code
        receipt_url = self.settings.receipt_url(token)
        result = {
            "receiptId": token,
            "receiptUrl": receipt_url,
            "qrCodeUrl": qr.png_data_url(receipt_url),
            "shortCode": short_code,
            "status": "success",
        }
        if answer.kind == client.TRANSIENT:
            result["queued"] = True
            self.forwarder.notify_queued()
        elif self.forwarder.backlog_waiting():
            # The service answered again: no need to sit out the rest of the back-off.
            self.forwarder.wake(reset=True)
        if self.settings.print_qr:
            currency = currency or DEFAULT_CURRENCY
            self._print_receipt(short_code, receipt_url, total, currency, queued=answer.kind == client.TRANSIENT)
        return 200, result

    def _print_receipt(self, short_code: str, receipt_url: str, total: int, currency: str, queued: bool) -> None:
        if self._out is None:  # e.g. a Windows service has no console
            return
        note = " (queued, uploads when the service is back)" if queued else ""
        amount = format_amount(total, currency)
        try:
            amount.encode(getattr(self._out, "encoding", None) or "utf-8")
        except UnicodeEncodeError:  # e.g. a Windows console without ₦: the currency's code instead
            amount = format_amount(total, currency, symbol=False)
        with self._print_lock:
            try:
                qr.print_text(receipt_url, self._out)
            except (OSError, ValueError):  # e.g. a console without block characters
                log.warning("Could not print the QR code to the terminal", exc_info=True)
            try:
                self._out.write(f"Short code: {short_code}   total: {amount}{note}\n{receipt_url}\n\n")
                self._out.flush()
            except (OSError, ValueError):
                log.warning("Could not print the short code to the terminal", exc_info=True)

    def health(self) -> dict:
        """Return the /health document: service reachability and the queue's state."""
        return {
            "agent": "receco-agent",
            "version": __version__,
            "status": "ok",
            "running": True,
            "home": str(self.settings.home),
            "online": self.online,
            "last_contact": self.last_contact,
            "merchantId": self.settings.merchant_id,
            "rececoApiUrl": self.settings.api_url,
            "offlineMode": self.settings.offline_mode,
            "retry_in_seconds": self.forwarder.retry_in(),
            "rate_limit": self.pacer.status(),
            **self.outbox.summary(),
        }
