# Tests: an alias of an alias across two modules still resolves to the original definition.
from text_tools import make_slug as slug
from text_tools import title_slug


def invoice_url(customer, number):
    return f"/{slug(customer)}/{number}"


print(invoice_url("Acme Corp", "INV-1"), title_slug("Hello World"))
