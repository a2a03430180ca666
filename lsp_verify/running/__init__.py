"""Running a plan: steps in a process group, their output, and nothing left behind."""
