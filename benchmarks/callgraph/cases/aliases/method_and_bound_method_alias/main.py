# Tests: a method aliased in the class body (fetch = get) and a bound method stored in a variable.


class HttpClient:
    def __init__(self, base_url):
        self.base_url = base_url

    def post(self, path, body):
        return f"POST {self.base_url}{path} {body}"

    def get(self, path):
        return f"GET {self.base_url}{path}"

    fetch = get


def sync_invoices(client):
    send = client.post
    listing = client.fetch("/invoices")
    return send("/sync", listing)


print(sync_invoices(HttpClient("https://erp.example")))
