"""Which command runs, and how a run is arranged: the plan, the detector, the steps."""
