"""cluster-autoscaler's expanders: which node group grows when several can take the pending pods.

Ported from kubernetes/autoscaler ``cluster-autoscaler/expander`` (random, mostpods, waste, price, priority and the
factory's chain). Each expander is a filter: it narrows the options to the equally best ones. :func:`choose` chains
them as ``--expander=priority,least-waste`` does (a filter leaving one option decides) and a random pick breaks the
ties left. The functions keep CA's comparisons, ties and float arithmetic (a zero divisor gives inf or nan as in Go).

What differs from cluster-autoscaler, and why:

- An :class:`Option` names its node group and carries the group's template Node, the keys of the pods it helps and
  their summed requests, where CA has a cloud-provider node group, Pod objects and a NodeInfo map.
- least-waste reads the template's ``status.capacity`` as CA does, falling back to ``allocatable`` for a resource the
  capacity lacks (node-group files often give allocatable only). The requests are what the caller summed.
- price: CA asks the cloud provider's pricing model. The default model here (:class:`GroupPricing`) prices a node at
  its group's ``pricePerHour`` (a group without one cannot be priced and is left out, as CA leaves out an option whose
  node it cannot price) and the pods at GCE's reference per-cpu, per-GiB and per-GPU hourly prices (CA's GCE
  ``PodPrice``: the requests on a perfectly matching machine). Any :class:`PricingModel` can replace it. The preferred
  node follows the cluster's node count (CA's ``SimplePreferredNodeProvider``) when ``cluster_size`` is given, CA's
  fallback (4 cpu) otherwise; unfitness is CA's cpu-only ``SimpleNodeUnfitness``. A GPU node (a GPU vendor resource in
  its allocatable, or one of ``gpu_labels``: CA checks its provider's one label) gets CA's fixed unfitness. Groups exist
  unless an option says otherwise (CA doubles a not-yet-created group's score).
- priority: the ConfigMap's ``priorities`` value (YAML text or the mapping it holds) is passed in, not watched. An
  invalid one is an error naming the field; ``priority(..., strict=False)`` ignores it with CA's warning instead, as CA
  does. CA's events are the ``warn`` callback's (reason, message) pairs.
- random: Python's ``random.Random(seed)``, not Go's math/rand: a seed does not pick what CA would.
- The gRPC expander is not ported (no external service here).
"""

from __future__ import annotations

import math
import random as _random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

import attrs
import yaml

from scheduling_framework.api.frozen import freeze_map
from scheduling_framework.api.node import Node
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.errors import ValidationError

RANDOM = "random"
MOST_PODS = "most-pods"
LEAST_WASTE = "least-waste"
PRICE = "price"
PRIORITY = "priority"
#: the expanders ported, by their ``--expander`` names (CA's order)
EXPANDERS = (RANDOM, MOST_PODS, LEAST_WASTE, PRICE, PRIORITY)
#: expanders that always leave one option (CA's ``Strategy``): none may follow them in a chain
_SINGLE_RESULT = frozenset({RANDOM})

#: GCE's reference prices (USD per hour) that CA's GCE pricing model charges pods by
CPU_PRICE_PER_HOUR = 0.033174
MEMORY_PRICE_PER_HOUR_PER_GIB = 0.004446
GPU_PRICE_PER_HOUR = 0.700
_GIB = 1024 ** 3
_MIB = 1024 ** 2
#: CA's stabilization pod (0.5 cpu, 500Mi): priced into both sides of the price ratio to damp it
STABILIZATION_POD = (500, 500 * _MIB)
#: CA's preferred node when none can be derived from the cluster: 4 cpu, 16Gi
DEFAULT_PREFERRED_NODE = (4000, 16 * _GIB)
#: the score factor for a node group that does not exist yet
NOT_EXIST_COEFFICIENT = 2.0
#: the unfitness every GPU node group gets: never picked for pods that do not need it, cluster shape ignored
GPU_UNFITNESS_OVERRIDE = 1000.0
#: the GPU vendor resources CA knows (a node with one of them allocatable is a GPU node)
GPU_RESOURCES = ("nvidia.com/gpu", "habana.ai/gaudi", "gpu.intel.com/xe", "amd.com/gpu", "microsoft.com/directx")
#: node labels naming an accelerator, one per cloud provider (GCE, AWS); CA checks its own provider's
GPU_LABELS = ("cloud.google.com/gke-accelerator", "k8s.amazonaws.com/accelerator")

#: the ConfigMap and key CA reads the priority expander's configuration from (named in its messages)
PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"
PRIORITY_CONFIGMAP_KEY = "priorities"

Filter = Callable[[list["Option"]], list["Option"]]
Warn = Callable[[str, str], None]


class ExpanderError(ValidationError):
    """An expander chain cluster-autoscaler refuses: a name it does not know, one given twice, one after random."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "expander")


class PrioritiesError(ValidationError):
    """The priority expander's configuration is invalid; ``path`` names the field (``priorities[10][0]``)."""


def _keys(keys: Iterable[str]) -> tuple[str, ...]:
    return tuple(keys)


@attrs.frozen
class Option:
    """A node group that can help: how many nodes it would add and which pending pods they would take.

    ``template`` is the group's template node (its cpu and memory weigh least-waste and price), ``pod_requests`` the
    pods' requests summed per resource, ``exists`` False for a group not created yet (price doubles its score)."""

    node_group: str
    node_count: int
    pods: tuple[str, ...] = attrs.field(default=(), converter=_keys)
    template: Node | None = None
    price_per_hour: float | None = None
    priority: int | None = None
    pod_requests: Mapping[str, Quantity] = attrs.field(factory=dict, converter=freeze_map, hash=False)
    exists: bool = True


# --- arithmetic as Go's float64 ---------------------------------------------------------------------------------

def _div(a: float, b: float) -> float:
    """``a / b`` as Go divides float64s: a zero divisor gives ±inf, or nan for 0/0."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _max(a: float, b: float) -> float:
    """Go's ``math.Max``: +inf wins over nan, nan over any other number."""
    if a == math.inf or b == math.inf:
        return math.inf
    if math.isnan(a) or math.isnan(b):
        return math.nan
    return max(a, b)


def _node_amount(node: Node, resource: str, *, milli: bool) -> int:
    """The node's capacity of ``resource`` (its allocatable when capacity lacks it), in millis or units."""
    q = node.status.capacity.get(resource)
    if q is None:
        q = node.status.allocatable.get(resource)
    if q is None:
        return 0
    return q.milli_value() if milli else q.value()


def _requested(option: Option, resource: str, *, milli: bool) -> int:
    q = option.pod_requests.get(resource)
    if q is None:
        return 0
    return q.milli_value() if milli else q.value()


# --- the expanders ----------------------------------------------------------------------------------------------

def random(options: Sequence[Option], *, seed: int | None = None,
           rng: _random.Random | None = None) -> list[Option]:
    """One option picked at random (none of none): CA's random expander and every chain's tie-break."""
    if not options:
        return []
    r = rng if rng is not None else _random.Random(seed)
    return [options[r.randrange(len(options))]]


def most_pods(options: Sequence[Option]) -> list[Option]:
    """The options helping the most pods."""
    most = 0
    best: list[Option] = []
    for o in options:
        if len(o.pods) == most:
            best.append(o)
            continue
        if len(o.pods) > most:
            most = len(o.pods)
            best = [o]
    return best


def waste_score(option: Option) -> float | None:
    """The fraction of cpu plus the fraction of memory the new nodes leave unrequested (None without a template)."""
    if option.template is None:
        return None
    avail_cpu = _node_amount(option.template, "cpu", milli=True) * option.node_count
    avail_mem = _node_amount(option.template, "memory", milli=False) * option.node_count
    wasted_cpu = _div(avail_cpu - _requested(option, "cpu", milli=True), avail_cpu)
    wasted_mem = _div(avail_mem - _requested(option, "memory", milli=False), avail_mem)
    return wasted_cpu + wasted_mem


def least_waste(options: Sequence[Option]) -> list[Option]:
    """The options wasting the least cpu and memory (:func:`waste_score`); options without a template are left out,
    as CA leaves out a group it has no node info for."""
    best: list[Option] = []
    best_score = 0.0
    for o in options:
        score = waste_score(o)
        if score is None:
            continue
        if not best or score < best_score:
            best, best_score = [o], score
        elif score == best_score:
            best.append(o)
    return best


class PricingModel(Protocol):
    """What the price expander asks a cloud provider; None where a price is unknown (that option is left out)."""

    def node_price(self, option: Option) -> float | None:
        """One of the option's nodes for an hour."""

    def pods_price(self, option: Option) -> float | None:
        """The option's pods together for an hour."""

    def stabilization_price(self) -> float | None:
        """CA's stabilization pod (:data:`STABILIZATION_POD`) for an hour; None: priced without stabilization."""


def requests_price(cpu_millis: int, memory_bytes: int, gpus_millis: int = 0) -> float:
    """An hour of these requests at GCE's reference prices (CA's GCE pod price)."""
    return (cpu_millis / 1000.0 * CPU_PRICE_PER_HOUR + memory_bytes / _GIB * MEMORY_PRICE_PER_HOUR_PER_GIB
            + gpus_millis / 1000.0 * GPU_PRICE_PER_HOUR)


class GroupPricing:
    """The default pricing: a node at its group's ``pricePerHour``, pods at GCE's reference prices."""

    def node_price(self, option: Option) -> float | None:
        return option.price_per_hour

    def pods_price(self, option: Option) -> float | None:
        return requests_price(_requested(option, "cpu", milli=True), _requested(option, "memory", milli=False),
                              _requested(option, "nvidia.com/gpu", milli=True))

    def stabilization_price(self) -> float | None:
        return requests_price(*STABILIZATION_POD)


def preferred_node(cluster_size: int) -> tuple[int, int]:
    """CA's preferred node (cpu millis, memory bytes) for a cluster of ``cluster_size`` nodes: twice as big each time
    the cluster grows about threefold."""
    mb = 1024 * 1024
    for most, cores in ((2, 1), (6, 2), (20, 4), (60, 8), (200, 16)):
        if cluster_size <= most:
            return cores * 1000, cores * 3750 * mb
    return 32 * 1000, 32 * 3750 * mb


def node_unfitness(preferred_cpu_millis: int, cpu_millis: int) -> float:
    """How far a node's cpu is from the preferred node's, as a ratio >= 1 (1: the preferred size)."""
    return _max(_div(preferred_cpu_millis, cpu_millis), _div(cpu_millis, preferred_cpu_millis))


def node_has_gpu(node: Node, gpu_labels: Iterable[str] = GPU_LABELS) -> bool:
    """A GPU label, or a GPU vendor resource allocatable and non-zero."""
    if any(label in node.metadata.labels for label in gpu_labels):
        return True
    return any((q := node.status.allocatable.get(r)) is not None and not q.is_zero() for r in GPU_RESOURCES)


def price_score(option: Option, pricing: PricingModel, preferred_cpu_millis: int, stabilization: float,
                gpu_labels: Iterable[str] = GPU_LABELS) -> float | None:
    """The option's price score (lower is better): how well the money is spent times how well the node fits; None
    when the option cannot be priced or has no template."""
    if option.template is None:
        return None
    node_price = pricing.node_price(option)
    if node_price is None:
        return None
    pods_price = pricing.pods_price(option)
    if pods_price is None:
        return None
    ratio = _div(node_price * option.node_count + stabilization, pods_price + stabilization)
    unfitness = node_unfitness(preferred_cpu_millis, _node_amount(option.template, "cpu", milli=True))
    # the more nodes are added, the less the node's own size matters
    suppressed = (unfitness - 1.0) * (1.0 - math.tanh((option.node_count - 1) / 15.0)) + 1.0
    if node_has_gpu(option.template, gpu_labels):
        suppressed = GPU_UNFITNESS_OVERRIDE
    score = suppressed * ratio
    if not option.exists:
        score *= NOT_EXIST_COEFFICIENT
    return score


def price(options: Sequence[Option], *, pricing: PricingModel | None = None, cluster_size: int | None = None,
          preferred_cpu_millis: int | None = None, gpu_labels: Iterable[str] = GPU_LABELS) -> list[Option]:
    """The options with the lowest :func:`price_score`. The preferred node: ``preferred_cpu_millis``, else CA's for
    ``cluster_size`` nodes, else CA's default (4 cpu)."""
    model: PricingModel = pricing if pricing is not None else GroupPricing()
    if preferred_cpu_millis is None:
        preferred_cpu_millis = (preferred_node(cluster_size) if cluster_size is not None
                                else DEFAULT_PREFERRED_NODE)[0]
    stabilization = model.stabilization_price()
    labels = tuple(gpu_labels)
    best: list[Option] = []
    best_score = 0.0
    for o in options:
        score = price_score(o, model, preferred_cpu_millis, 0.0 if stabilization is None else stabilization, labels)
        if score is None:
            continue
        if not best or score == best_score:
            best.append(o)
            best_score = score
        elif score < best_score:
            best, best_score = [o], score
    return best


# --- priority ---------------------------------------------------------------------------------------------------

def _compile(pattern: str) -> tuple[Any, str | None]:
    from scheduling_framework.dra.celeval import _compiled  # RE2 as Go's regexp, with Go's error texts

    return _compiled(pattern)


def _priority_key(key: object) -> int:
    """A priority: an integer, or a string of one (YAML/JSON object keys), as Go decodes ``map[int][]string``."""
    if isinstance(key, int) and not isinstance(key, bool):
        return key
    if isinstance(key, str):
        text = key[1:] if key[:1] in "+-" else key
        if text.isascii() and text.isdigit():
            return int(key)
    raise PrioritiesError(f"priority {key!r} is not an integer", PRIORITY_CONFIGMAP_KEY)


def parse_priorities(config: str | Mapping[Any, Any] | None) -> dict[int, tuple[str, ...]]:
    """Priority -> the regular expressions (RE2, Go's syntax) of the node group names it covers, checked.

    ``config`` is the ConfigMap's ``priorities`` value: YAML text or the mapping it holds, e.g.
    ``{10: [".*t2\\\\.large.*"], 50: [".*m4\\\\.4xlarge.*"]}``."""
    field = PRIORITY_CONFIGMAP_KEY
    if config is None or config == "":
        raise PrioritiesError(f"priority configuration in {PRIORITY_CONFIGMAP} configmap is empty; please provide "
                              "valid configuration", field)
    if isinstance(config, str):
        try:
            config = yaml.safe_load(config)
        except yaml.YAMLError as e:
            raise PrioritiesError(f"Can't parse YAML with priorities in the configmap: {e}", field) from None
        if config is None:
            return {}
    if not isinstance(config, Mapping):
        raise PrioritiesError(f"expected a mapping of priority to a list of regular expressions, got "
                              f"{type(config).__name__}", field)
    out: dict[int, tuple[str, ...]] = {}
    for key, patterns in config.items():
        prio = _priority_key(key)
        path = f"{field}[{prio}]"
        if prio in out:
            raise PrioritiesError(f"priority {prio} is given twice", path)
        if patterns is None:
            patterns = []
        if isinstance(patterns, (str, bytes)) or not isinstance(patterns, Sequence):
            raise PrioritiesError(f"expected a list of regular expressions, got {type(patterns).__name__}", path)
        for i, p in enumerate(patterns):
            if not isinstance(p, str):
                raise PrioritiesError(f"expected a regular expression (a string), got {type(p).__name__}",
                                      f"{path}[{i}]")
            _, err = _compile(p)
            if err is not None:
                raise PrioritiesError(f"Can't compile regexp rule for priority {prio} and rule {p}: {err}",
                                      f"{path}[{i}]")
        out[prio] = tuple(patterns)
    return out


def priority(options: Sequence[Option], priorities: str | Mapping[Any, Any] | None, *, warn: Warn | None = None,
             strict: bool = True) -> list[Option]:
    """The options whose node group matches the highest priority (a regular expression found in its name).

    Groups no expression matches are left out; when no group matches, every option stays. An invalid
    configuration raises :class:`PrioritiesError`, or with ``strict=False`` leaves every option, as CA does."""

    def _warn(reason: str, message: str) -> None:
        if warn is not None:
            warn(reason, message)

    if not options:
        return []
    if priorities is None:
        return list(options)  # CA without its ConfigMap: nothing filtered
    try:
        prios = parse_priorities(priorities)
    except PrioritiesError as e:
        if strict:
            raise
        _warn("PriorityConfigMapInvalid", f"Wrong configuration for priority expander: {e.detail}. Ignoring update.")
        return list(options)
    highest = -1
    best: list[Option] = []
    for o in options:
        found = False
        for prio, patterns in prios.items():
            if not any(_compile(p)[0].search(o.node_group) is not None for p in patterns):
                continue
            found = True
            if prio < highest:
                continue
            if prio > highest:
                highest, best = prio, []
            best.append(o)
        if not found:
            _warn("PriorityConfigMapNotMatchedGroup", f"Priority expander: node group {o.node_group} not found in "
                                                      "priority expander configuration. The group won't be used.")
    if not best:
        _warn("PriorityConfigMapNoGroupMatched", "Priority expander: no priorities info found for any of the "
                                                 "expansion options. No options filtered.")
        return list(options)
    return best


def priorities_from_options(options: Iterable[Option]) -> dict[int, list[str]] | None:
    """Each option's node group (its whole name) at the option's own priority; None when no option has one."""
    out: dict[int, list[str]] = {}
    for o in options:
        if o.priority is not None:
            out.setdefault(o.priority, []).append(f"^{_escape(o.node_group)}$")
    return out or None


def _escape(name: str) -> str:
    return "".join("\\" + c if c in r"\.+*?()|[]{}^$" else c for c in name)


# --- the chain --------------------------------------------------------------------------------------------------

def check_expanders(names: Sequence[str]) -> tuple[str, ...]:
    """The chain as given, checked as CA's factory does: known names, each once, none after ``random``."""
    if not names:
        raise ExpanderError(f"no expander given; known: {', '.join(EXPANDERS)}")
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise ExpanderError(f"Expander {name} was specified multiple times, each expander must not be specified "
                                "more than once")
        if i and names[i - 1] in _SINGLE_RESULT:
            raise ExpanderError(f"Expander {name} came after an expander {names[i - 1]} that will always return only "
                                f"one result, this is not allowed since {name} will never be used")
        if name not in EXPANDERS:
            raise ExpanderError(f"Expander {name} not supported; known: {', '.join(EXPANDERS)}")
        seen.add(name)
    return tuple(names)


def chain(options: Sequence[Option], filters: Sequence[Filter],
          fallback: Callable[[list[Option]], Option | None]) -> Option | None:
    """Each filter narrows the options in turn, the first to leave exactly one decides; ``fallback`` picks from
    what the last leaves (CA's chain strategy)."""
    current = list(options)
    for f in filters:
        current = f(current)
        if len(current) == 1:
            return current[0]
    return fallback(current)


def choose(options: Sequence[Option], expanders: Sequence[str], *, seed: int | None = None,
           priorities: str | Mapping[Any, Any] | None = None, pricing: PricingModel | None = None,
           cluster_size: int | None = None, preferred_cpu_millis: int | None = None,
           gpu_labels: Iterable[str] = GPU_LABELS, warn: Warn | None = None,
           rng: _random.Random | None = None) -> Option | None:
    """The option the ``--expander`` chain picks (None when none is left): each expander narrows the options and a
    random pick (``seed``, or ``rng``) breaks the ties left.

    ``priorities``: the priority ConfigMap's ``priorities`` (YAML text or mapping); without it, each option's own
    ``priority`` ranks its group. The price keywords are :func:`price`'s. Errors: :class:`ExpanderError`,
    :class:`PrioritiesError`."""
    names = check_expanders(expanders)
    r = rng if rng is not None else _random.Random(seed)
    prios: str | Mapping[Any, Any] | None = None
    if PRIORITY in names:
        prios = priorities if priorities is not None else priorities_from_options(options)
        if priorities is not None:
            parse_priorities(priorities)  # refuse a bad configuration even when there is nothing to choose from
    labels = tuple(gpu_labels)
    filters: list[Filter] = []
    for name in names:
        if name == RANDOM:
            filters.append(lambda opts: random(opts, rng=r))
        elif name == MOST_PODS:
            filters.append(most_pods)
        elif name == LEAST_WASTE:
            filters.append(least_waste)
        elif name == PRICE:
            filters.append(lambda opts: price(opts, pricing=pricing, cluster_size=cluster_size,
                                              preferred_cpu_millis=preferred_cpu_millis, gpu_labels=labels))
        else:
            filters.append(lambda opts: priority(opts, prios, warn=warn))
    # the chain's fallback: CA's random strategy
    return chain(options, filters, lambda opts: next(iter(random(opts, rng=r)), None))


__all__ = [
    "DEFAULT_PREFERRED_NODE", "EXPANDERS", "GPU_LABELS", "GPU_RESOURCES", "GPU_UNFITNESS_OVERRIDE", "LEAST_WASTE",
    "MOST_PODS", "NOT_EXIST_COEFFICIENT", "PRICE", "PRIORITY", "RANDOM", "STABILIZATION_POD", "ExpanderError",
    "GroupPricing", "Option", "PricingModel", "PrioritiesError", "chain", "check_expanders", "choose",
    "least_waste", "most_pods", "node_has_gpu", "node_unfitness", "parse_priorities", "preferred_node", "price",
    "price_score", "priorities_from_options", "priority", "random", "requests_price", "waste_score",
]
