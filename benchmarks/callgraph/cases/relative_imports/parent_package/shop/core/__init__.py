# Core domain logic.
