# Tests: calls into the standard library by import path: module functions, a class, methods of its instances.
import json
import tempfile
from pathlib import Path


def save_invoice(folder, invoice):
    path = Path(folder) / f"{invoice['id']}.json"
    path.write_text(json.dumps(invoice, sort_keys=True))
    return path


def load_invoice(path):
    return json.loads(path.read_text())


with tempfile.TemporaryDirectory() as folder:
    saved = save_invoice(folder, {"id": "INV-20", "total": 99.0})
    print(load_invoice(saved)["total"], saved.suffix)
