"""Context compaction and tool-output truncation: how an agent bounds its history.

Before sending a request, a client that compacts checks the prompt it is about
to send (instructions, tool definitions and the conversation); at or above
``threshold_tokens`` it first sends a compaction request over the same
connection: the whole history in, a summary of ``summary_tokens`` out.  The
request that follows starts a new chain with the compacted context: the user's
task, the summary, and the last turn's items (the call it answers and that
call's outputs).  Tool outputs are cut to ``tool_output_cap_tokens`` per call
before they enter the history.
"""

from __future__ import annotations

from models.fields import Section, param
from models.strict import Float


class Compaction(Section):
    """Bounds on the history: compaction near a token threshold, a cap per tool output."""

    threshold_tokens: Float = param(
        "prompt tokens (instructions, tool definitions, conversation) at or above which the "
        "client compacts the history before its next request; 0: never",
        "FACTS (third-party): Codex compacts at about 95% of a 272k effective window "
        "(258,400 tokens), older versions near 220k; 0 in the presets",
        ge=0,
        le=1e7,
    )
    summary_tokens: Float = param(
        "tokens the compaction request outputs: the summary that replaces the history "
        "(the user's task and the last turn's items are kept besides)",
        "assumption: a handoff summary of a few thousand tokens",
        ge=1,
        le=1e6,
    )
    tool_output_cap_tokens: Float = param(
        "tokens a tool call's output is truncated to before it is sent; 0: no cap",
        "assumption: coding agents truncate long command output (Codex keeps about 10k "
        "tokens, third-party); 0 in the presets",
        ge=0,
        le=1e7,
    )

    @property
    def compacts(self) -> bool:
        return self.threshold_tokens > 0

    @property
    def caps_tool_output(self) -> bool:
        return self.tool_output_cap_tokens > 0
