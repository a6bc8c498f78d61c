"""The document API's domain: service keys, documents and their conversion, sharing, comments and the
agents working on a document."""
