"""Minimal HTTP plumbing used by the webhook endpoints."""
