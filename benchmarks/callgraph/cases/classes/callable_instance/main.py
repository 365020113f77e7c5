# Tests: calling an instance invokes its __call__ method.


class RateLimiter:
    def __init__(self, limit):
        self.limit = limit
        self.seen = {}

    def __call__(self, key):
        return self.allow(key)

    def allow(self, key):
        self.seen[key] = self.seen.get(key, 0) + 1
        return self.seen[key] <= self.limit


limiter = RateLimiter(limit=2)
print([limiter("api-key-1") for _ in range(3)])
