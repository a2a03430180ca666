"""The server's state and what triggers a run: folders, their verifiers, watched files."""
