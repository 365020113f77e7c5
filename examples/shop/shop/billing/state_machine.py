"""Subscription lifecycle state machine."""

from __future__ import annotations

import enum
import logging
from typing import Any, Dict, FrozenSet, Generic, Hashable, Mapping, TypeVar

from ..errors import InvalidTransitionError

logger = logging.getLogger(__name__)

S = TypeVar("S", bound=Hashable)


class SubscriptionState(str, enum.Enum):
    TRIALING = "trialing"
    ACTIVE = "active"
    PAST_DUE = "past_due"
    CANCELED = "canceled"


ALLOWED_TRANSITIONS: Dict[SubscriptionState, FrozenSet[SubscriptionState]] = {
    SubscriptionState.TRIALING: frozenset({SubscriptionState.ACTIVE, SubscriptionState.CANCELED}),
    SubscriptionState.ACTIVE: frozenset({SubscriptionState.PAST_DUE, SubscriptionState.CANCELED}),
    SubscriptionState.PAST_DUE: frozenset({SubscriptionState.ACTIVE, SubscriptionState.CANCELED}),
    SubscriptionState.CANCELED: frozenset(),
}


class StateMachine(Generic[S]):
    """Generic table-driven state machine.

    Subclasses provide the transition table and may override :meth:`on_enter`
    to run side effects after a state change.
    """

    def __init__(self, transitions: Mapping[S, FrozenSet[S]]) -> None:
        self.transitions = transitions

    def can_transition(self, current: S, target: S) -> bool:
        return target in self.transitions.get(current, frozenset())

    def advance(self, subject: Any, target: S) -> S:
        """Move ``subject.state`` to ``target`` or raise InvalidTransitionError."""
        current = subject.state
        if current == target:
            return current
        if not self.can_transition(current, target):
            raise InvalidTransitionError(f"cannot move from {current} to {target}")
        subject.state = target
        self.on_enter(subject, current, target)
        return target

    def on_enter(self, subject: Any, previous: S, state: S) -> None:
        """Hook called after ``subject`` entered ``state``. No-op by default."""


class SubscriptionStateMachine(StateMachine[SubscriptionState]):
    def __init__(self) -> None:
        super().__init__(ALLOWED_TRANSITIONS)

    def on_enter(self, subject: Any, previous: SubscriptionState, state: SubscriptionState) -> None:
        logger.info("subscription %s: %s -> %s", subject.id, previous.value, state.value)
        if state is SubscriptionState.CANCELED:
            subject.cancel_at_period_end = False
        if state is SubscriptionState.ACTIVE and previous is SubscriptionState.PAST_DUE:
            subject.failed_payment_count = 0


_MACHINE = SubscriptionStateMachine()


def transition(subscription: Any, new_state: SubscriptionState) -> SubscriptionState:
    """Move ``subscription`` to ``new_state`` using the shared machine."""
    return _MACHINE.advance(subscription, new_state)
