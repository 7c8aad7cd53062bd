def error_envelope(status: int, code: str, message: str, path: str | None) -> dict:
    """The error body docs/api.md prescribes for every failed procedure call."""
    data = {"code": code, "httpStatus": status}
    if path is not None:
        data["path"] = path
    return {"error": {"message": message, "code": -32603, "data": data}}


# --- Merchants, API keys and rate limits (issue 3) ---


def bearer(issued) -> dict:
    """Headers that send an IssuedKey's key the way the public SDKs do."""
    return {"Authorization": f"Bearer {issued.key}"}


def admitted_key(key: str):
    """The stored key a call sending ``key`` is admitted with (merchants.admission.admit,
    the one place a call is admitted). Raises Unauthorized as the call would be refused."""
    from merchants.admission.admit import admit

    return admit(f"Bearer {key}", "203.0.113.9").key


def signed_token(issued, body: str = "rcpt_mwrjzn0u_4hisgg") -> str:
    """A token as the Receco agent makes it offline with the IssuedKey ``issued``: ``body``,
    then the key's lookup id and the MAC under its token secret (receipts.claims)."""
    import hashlib
    import hmac

    secret = hmac.digest(issued.key.encode(), b"receco/agent-token/v1", "sha256")
    lookup = issued.api_key.lookup_id
    number = int.from_bytes(hmac.digest(secret, f"{body}_{lookup}".encode(), hashlib.sha256)[:10], "big")
    digits = ""
    while number:
        number, rest = divmod(number, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[rest] + digits
    return f"{body}_{lookup}{digits.rjust(16, '0')}"
