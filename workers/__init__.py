"""Dramatiq broker set-up and the thin actors that run domain jobs."""
