"""Autoscaler decisions from a cluster dump, with cluster-autoscaler's semantics (issue 38; in progress).

- :mod:`.estimator`: the binpacking estimator (how many nodes of a node group the pending pods need);
- :mod:`.expander`: least-waste, most-pods, price, priority and random choices among node groups;
- :mod:`.drain`: which pods block removing a node (cluster-autoscaler's drain rules) and node utilization.

Each module ports cluster-autoscaler's behaviour from its source, with its test tables as data under
tests/fixtures/autoscaler/ (case names kept).
"""
