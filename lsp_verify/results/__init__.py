"""What a run leaves for the client: diagnostics, streamed failures, the run's view."""
