"""Concord's business rules, free of any web, queue or scheduler framework."""
