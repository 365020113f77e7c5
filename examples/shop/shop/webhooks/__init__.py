"""Inbound webhooks from the payment provider."""
