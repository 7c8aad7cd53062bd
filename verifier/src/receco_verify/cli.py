"""``receco-verify receipt.json --keys jwks.json [--checkpoint checkpoint.txt]``: checks a
saved receipt bundle with no network. Exit status 0 when every check passed, 1 when one
failed (the reason on stderr), 2 on a usage error."""

import argparse
import json
import sys

from receco_verify import keys as jwks
from receco_verify.receipt import VerificationError, verify_bundle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="receco-verify",
        description="Check a Receco receipt offline: its signature, its checkpoint, its place in the log.",
    )
    parser.add_argument("receipt", help="the receipt bundle (JSON, from /log/proof/<token>)")
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
        result = verify_bundle(bundle, keys, checkpoint, args.origin)
    except VerificationError as error:
        print(f"NOT VERIFIED: {error}", file=sys.stderr)
        return 1
    content = bundle["content"]
    print(f"VERIFIED receipt {content.get('short_code')} ({content.get('token')})")
    print(f"  signature: Ed25519 by key {result.kid}")
    print(f"  checkpoint: {result.origin}, {result.tree_size} receipts, signed by a published key")
    print(f"  log: leaf {result.leaf_index} of {result.tree_size}, inclusion proof checked")
    return 0


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
