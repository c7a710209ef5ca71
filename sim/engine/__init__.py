"""The engine: streams, draws, transports, connections, pools, the DES, records, analytic."""
