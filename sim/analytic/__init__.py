"""The analytic engine: closed-form expectations for one agent (``agent``) and the fleet as a
queueing network (``fleet``)."""
