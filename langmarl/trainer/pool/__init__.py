"""Language space by a Pareto pool of candidates: demonstrations from the run's own
episodes, numeric credit, merges (``search: "pool"``; :class:`PoolTrainer`)."""
