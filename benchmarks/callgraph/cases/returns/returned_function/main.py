# Tests: a function returned by another function and called directly on the result.


def to_json(data):
    return str(data)


def to_yaml(data):
    return "\n".join(f"{key}: {value}" for key, value in data.items())


def get_serializer(fmt):
    if fmt == "yaml":
        return to_yaml
    return to_json


print(get_serializer("yaml")({"invoice": "in_1"}))
print(get_serializer("json")({"invoice": "in_2"}))
