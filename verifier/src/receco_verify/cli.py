"""``receco-verify receipt.json --keys jwks.json [--checkpoint checkpoint.txt]``: checks a
saved receipt, a proof bundle or the ORF file of "Download for your records", with no
network. Exit status 0 when every check passed, 1 when one failed or the file has no proof
of its place in the log yet (the reason on stderr), 2 on a usage error, 3 when every check
passed but the receipt is a test receipt (no purchase). What it checked is printed, with
the receipt's number as signed (content version 2) or that it is not, and its merchant:
its id, and its identity as Receco checked it (content version 3) or that nobody did."""

import argparse
import base64
import json
import sys

from receco_verify import keys as jwks
from receco_verify import orf
from receco_verify.receipt import Signed, VerificationError, verify_bundle, verify_signature


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="receco-verify",
        description="Check a Receco receipt offline: its signature, its checkpoint, its place in the log.",
    )
    parser.add_argument(
        "receipt", help="the receipt: its ORF file (Download for your records) or its bundle (/log/proof/<token>)"
    )
    parser.add_argument("--keys", required=True, help="the published keys (JWK Set, from /.well-known/jwks.json)")
    parser.add_argument(
        "--checkpoint", help="a signed checkpoint (from /log/checkpoint) to check against instead of the bundle's"
    )
    parser.add_argument("--origin", help="the log's name the checkpoint must carry (its first line)")
    args = parser.parse_args(argv)
    try:
        bundle = _read_json(args.receipt)
        keys = jwks.load_jwks(_read_json(args.keys))
        checkpoint = _read_text(args.checkpoint) if args.checkpoint else None
    except (OSError, ValueError) as error:
        print(f"receco-verify: {error}", file=sys.stderr)
        return 2
    try:
        document = bundle
        if orf.is_orf(document):
            bundle = orf.bundle_of(document)
        result = verify_bundle(bundle, keys, checkpoint, args.origin)
        if orf.is_orf(document):
            orf.check_trust(document)
            orf.check_fields(document)
    except orf.NotInLog as error:
        return _signed_only(document, keys, error)
    except VerificationError as error:
        print(f"NOT VERIFIED: {_unsigned_test(bundle) or error}", file=sys.stderr)
        return 1
    content = bundle["content"]
    signed = result.signed
    print(f"VERIFIED {'' if signed.livemode else 'TEST '}receipt {content.get('short_code')} ({content.get('token')})")
    print(f"  signature: Ed25519 by key {result.kid}")
    print(f"  number: {_number(signed)}")
    print(f"  merchant: {_merchant(signed, content)}")
    print(f"  checkpoint: {result.origin}, {result.tree_size} receipts, signed by a published key")
    print(f"  log: leaf {result.leaf_index} of {result.tree_size}, inclusion proof checked")
    return _test_receipt() if not signed.livemode else 0


def _signed_only(document: dict, keys: dict, missing: orf.NotInLog) -> int:
    """An ORF file not in the log yet: its signature is still checked and reported."""
    trust, content, _ = orf.signed_part(document)
    try:
        signature = base64.b64decode(trust.get("signature") or "", validate=True)
        signed = verify_signature(content, signature, keys)
        orf.check_trust(document)
        orf.check_fields(document)
    except (ValueError, TypeError) as error:  # VerificationError, or a signature that is not base64
        print(f"NOT VERIFIED: {error}", file=sys.stderr)
        return 1
    print(f"SIGNED {'' if signed.livemode else 'TEST '}receipt {content.get('short_code')} ({content.get('token')})")
    print(f"  signature: Ed25519 by key {signed.key.kid}")
    print(f"  number: {_number(signed)}")
    print(f"  merchant: {_merchant(signed, content)}")
    print(f"NOT VERIFIED: {missing}: download the receipt again in a minute", file=sys.stderr)
    return 1


TEST_RECEIPT = "a test receipt: made with a test key or for a test merchant, by anyone, under any name; no purchase"


def _test_receipt() -> int:
    print(f"NOT A PURCHASE: {TEST_RECEIPT}", file=sys.stderr)
    return 3


def _unsigned_test(document) -> str | None:
    """What to say of a receipt file that carries no signature because it is a test
    receipt's (Receco does not sign them), else None."""
    if not orf.is_orf(document) or document.get("trust") is not None:
        return None
    extension = (document.get("extensions") or {}).get(orf.EXTENSION)
    if isinstance(extension, dict) and extension.get("livemode") is False:
        return f"{TEST_RECEIPT}. Receco does not sign test receipts"
    return None


def _merchant(signed: Signed, content: dict) -> str:
    """Who issued the receipt, as the signature vouches for it: the merchant's id, and its
    identity as Receco's operator checked it, or that nobody did (its name is then its own)."""
    name = (content.get("merchant") or {}).get("name")
    if signed.identity is not None:
        identity = signed.identity
        number = f", {identity['registration_number']}" if identity.get("registration_number") else ""
        return f"{signed.merchant_id}, identity checked by Receco: {identity['legal_name']}{number}"
    why = "not checked by Receco" if signed.identified else f"not stated (signed in version {signed.version})"
    return f"{signed.merchant_id}, identity {why}; the name {json.dumps(name, ensure_ascii=False)} is its own"


def _number(signed: Signed) -> str:
    """The receipt's number as the signature vouches for it, to compare with the printed one."""
    if not signed.numbered:
        return f"not signed (a receipt signed in version {signed.version}, before numbers were)"
    if signed.number is None:
        return "none (a receipt issued before receipts were numbered)"
    return f"{signed.number}, signed"


def _read_json(path: str):
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON: {error}") from None


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8", newline="") as file:
        return file.read()


if __name__ == "__main__":
    sys.exit(main())
