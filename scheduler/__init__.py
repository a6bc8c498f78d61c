"""APScheduler jobs that call domain sweeps; only the leader process runs them."""
