# Tests: `import package.module as alias` then alias.function().
import billing.invoices as inv


def bill(customer):
    return inv.create(customer, 120)


print(bill("acme"))
