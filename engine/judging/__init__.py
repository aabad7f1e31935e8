"""Judging: the session (asking, bookkeeping, recording) and the judge, the minimizer and pack
search, the census, where failures reproduce, a whole run, other runs' counterexamples (replays)."""
