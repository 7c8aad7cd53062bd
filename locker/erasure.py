"""What the locker keeps of a contact, erased with it: privacy.erasure runs ``erase`` in
every erasure of a contact (registered in LockerConfig.ready())."""

from locker import sessions, signins
from locker.contacts import EMAIL, SMS, Contact
from receipts.contacts import EMAIL_FIELD


def erase(field: str, contact: str) -> int:
    """Delete the sign-ins of ``contact`` (kept in the receipts' ``field``) and its sessions
    on every device; return how many rows went."""
    known = Contact(EMAIL if field == EMAIL_FIELD else SMS, contact)
    return signins.forget_contact(known) + sessions.sign_out_everywhere(known)
