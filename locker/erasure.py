"""What the locker keeps of a contact, erased with it: privacy.erasure runs ``erase`` in
every erasure of a contact (registered in LockerConfig.ready())."""

from locker import limits, sessions, signins
from locker.contacts import EMAIL, SMS, Contact
from receipts.contacts import EMAIL_FIELD


def erase(field: str, contact: str) -> int:
    """Delete what the locker keeps of ``contact`` (kept in the receipts' ``field``): its
    sign-ins, its sessions on every device, and the counters of the shared cache named by
    its keyed digest (its codes, links and downloads asked for); return how many went."""
    known = Contact(EMAIL if field == EMAIL_FIELD else SMS, contact)
    return signins.forget_contact(known) + sessions.sign_out_everywhere(known) + limits.forget(known)
