# Tests: `import package.module as alias` then alias.function().
import billing.invoices as inv

print(inv.create("acme", 120))
