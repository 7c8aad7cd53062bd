"""Wallet passes of a receipt: Apple Wallet's signed ``.pkpass`` (``apple``) and Google
Wallet's save link (``google``), both saying what ``card`` says, with the operator's
credentials (``credentials``). Without credentials a wallet is off and its button is not
shown (docs/wallet.md)."""
