# Tests: an exception class picked from a dict and raised reaches that class's __init__; super().__init__ chains to the base.
class ApiError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status

    def payload(self):
        return {"status": self.status, "error": str(self)}


class NotFound(ApiError):
    def __init__(self, message):
        super().__init__(404, message)


class Conflict(ApiError):
    def __init__(self, message):
        super().__init__(409, message)


ERRORS = {404: NotFound, 409: Conflict}


def fail(status, message):
    raise ERRORS[status](message)


def handle(status):
    try:
        fail(status, f"invoice request failed with {status}")
    except ApiError as error:
        return error.payload()


print(handle(404))
print(handle(409))
