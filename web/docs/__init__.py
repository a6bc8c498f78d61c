"""The document collaboration API (spec/document-api.md), served on port 8081."""
