"""Agents on a document: joining, the records they keep and the PACT operations, under
/api/tap/{docId}/... and /api/pact/{docId}/...."""
