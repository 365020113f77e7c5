# Template rendering used by main.py.


def render(context):
    return f"Hello {context['name']}"
