"""Registers every Axiom route module on the hub (keys first: the others use its helpers)."""

from web.hub.axiom import facts as axiom_facts  # noqa: F401 - routes
