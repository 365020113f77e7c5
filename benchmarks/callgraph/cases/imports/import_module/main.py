# Tests: `import module` then module.function().
import billing


def bill(customer):
    return billing.create_invoice(customer, 99.0)


print(bill("acme"))
