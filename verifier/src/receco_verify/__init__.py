"""receco-verify: checks a Receco receipt with no network and no Django.

One home for each rule the service and every verifier share: the canonical form
(``canonical``), Ed25519 keys and their ids (``keys``), the RFC 6962 tree (``merkle``), the
C2SP signed note and checkpoint (``note``), and what a receipt bundle must prove
(``receipt``). The service imports these; it never re-implements them.
"""

__version__ = "0.3.0"
