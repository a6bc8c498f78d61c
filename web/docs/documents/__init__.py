"""Documents and their comments: upload, list, metadata, approval policy, download."""
