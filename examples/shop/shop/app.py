"""Application wiring."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional

from .billing.subscriptions import Subscription
from .config import Settings, load_settings
from .http.routes import Router, router
from .payments.gateway import FakeStripeClient, StripeGateway
from .payments.retry import RetryPolicy
from .payments.service import PaymentService
from .queue import JobQueue
from .webhooks.stripe_webhooks import WebhookHandler, configure_webhooks


@dataclass
class App:
    settings: Settings
    router: Router
    queue: JobQueue
    service: PaymentService
    webhook_handler: WebhookHandler
    subscriptions: Dict[str, Subscription] = field(default_factory=dict)


def create_app(env: Optional[Mapping[str, str]] = None) -> App:
    """Build the service object graph from environment settings."""
    settings = load_settings(env)
    gateway = StripeGateway(FakeStripeClient(settings.stripe_api_key))
    queue = JobQueue()
    policy = RetryPolicy.from_settings(settings)
    service = PaymentService(gateway, queue, policy)
    subscriptions: Dict[str, Subscription] = {}
    handler = WebhookHandler(service, subscriptions)
    configure_webhooks(handler, settings.stripe_webhook_secret)
    return App(
        settings=settings,
        router=router,
        queue=queue,
        service=service,
        webhook_handler=handler,
        subscriptions=subscriptions,
    )
