"""Recorded tool outputs and the tables of what each must give."""
