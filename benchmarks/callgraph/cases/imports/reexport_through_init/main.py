# Tests: names re-exported by a package __init__.py resolve to the module that defines them.
import payments
from payments import refund

print(payments.charge(500))
print(refund("ch_1"))
