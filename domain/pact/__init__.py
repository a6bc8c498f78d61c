"""What Concord implements of the PACT protocol (v2.0.3), described for its clients: the profile."""
