"""``loopbudget record``: a recording reverse proxy for the Responses API.

Any agent (Codex, an Agents SDK app, a hand-written loop) pointed at the proxy's
base URL talks to its upstream unchanged; the proxy times each request (start,
first output event, end), reads what the service says about itself (usage,
``openai-processing-ms``, the WebSocket timing event), groups requests into
rollouts by their chains (``previous_response_id``, or the tool outputs a
resent history answers) and writes the per-request table as OTLP JSON GenAI spans
(``sim.report.otel``).  ``exchange`` is one request, ``chains`` the grouping,
``proxy`` the forwarding (``body`` reads what passes over HTTP, ``websocket`` a
relayed socket), ``service`` the running server.  Its third-party
packages are the ``testbed`` group's.
"""
