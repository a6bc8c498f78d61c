"""How much a person may write where she decides: one place for the review and work APIs' bodies and for
the desk's forms, which check the same bounds (and say so) before anything is sent."""

NOTE_MAX = 2000  # a note on a decision: a proposal's, a topic's approval policy's, a curator's
ANSWER_MAX = 5000  # a reviewer's answer to an escalation or an agent's question
