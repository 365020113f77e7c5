# Tests: C3 linearisation in a diamond: D(B, C) finds save() on B and load() on C, never on A.


class Storage:
    def save(self, key, value):
        return f"storage save {key}"

    def load(self, key):
        return f"storage load {key}"


class CachedStorage(Storage):
    def save(self, key, value):
        return f"cache save {key}"


class ReplicatedStorage(Storage):
    def save(self, key, value):
        return f"replica save {key}"

    def load(self, key):
        return f"replica load {key}"


class CachedReplicatedStorage(CachedStorage, ReplicatedStorage):
    pass


store = CachedReplicatedStorage()
print(store.save("invoice:1", {"total": 10}))
print(store.load("invoice:1"))
