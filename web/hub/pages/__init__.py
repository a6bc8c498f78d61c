"""Pages for people on the hub: the review desk (`/review/`), server-rendered HTML outside the API's
route tables; web/app.py adds them with `review.add_routes`."""
