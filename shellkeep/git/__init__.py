"""Git facts and snapshots: the top-level and remote, the project identity, checkpoint trees."""
