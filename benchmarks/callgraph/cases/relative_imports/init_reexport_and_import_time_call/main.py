# Tests: a package __init__ that re-exports via relative imports and calls a function at import time.
import billing
from billing import registry

print(billing.issue_invoice("acme"))
print(registry.run("invoice", "globex"))
