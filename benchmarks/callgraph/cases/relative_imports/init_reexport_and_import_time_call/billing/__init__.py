# Re-exports issue_invoice and registers it when the package is imported.
from .invoices import issue_invoice
from .registry import register

register("invoice", issue_invoice)
