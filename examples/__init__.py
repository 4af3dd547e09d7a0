"""Examples for connector authors (see ``examples/connectors``)."""
