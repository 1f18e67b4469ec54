"""The scheduler's state: what it knows of the cluster between and during cycles.

- :mod:`.node_info`: a node and its pods with their aggregates (NodeInfo, PodInfo, Resource), and the change
  journal that lets a reader find the few NodeInfos changed since it last looked;
- :mod:`.snapshot`: the NodeInfos a cycle reads (Snapshot) and the other objects (ObjectStore);
- :mod:`.cache`: the scheduler cache (assumed and bound pods) that each cycle's Snapshot is brought up to date from;
- :mod:`.queue`: the scheduling queue (active, backoff and unschedulable pods; gated pods);
- :mod:`.pod_index`: pods by label over a node list, for PodTopologySpread and InterPodAffinity;
- :mod:`.podgroups`: the pod groups' states (upstream's workload manager), read by GangScheduling.

NodeInfo, PodInfo, Resource and Snapshot are also exported by ``scheduling_framework`` (the plugin contract).
"""
