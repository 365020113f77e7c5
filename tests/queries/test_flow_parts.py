"""The pure parts of flow assembly: entry-point kinds, decorators, hub penalty, body trimming."""

from __future__ import annotations

from cg.queries.explain import class_outline, decorators, entry_kind, hub_penalty, trim_body

FN = "shop.api.handlers.pay"


def node(qualname: str = FN, name: str = "pay", path: str = "shop/api/handlers.py", kind: str = "function") -> dict:
    return {"qualname": qualname, "name": name, "path": path, "kind": kind, "text": ""}


def test_decorators_are_read_above_the_definition_only():
    text = '@router.route("/pay", methods=["POST"])\n@login_required\ndef pay(request):\n'
    text += "    @cache\n    def inner(): ...\n"
    assert decorators(text) == ['router.route("/pay", methods=["POST"])', "login_required"]
    assert decorators("def plain():\n    pass\n") == []


def test_entry_kinds_in_rank_order():
    assert entry_kind(node(), ['router.route("/pay")'], 0) == "route"
    assert entry_kind(node(), ["app.post('/pay')"], 0) == "route"
    assert entry_kind(node(), ["click.command()"], 0) == "cli"
    assert entry_kind(node(), ["cli.command(name='pay')"], 0) == "cli"
    assert entry_kind(node("shop.cli.main", "main"), [], 0) == "main"
    assert entry_kind(node(), [], 0) == "public"
    assert entry_kind(node("shop.api._helpers.pay"), [], 0) == "uncalled"
    assert entry_kind(node(), [], 2) == "partial"  # called from beyond the walked depth
    test = node("tests.test_pay.test_pay", "test_pay", "tests/test_pay.py")
    assert entry_kind(test, [], 0) == "test"
    assert entry_kind(node(), ["property"], 0) == "public"  # not every decorator is an entry point


def test_hub_penalty_spares_ordinary_callees_and_grows_slowly():
    assert [hub_penalty(n) for n in (0, 1, 3)] == [1.0, 1.0, 1.0]
    values = [hub_penalty(n) for n in (4, 8, 40, 400)]
    assert values == sorted(values) and values[0] == 2.0
    assert hub_penalty(400) < 10  # a hub is demoted, not erased


def test_trim_body_keeps_signature_and_docstring():
    text = 'def f(\n    a,\n) -> int:\n    """Doc line.\n\n    More doc.\n    """\n'
    text += "    total = sum(line.amount_cents for line in lines)\n    return total - discount\n"
    trimmed = trim_body(text, {"docstring": "Doc line.\n\nMore doc."})
    assert trimmed.splitlines()[:7] == text.splitlines()[:7]
    assert trimmed.splitlines()[-1] == "    ...  # 2 more lines (trimmed by the token budget)"
    one = "def g():\n    return 1\n"
    assert trim_body(one, {"docstring": ""}) == one, "a cut that saves nothing is not made"
    long_line = "def g(invoice):\n    return invoice.total_cents - invoice.refunded_cents - invoice.discount_cents\n"
    assert trim_body(long_line, {}).endswith("...  # 1 more line (trimmed by the token budget)")


def test_a_class_step_is_its_outline():
    text = (
        "@dataclass\nclass Router:\n"
        '    """Maps (method, path) pairs to handler functions."""\n\n'
        "    routes: dict = field(default_factory=dict)\n\n"
        "    def resolve(\n        self, method: str, path: str\n    ) -> Handler:\n"
        "        try:\n            return self.routes[(method.upper(), path)]\n"
        "        except KeyError:\n            raise RouteNotFound(path) from None\n\n"
        "    async def dispatch(self, request: Request) -> Response:\n"
        "        handler = self.resolve(request.method, request.path)\n        return handler(request)\n"
    )
    outline = class_outline(text).splitlines()
    assert outline[:5] == text.splitlines()[:5]
    assert "        self, method: str, path: str" in outline and "    ) -> Handler: ..." in outline
    assert "    async def dispatch(self, request: Request) -> Response: ..." in outline
    assert not any("return" in line or "try:" in line for line in outline)
    assert outline[-1] == "    # method bodies left out: a class step shows its outline"


def test_adapters_and_accessors_fold_into_the_steps_that_use_them():
    from cg.queries.explain import Explanation, FlowEdge, FlowNode, _fold_thin_steps, thin_shape

    def step(qualname: str, text: str, role: str = "callee", start: int = 1) -> FlowNode:
        n = {"qualname": f"httpx._client.{qualname}", "name": qualname.rsplit(".", 1)[-1], "kind": "method"}
        n.update(path="httpx/_client.py", start_line=start, end_line=start + text.count("\n"), text=text)
        return FlowNode(f"httpx/_client.py::{qualname}", n, role, 0.5)

    get = step(
        "Client.get",
        'def get(self, url):\n    """Send a GET request."""\n    return self.request("GET", url)\n',
        "caller",
    )
    request = step(
        "Client.request",
        "def request(self, method, url):\n    req = self.build_request(method, url)\n    return self.send(req)\n",
        "seed",
        20,
    )
    send = step(
        "Client.send",
        "def send(self, request):\n    auth = self._build_request_auth(request)\n"
        "    response = self._send_handling_auth(request, auth=auth)\n    return response\n",
        "callee",
        40,
    )
    timeout = step("Client.timeout", "def timeout(self):\n    return self._timeout\n", "callee", 60)
    assert thin_shape(get.node["text"]) == "adapter" and thin_shape(timeout.node["text"]) == "accessor"
    assert thin_shape(send.node["text"]) is None
    debug = '@property\ndef debug(self) -> bool:\n    """Whether debug mode is on."""\n'
    debug += '    return self.config["DEBUG"]\n'
    assert thin_shape(debug) == "accessor"  # a subscript read is an accessor too
    assert thin_shape("def closed(self):\n    return self._pool is None or not self._open\n") == "accessor"
    assert thin_shape("def size(self):\n    return len(self._items)\n") == "adapter"  # one call: delegates
    assert thin_shape("def total(self):\n    return self.net + self.tax\n") is None  # arithmetic computes
    result = Explanation("how does the client send a request", True)
    result.nodes = {n.id: n for n in (get, request, send, timeout)}
    result.edges = [
        FlowEdge(get.id, request.id, 3, "jedi"),
        FlowEdge(request.id, send.id, 23, "jedi"),
        FlowEdge(send.id, timeout.id, 42, "jedi"),
    ]
    _fold_thin_steps(result)
    assert set(result.nodes) == {request.id, send.id}
    assert [f["qualname"] for f in request.folded] == ["httpx._client.Client.get"]
    assert [(f["qualname"], f["shape"]) for f in send.folded] == [("httpx._client.Client.timeout", "accessor")]
    assert result.edges == [FlowEdge(request.id, send.id, 23, "jedi")]


def test_an_error_class_the_flow_raises_folds_into_the_steps_that_raise_it():
    from cg.queries.explain import Explanation, FlowEdge, FlowNode, _fold_thin_steps, render_markdown

    def node(qualname: str, kind: str, text: str, role: str, start: int) -> FlowNode:
        n = {"qualname": f"shop.routing.{qualname}", "name": qualname.rsplit(".", 1)[-1], "kind": kind}
        n.update(path="shop/routing.py", start_line=start, end_line=start + text.count("\n"), text=text)
        return FlowNode(f"shop/routing.py::{qualname}", n, role, 0.5)

    resolve = node(
        "Router.resolve",
        "method",
        "def resolve(self, method, path):\n    handler = self.routes.get((method, path))\n"
        "    if handler is None:\n        raise RouteNotFound(path)\n    return Route(handler, path)\n",
        "seed",
        10,
    )
    missing = node("RouteNotFound", "class", "class RouteNotFound(LookupError):\n    pass\n", "callee", 1)
    route = node("Route", "class", "class Route:\n    def __init__(self, handler, path):\n        ...\n", "callee", 4)
    result = Explanation("how is a route resolved?", True)
    result.nodes = {n.id: n for n in (resolve, missing, route)}
    result.edges = [FlowEdge(resolve.id, missing.id, 13, "jedi"), FlowEdge(resolve.id, route.id, 14, "jedi")]
    _fold_thin_steps(result)
    assert set(result.nodes) == {resolve.id, route.id}  # the class built on a plain line stays a step
    assert [(f["qualname"], f["shape"]) for f in resolve.folded] == [("shop.routing.RouteNotFound", "raised")]
    result.order = [resolve.id, route.id]
    assert "Raises (not steps of their own): shop.routing.RouteNotFound [shop/routing.py:1-3]" in render_markdown(
        result
    )
