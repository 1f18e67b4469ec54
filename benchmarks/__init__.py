"""scheduler_perf-style benchmarks: upstream's workloads run through the reference Scheduler.

Run ``python -m benchmarks.scheduler_perf --help``; see benchmarks/README.md for the figures.
"""
