# Tests: a decorator factory on methods runs in the class body (edges from the class, main.InvoiceAdmin); calls of the methods reach the wrapper.
import functools


def requires_role(role):
    def decorate(method):
        @functools.wraps(method)
        def guarded(self, user, *args):
            if role not in user["roles"]:
                return deny(user, method.__name__)
            return method(self, user, *args)

        return guarded

    return decorate


def deny(user, action):
    return f"{user['name']} may not {action}"


class InvoiceAdmin:
    @requires_role("billing")
    def void(self, user, invoice_id):
        return f"{invoice_id} voided by {user['name']}"

    @requires_role("admin")
    def purge(self, user):
        return f"purged by {user['name']}"


admin = InvoiceAdmin()
alice = {"name": "alice", "roles": ["billing"]}
print(admin.void(alice, "INV-70"))
print(admin.purge(alice))
print(admin.purge({"name": "root", "roles": ["admin"]}))
