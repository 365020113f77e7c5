# Billing package.
