# Tests: an attribute replaced from outside the class (test-double injection) decides which method runs.


class HttpTransport:
    def request(self, method, url):
        raise ConnectionError("no network in this example")


class RecordingTransport:
    def __init__(self):
        self.calls = []

    def request(self, method, url):
        self.calls.append((method, url))
        return {"status": 200}


class ApiClient:
    def __init__(self):
        self.transport = HttpTransport()

    def fetch_invoice(self, number):
        return self.transport.request("GET", f"/invoices/{number}")


client = ApiClient()
client.transport = RecordingTransport()
print(client.fetch_invoice("INV-7"))
