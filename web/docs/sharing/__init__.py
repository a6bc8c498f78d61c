"""Share links: the owner's API, the token holder's API and the review page."""
