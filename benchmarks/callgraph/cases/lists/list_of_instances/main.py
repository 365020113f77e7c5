# Tests: method calls on instances held in a list; only classes actually in the list are linked.


class Channel:
    def __init__(self, name):
        self.name = name


class EmailChannel(Channel):
    def send(self, message):
        return f"{self.name}: mail '{message}'"


class SmsChannel(Channel):
    def send(self, message):
        return f"{self.name}: sms '{message}'"


class PushChannel(Channel):
    def send(self, message):
        return f"{self.name}: push '{message}'"


def broadcast(message):
    channels = [EmailChannel("billing@"), SmsChannel("+49")]
    return [channel.send(message) for channel in channels]


print(broadcast("Invoice in_7 is overdue"))
