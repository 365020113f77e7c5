"""TypeScript, JavaScript, Go, Java and Rust on tests/fixtures/polyglot: definitions (with doc
comments, signatures, line ranges), imports, calls and inheritance, and the calls that must stay
unresolved (library calls, receivers of unknown type, names with several candidates)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cg.config import load_settings
from cg.ingest.pipeline import extract_repository, resolve_extractions
from cg.model import Edge, FileExtraction, Symbol

POLYGLOT = Path(__file__).resolve().parents[1] / "fixtures" / "polyglot"
GO = "payments-go/internal"
WEB = "payments-web"
WORKER = "webhook-worker"
JAVA = "billing-java/src/main/java/com/acme/billing"
RUST = "invoice-cli/src"


@pytest.fixture(scope="module")
def polyglot() -> tuple[list[FileExtraction], list[Edge]]:
    settings = load_settings(POLYGLOT, resolver="name")
    extractions, _ = extract_repository(settings)
    edges, _ = resolve_extractions(settings, extractions)
    return extractions, edges


@pytest.fixture(scope="module")
def symbols(polyglot) -> dict[str, Symbol]:
    return {s.id: s for ex in polyglot[0] for s in ex.symbols}


@pytest.fixture(scope="module")
def files(polyglot) -> dict[str, FileExtraction]:
    return {ex.file.path: ex for ex in polyglot[0]}


def calls(edges: list[Edge], src: str) -> dict[str, Edge]:
    return {e.dst: e for e in edges if e.type == "CALLS" and e.src == src}


def edge(edges: list[Edge], kind: str, src: str, dst: str) -> Edge | None:
    return next((e for e in edges if e.type == kind and e.src == src and e.dst == dst), None)


# -- languages and files -------------------------------------------------------------------------
def test_every_language_and_config_format_is_detected(files):
    language = {path: ex.file.language for path, ex in files.items()}
    assert language[f"{WEB}/web/components/InvoiceList.tsx"] == "typescript"
    assert language[f"{WORKER}/bin/webhook-worker"] == "javascript"  # no extension: `#!/usr/bin/env node`
    assert language[f"{GO}/server/server.go"] == "go"
    assert language[f"{JAVA}/service/InvoiceService.java"] == "java"
    assert language[f"{RUST}/main.rs"] == "rust"
    assert language["payments-go/Dockerfile"] == "dockerfile"
    assert language["deploy/docker-compose.yml"] == "yaml"
    assert language["db/migrations/001_invoices.sql"] == "sql"
    assert files["invoice-cli/Cargo.toml"].file.kind == "config"
    assert files[f"{JAVA}/service/InvoiceService.java"].file.kind == "source"
    assert not any(ex.warnings for ex in files.values())


# -- TypeScript / TSX ----------------------------------------------------------------------------
def test_typescript_definitions(symbols):
    service = symbols[f"{WEB}/server/services/invoices.ts::InvoiceService"]
    assert service.kind == "class"
    assert service.signature == "export class InvoiceService extends BaseService implements Payable"
    assert service.docstring == "Pays invoices through a gateway and schedules a retry when the card is declined."
    assert service.start_line == 17 and service.text.startswith("/** Pays invoices")  # the JSDoc is part of it
    pay = symbols[f"{WEB}/server/services/invoices.ts::InvoiceService.payInvoice"]
    assert pay.kind == "method" and pay.parent_id == service.id
    assert pay.signature == "async payInvoice(invoice: Invoice): Promise<Receipt | null>"
    assert pay.scope == ("class InvoiceService", "method payInvoice")
    assert symbols[f"{WEB}/server/services/gateway.ts::PaymentGateway"].kind == "interface"
    assert symbols[f"{WEB}/server/services/gateway.ts::PaymentGateway.charge"].kind == "method"
    assert symbols[f"{WEB}/shared/types.ts::InvoiceStatus"].kind == "type"
    assert symbols[f"{WEB}/shared/types.ts::RetryReason"].kind == "enum"
    assert symbols[f"{WEB}/shared/money.ts::MAX_RETRY_ATTEMPTS"].kind == "constant"
    arrow = symbols[f"{WEB}/web/components/InvoiceList.tsx::payInvoice"]  # an arrow function bound to a name
    assert arrow.kind == "function" and arrow.docstring == "Asks the API to pay one invoice."
    assert arrow.signature == "export const payInvoice = async (id: string): Promise<void>"
    assert arrow.qualname == "payments-web.web.components.InvoiceList.payInvoice"
    assert symbols[f"{WEB}/web/components/InvoiceList.tsx::InvoiceList"].kind == "function"  # a TSX component


def test_typescript_imports_and_reexports(files):
    controller = files[f"{WEB}/server/controllers/invoices.ts"]
    assert {(i.module, i.name, i.alias) for i in controller.imports} >= {
        ("../services", "InvoiceService", ""),
        ("./store", "loadInvoice", ""),
        ("express", "Request", ""),
    }
    app = files[f"{WEB}/server/app.ts"]
    assert ("express", "default", "express") in {(i.module, i.name, i.alias) for i in app.imports}
    assert app.exports["default"] == "createApp"
    index = files[f"{WEB}/server/services/index.ts"]
    assert {(i.module, i.name) for i in index.imports} == {("./invoices", "InvoiceService"), ("./gateway", "*")}


def test_typescript_resolution(polyglot):
    _, edges = polyglot
    pay = calls(edges, f"{WEB}/server/controllers/invoices.ts::InvoiceController.pay")
    # `this.service` is typed by the constructor's parameter property
    assert f"{WEB}/server/services/invoices.ts::InvoiceService.payInvoice" in pay
    assert pay[f"{WEB}/server/controllers/store.ts::loadInvoice"].resolved_by == "import"
    # `res: Response` is express's type: a named library target, never an in-repo method
    assert pay["express.Response.json"].dst_label == "External"
    assert pay["express.Response.json"].resolved_by == "import"
    service = calls(edges, f"{WEB}/server/services/invoices.ts::InvoiceService.payInvoice")
    assert f"{WEB}/server/services/gateway.ts::PaymentGateway.charge" in service  # through the interface
    assert f"{WEB}/server/services/invoices.ts::BaseService.audit" in service  # inherited, via this.
    assert service[f"{WEB}/server/services/retry.ts::schedulePaymentRetry"].resolved_by == "import"
    # tsconfig `paths`: @shared/money -> shared/money.ts
    assert f"{WEB}/shared/money.ts::formatCents" in calls(edges, f"{WEB}/web/components/InvoiceList.tsx::InvoiceList")
    assert calls(edges, f"{WEB}/web/components/InvoiceList.tsx::InvoiceList")["react.useState"].dst_label == "External"
    # a JSX element renders its component; HTML elements (<main>, <h1>) are not calls
    app = calls(edges, f"{WEB}/web/App.tsx::App")
    assert set(app) == {f"{WEB}/web/components/InvoiceList.tsx::InvoiceList"}
    # re-exported through services/index.ts
    factory = calls(edges, f"{WEB}/server/controllers/invoices.ts::defaultController")
    assert f"{WEB}/server/services/gateway.ts::StripeGateway" in factory
    assert f"{WEB}/server/services/invoices.ts::InvoiceService.constructor" in factory  # `new` runs it
    service_id = f"{WEB}/server/services/invoices.ts::InvoiceService"
    assert edge(edges, "INHERITS", service_id, f"{WEB}/server/services/invoices.ts::BaseService")
    assert edge(edges, "INHERITS", service_id, f"{WEB}/server/services/invoices.ts::Payable")
    gateway = f"{WEB}/server/services/gateway.ts::"
    assert edge(edges, "INHERITS", gateway + "StripeGateway", gateway + "PaymentGateway")
    assert edge(edges, "IMPORTS", f"{WEB}/server/controllers/invoices.ts", service_id)


# -- JavaScript (CommonJS) -----------------------------------------------------------------------
def test_javascript_commonjs(polyglot, symbols, files):
    _, edges = polyglot
    connect = symbols[f"{WORKER}/src/queue.js::connect"]  # `exports.connect = function connect(...)`
    assert connect.kind == "function" and connect.docstring == "Opens a consumer on the queue."
    start = symbols[f"{WORKER}/src/worker.js::startWorker"]
    assert start.docstring.startswith("Consumes webhook events from the queue")
    assert ("./webhooks", "processWebhook", "") in {(i.module, i.name, i.alias) for i in files[start.path].imports}
    out = calls(edges, start.id)
    assert out[connect.id].resolved_by == "import"  # queue.connect through `const queue = require(...)`
    assert f"{WORKER}/src/webhooks.js::processWebhook" in out
    assert out["consumer.on"].resolved_by == "unresolved"
    script = calls(edges, f"{WORKER}/bin/webhook-worker::<module>")
    assert start.id in script
    dispatch = calls(edges, f"{WORKER}/src/webhooks.js::WebhookProcessor.dispatch")
    assert f"{WORKER}/src/webhooks.js::WebhookProcessor.handleInvoicePaid" in dispatch
    process = calls(edges, f"{WORKER}/src/webhooks.js::processWebhook")
    assert f"{WORKER}/src/webhooks.js::WebhookProcessor.dispatch" in process  # typed by `new WebhookProcessor`
    # `reportFailure` is defined in two files and required from neither: not guessed
    ambiguous = process["reportFailure"]
    assert (ambiguous.dst_label, ambiguous.resolved_by, ambiguous.candidates) == ("External", "ambiguous", 2)
    receipt = calls(edges, f"{WORKER}/src/notifications.js::sendReceipt")
    assert receipt["axios.post"].resolved_by == "import" and receipt["axios.post"].dst_label == "External"


# -- Go ------------------------------------------------------------------------------------------
def test_go_definitions(symbols):
    server = symbols[f"{GO}/server/server.go::Server"]
    assert server.kind == "struct" and server.signature == "type Server struct"
    assert server.docstring == "Server handles payment requests."
    handle = symbols[f"{GO}/server/server.go::Server.HandleCharge"]
    assert handle.kind == "method" and handle.parent_id == server.id
    assert handle.signature == "func (s *Server) HandleCharge(w http.ResponseWriter, r *http.Request)"
    assert handle.start_line == 23 and handle.docstring.startswith("HandleCharge charges an invoice")
    assert handle.qualname == "payments-go.internal.server.Server.HandleCharge"
    routes = symbols[f"{GO}/server/routes.go::Server.Routes"]  # the type lives in server.go
    assert routes.kind == "method" and routes.parent_id == f"{GO}/server/routes.go::<module>"
    assert symbols[f"{GO}/store/store.go::PaymentStore"].kind == "interface"
    assert symbols[f"{GO}/store/store.go::PaymentStore.SavePayment"].kind == "method"
    assert symbols[f"{GO}/store/store.go::<module>"].docstring == "Package store persists payments."


def test_go_resolution(polyglot):
    _, edges = polyglot
    main = calls(edges, "payments-go/cmd/payments/main.go::main")
    assert main[f"{GO}/store/store.go::NewPostgresStore"].resolved_by == "import"  # through go.mod's module path
    assert f"{GO}/server/server.go::NewServer" in main
    assert f"{GO}/server/routes.go::Server.Routes" in main  # srv := server.NewServer(db): *Server
    assert main["net/http.ListenAndServe"].dst_label == "External"
    assert main["net/http.ListenAndServe"].resolved_by == "import"
    handle = calls(edges, f"{GO}/server/server.go::Server.HandleCharge")
    assert handle[f"{GO}/retry/retry.go::SchedulePaymentRetry"].resolved_by == "import"
    assert f"{GO}/store/store.go::PaymentStore.LoadPayment" in handle  # s.store is a store.PaymentStore
    assert f"{GO}/store/store.go::Payment.Declined" in handle  # payment, err := s.store.LoadPayment(...)
    assert f"{GO}/server/server.go::writeJSON" in handle
    retry = calls(edges, f"{GO}/retry/retry.go::SchedulePaymentRetry")
    assert f"{GO}/retry/retry.go::Policy.Backoff" in retry and f"{GO}/store/store.go::PaymentStore.SavePayment" in retry
    webhook = calls(edges, f"{GO}/server/routes.go::Server.HandleWebhook")
    assert f"{GO}/server/routes.go::verifySignature" in webhook
    write = calls(edges, f"{GO}/server/server.go::writeJSON")
    assert all(e.dst_label == "External" for e in write.values())  # library calls only
    assert write["net/http.ResponseWriter.Header().Set"].resolved_by == "import"  # `w http.ResponseWriter`
    routes = calls(edges, f"{GO}/server/routes.go::Server.Routes")
    assert routes["mux.HandleFunc"].resolved_by == "unresolved"  # what http.NewServeMux() returns is not stated
    load = calls(edges, f"{GO}/store/store.go::PostgresStore.LoadPayment")
    assert f"{GO}/store/store.go::baseStore.tableName" in load  # promoted from the embedded struct
    assert edge(edges, "INHERITS", f"{GO}/store/store.go::PostgresStore", f"{GO}/store/store.go::baseStore")
    # interface satisfaction: PostgresStore has LoadPayment and SavePayment, Payment has neither
    satisfies = edge(edges, "INHERITS", f"{GO}/store/store.go::PostgresStore", f"{GO}/store/store.go::PaymentStore")
    assert satisfies is not None and satisfies.resolved_by == "satisfies"
    assert not edge(edges, "INHERITS", f"{GO}/store/store.go::Payment", f"{GO}/store/store.go::PaymentStore")
    imported = {e.dst for e in edges if e.type == "IMPORTS" and e.src == "payments-go/cmd/payments/main.go"}
    assert {f"{GO}/server/server.go", f"{GO}/server/routes.go", f"{GO}/store/store.go", "net/http"} <= imported


# -- Java ----------------------------------------------------------------------------------------
def test_java_definitions_and_overloads(symbols, files):
    base = f"{JAVA}/service/InvoiceService.java::InvoiceService"
    service = symbols[base]
    assert service.qualname == "com.acme.billing.service.InvoiceService"
    assert service.docstring == "Charges invoices through the gateway; a declined card schedules a payment retry."
    assert service.signature == "public class InvoiceService extends AbstractService implements Billable"
    once, loop = symbols[f"{base}.charge"], symbols[f"{base}.charge~2"]  # overloads: distinct ids
    assert once.signature == "public boolean charge(Invoice invoice)" and once.docstring == "Charges once."
    assert once.start_line == 24  # the Javadoc, then @Override
    assert loop.signature == "public boolean charge(Invoice invoice, int maxAttempts)"
    assert symbols[f"{base}.InvoiceService"].kind == "method"  # the constructor
    imports = {(i.module, i.name) for i in files[service.path].imports}
    assert {("com.acme.billing.model", "*"), ("com.acme.billing.util.Money", "format")} <= imports
    assert ("com.acme.billing.gateway", "PaymentGateway") in imports


def test_java_resolution(polyglot):
    _, edges = polyglot
    base = f"{JAVA}/service/InvoiceService.java::InvoiceService"
    assert f"{base}.charge~2" in calls(edges, f"{base}.charge")  # charge(invoice, 1): the two-argument overload
    assert f"{base}.charge" not in calls(edges, f"{base}.charge")
    loop = calls(edges, f"{base}.charge~2")
    assert f"{JAVA}/gateway/PaymentGateway.java::PaymentGateway.charge" in loop  # the field `gateway`
    assert f"{JAVA}/retry/RetryScheduler.java::RetryScheduler.schedule" in loop  # the field `retries`
    assert loop[f"{JAVA}/util/Money.java::Money.format"].resolved_by == "import"  # a static import
    assert f"{JAVA}/service/AbstractService.java::AbstractService.audit" in loop  # inherited, implicit this
    assert f"{JAVA}/model/Invoice.java::Invoice.getAmountCents" in loop  # through the wildcard import
    # `followUp` is a loop variable of unknown type: three `schedule` methods could be meant
    follow = loop["followUp.schedule"]
    assert (follow.dst_label, follow.resolved_by, follow.candidates) == ("External", "unresolved", 3)
    assert edge(edges, "INHERITS", base, f"{JAVA}/service/AbstractService.java::AbstractService")
    assert edge(edges, "INHERITS", base, f"{JAVA}/service/Billable.java::Billable")
    stripe = f"{JAVA}/gateway/StripeGateway.java::StripeGateway"
    assert edge(edges, "INHERITS", stripe, f"{JAVA}/gateway/PaymentGateway.java::PaymentGateway")
    assert (
        calls(edges, f"{JAVA}/retry/RetryScheduler.java::RetryScheduler.backoff")[
            "java.time.Duration.ofMinutes"
        ].resolved_by
        == "import"
    )


# -- Rust ----------------------------------------------------------------------------------------
def test_rust_definitions(symbols, files):
    invoice = symbols[f"{RUST}/billing/invoice.rs::Invoice"]
    assert invoice.kind == "struct" and invoice.docstring == "An invoice to collect."
    assert invoice.start_line == 3 and invoice.text.splitlines()[1] == "#[derive(Debug, Clone)]"
    new = symbols[f"{RUST}/billing/invoice.rs::Invoice.new"]  # a method of the impl block, attached to its type
    assert new.kind == "method" and new.parent_id == invoice.id and new.docstring == "A new open invoice."
    assert new.signature == "pub fn new(id: &str, amount_cents: u64) -> Self"
    assert new.qualname == "billing.invoice.Invoice.new"
    assert symbols[f"{RUST}/retry.rs::Backoff"].kind == "trait"
    assert symbols[f"{RUST}/retry.rs::Backoff.delay_for"].kind == "method"
    assert symbols[f"{RUST}/main.rs::<module>"].docstring.startswith("invoice-cli: charge an invoice")
    uses = {(i.module, i.name) for i in files[f"{RUST}/billing/mod.rs"].imports}
    assert uses == {("crate::retry", "Backoff"), ("crate::retry", "RetryPolicy"), ("self::invoice", "Invoice")}


def test_rust_resolution(polyglot):
    _, edges = polyglot
    main = calls(edges, f"{RUST}/main.rs::main")
    assert main[f"{RUST}/billing/invoice.rs::Invoice.new"].resolved_by == "import"
    assert f"{RUST}/retry.rs::RetryPolicy.default" in main  # from `impl Default for RetryPolicy`
    assert f"{RUST}/billing/mod.rs::charge_with_retry" in main  # billing::charge_with_retry via `mod billing;`
    charge = calls(edges, f"{RUST}/billing/mod.rs::charge_with_retry")
    assert (
        f"{RUST}/retry.rs::RetryPolicy.delay_for" in charge
        and f"{RUST}/billing/invoice.rs::Invoice.try_charge" in charge
    )
    assert charge["std.thread.sleep"].dst_label == "External"
    assert edge(edges, "INHERITS", f"{RUST}/retry.rs::RetryPolicy", f"{RUST}/retry.rs::Backoff")
    display = edge(edges, "INHERITS", f"{RUST}/billing/invoice.rs::Invoice", "std.fmt.Display")
    assert display is not None and display.dst_label == "External"


# -- what the run reports ------------------------------------------------------------------------
def test_no_call_edge_guesses_between_languages(polyglot, symbols):
    _, edges = polyglot
    for e in edges:
        if e.type == "CALLS" and e.dst_label == "Symbol":
            src, dst = symbols[e.src], symbols[e.dst]
            assert src.path.rsplit(".", 1)[-1][:2] == dst.path.rsplit(".", 1)[-1][:2] or "bin/" in src.path, e


def _generic_edges(repo: Path) -> list[Edge]:
    """A small tree's edges from the tree-sitter resolvers alone (no jedi, no compiler)."""
    settings = load_settings(repo, resolver="name", precise="off")
    extractions, _ = extract_repository(settings)
    return resolve_extractions(settings, extractions)[0]


def test_a_required_module_that_is_called_runs_its_export_never_the_file(tmp_path):
    """express's `var View = require("./view"); new View(name)`: the call reaches what the file
    exports (`module.exports = View`); a file whose export cg cannot name leaves the call unresolved.
    A CALLS edge to a File is never made (Kùzu refused to store one, and stopped `cg index` on express)."""
    (tmp_path / "lib" / "middleware").mkdir(parents=True)
    (tmp_path / "lib" / "view.js").write_text(
        "function View(name, options) {\n  this.name = name;\n}\n\n"
        "View.prototype.render = function render(options, callback) {\n  callback(null, this.name);\n};\n\n"
        "module.exports = View;\n"
    )
    (tmp_path / "lib" / "middleware" / "query.js").write_text(
        "var parse = require('qs').parse;\n\n"
        "module.exports = function query(options) {\n"
        "  return function (req, res, next) {\n    req.query = parse(req.url);\n    next();\n  };\n};\n"
    )
    (tmp_path / "lib" / "application.js").write_text(
        "var View = require('./view');\nvar query = require('./middleware/query');\n\n"
        "function render(name, options, callback) {\n  var view = new View(name, options);\n"
        "  view.render(options, callback);\n}\n\n"
        "function lazyrouter(router) {\n  router.use(query({}));\n}\n\n"
        "module.exports = { render: render, lazyrouter: lazyrouter };\n"
    )
    edges = _generic_edges(tmp_path)
    assert not [e for e in edges if e.type == "CALLS" and e.dst_label == "File"]
    assert calls(edges, "lib/application.js::render")["lib/view.js::View"].resolved_by == "import"
    assert calls(edges, "lib/application.js::lazyrouter")["query"].resolved_by == "unresolved"


def test_super_in_a_constructor_reaches_the_base_it_runs(tmp_path):
    """`super(...)` runs the base's constructor: its own when it has one, the class when it has none
    (its implicit constructor, as `new Base()` is answered), and a base from outside by its name
    (`class PaymentDeclined extends Error`, `extends Transform` imported from node:stream)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "errors.ts").write_text(
        'import { Transform } from "node:stream";\n\n'
        "export class PaymentError {\n  code = 402;\n}\n\n"
        "export class CardDeclined extends PaymentError {\n"
        "  constructor(public card: string) {\n    super();\n  }\n}\n\n"
        "export class PaymentDeclined extends Error {\n"
        "  constructor(message: string) {\n    super(message);\n  }\n}\n\n"
        "export class ReceiptStream extends Transform {\n"
        "  constructor() {\n    super({ objectMode: true });\n  }\n}\n\n"
        "export class Ledger {\n  constructor(readonly name: string) {}\n}\n\n"
        "export class MonthlyLedger extends Ledger {\n  constructor() {\n    super('monthly');\n  }\n}\n"
    )
    edges = _generic_edges(tmp_path)

    def supers(cls: str) -> dict[str, str]:
        return {dst: e.resolved_by for dst, e in calls(edges, f"src/errors.ts::{cls}.constructor").items()}

    assert supers("MonthlyLedger") == {"src/errors.ts::Ledger.constructor": "name"}
    assert supers("CardDeclined") == {"src/errors.ts::PaymentError": "name"}
    assert supers("PaymentDeclined") == {"Error": "name"}
    assert supers("ReceiptStream") == {"node:stream.Transform": "import"}
