"""Judging: the session that asks cases and judges the replies, the judge, the minimizer, the
census, a whole run, and other runs' counterexamples asked again (replays)."""
