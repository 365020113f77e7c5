# Tests: raising builtin exceptions gives <builtin> edges, also on a branch the run does not take; else and finally clauses call functions.
AUDIT = []


def parse_amount(text):
    if not text.strip():
        raise ValueError("empty amount")
    return round(float(text), 2)


def log_attempt(label):
    AUDIT.append(label)


def record_success(amount):
    AUDIT.append(f"ok {amount}")


def apply_refund(ledger, invoice_id, text):
    try:
        amount = parse_amount(text)
        if invoice_id not in ledger:
            raise KeyError(invoice_id)
    except ValueError:
        return None
    else:
        record_success(amount)
        ledger[invoice_id] -= amount
        return ledger[invoice_id]
    finally:
        log_attempt(invoice_id)


ledger = {"INV-7": 100.0}
print(apply_refund(ledger, "INV-7", "25.50"))
print(apply_refund(ledger, "INV-7", "  "))
print(AUDIT)
