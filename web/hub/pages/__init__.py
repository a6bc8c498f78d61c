"""Pages for people on the hub: the review desk (`/review/`), server-rendered HTML outside the API's
route tables."""

from web.hub.pages.review import add_routes

__all__ = ["add_routes"]
