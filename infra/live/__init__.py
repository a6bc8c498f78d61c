"""Live events: every committed event handed, once and in order, to the listeners of its stream in every web
process (the SSE event streams of web/kernel/sse.py, the MCP watcher).

- `hub`: one process's fan-out (`LiveEvents`): the streams its listeners follow, what it has delivered of
  each, and the database reads that fill any gap; each listener has a bounded queue.
- `transport`: how a commit in one process reaches the others: Redis pub/sub when configured (every process
  publishes; each web process holds one subscription), else, among the processes of one `concord serve`/
  `concord web`, the machine's commit counters (infra/machine.py), which a web process with listeners
  watches; a process's own commits reach its own listeners directly (domain/kernel/event_feed.py).
"""
