"""Command-line entry points (``folkscope``, ``run_acs_benchmark``, ``download_models``)."""
