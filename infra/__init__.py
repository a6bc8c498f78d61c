"""What a process runs on, below the composition root: metrics and logging, the machine's shared state and
the supervisor of a machine's processes, and the transport and hub of live events. web/, workers/ and
scheduler/ import it; it imports only domain/ (runtime/process.py composes a process from all of them)."""
