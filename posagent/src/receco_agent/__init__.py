"""Receco local POS agent: receives sales from a point-of-sale system, answers with a
receipt token, short code and QR code at once, and uploads the receipt to the Receco
service through a durable local queue."""

__version__ = "0.2.0"
