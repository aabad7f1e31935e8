"""The run's configuration: its options and settings (options), --isa (isa), the tests a run's
settings give and their schedules (plan, schedules), and --shard (shards)."""
