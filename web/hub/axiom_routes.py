"""Registers every Axiom route module on the hub (keys first: the others use its helpers)."""

from web.hub import axiom_facts, axiom_keys, axiom_legislation, axiom_resolve  # noqa: F401 - routes
