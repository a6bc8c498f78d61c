"""The knowledge-graph hub (spec/knowledge-graph-api.md), served on port 8080."""
