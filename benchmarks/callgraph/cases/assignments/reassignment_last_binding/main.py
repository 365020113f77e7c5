# Tests: a local name rebound before the call; only the last binding is invoked.


def parse_json(body):
    return {"format": "json", "body": body}


def parse_xml(body):
    return {"format": "xml", "body": body}


def parse_request(body):
    parser = parse_json
    parser = parse_xml
    return parser(body)


print(parse_request("<invoice id='7'/>"))
