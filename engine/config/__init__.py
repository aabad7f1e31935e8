"""The run's configuration: its options and settings, the plan of tests, shards, and the
requirements a run's virtualenv installs."""
