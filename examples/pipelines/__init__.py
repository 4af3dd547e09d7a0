"""User pipelines tested as they are, fed by the harness's sources (see ``orders``)."""
