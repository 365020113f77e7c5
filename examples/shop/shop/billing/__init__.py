"""Billing domain: invoices, coupons and subscriptions."""
