# Tests: a local variable shadows an imported name inside one function only.
from templates import render


def build_renderer(kind):
    def render_kind(context):
        return f"[{kind}] {context['name']}"

    return render_kind


def email_body(context):
    render = build_renderer("email")
    return render(context)


def page_body(context):
    return render(context)


print(email_body({"name": "Ada"}))
print(page_body({"name": "Grace"}))
