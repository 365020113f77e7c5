# Tests: a chained call make_client().get(...) where the factory returns an instance.


class HttpClient:
    def __init__(self, base_url):
        self.base_url = base_url

    def get(self, path):
        return f"GET {self.base_url}{path}"


class FtpClient:
    def get(self, path):
        return f"RETR {path}"


def make_client():
    return HttpClient("https://api.example.com")


print(make_client().get("/invoices"))
