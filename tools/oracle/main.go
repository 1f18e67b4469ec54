// oracle: evaluate upstream kube-scheduler (v1.35.4, vendored) default-profile plugins for one pending
// pod against a cluster YAML. Prints JSON {"filter": {node: {code, plugin, reasons}},
// "scores": {node: {plugin: normalizedScore}}, "prefilter": {...}}.
//
// Filter runs on EVERY node (no numFeasibleNodesToFind cut). PreFilter status / PreFilterResult are
// applied to nodes as schedule_one.go findNodesThatFitPod does. Scores come from RunScorePlugins
// (after NormalizeScore, weight applied) divided back by the plugin's profile weight.
//
// Usage: oracle CLUSTER.yaml [-disable Plugin1,Plugin2] [-feature-gates A=true,B=false]
//
// This copy (tools/oracle/main.go) extends ../shared/upstream-go/oracle/main.go for issue 41: -feature-gates,
// and the DeviceClass handler that feeds DRA's extended-resource cache. tools/oracle/build.sh builds it
// against v1.35.4 and v1.36.2 (DeviceTaintRules served as v1alpha3 / v1beta2).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"math"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
	"sigs.k8s.io/yaml"

	policylisters "k8s.io/client-go/listers/policy/v1"
)

type filterOut struct {
	Code    string   `json:"code"`
	Plugin  string   `json:"plugin"`
	Reasons []string `json:"reasons"`
}

type victimsOut struct {
	Victims       []string `json:"victims"`
	PDBViolations int64    `json:"pdbViolations"`
}

// preemptOut is what DefaultPreemption's PostFilter would decide. Best lists every candidate that
// pickOneNodeForPreemption leaves tied after all its criteria (upstream then takes the first one in
// map order, i.e. at random), so a correct implementation nominates one of them.
type preemptOut struct {
	Eligible   bool                  `json:"eligible"`
	Message    string                `json:"message,omitempty"`
	Candidates map[string]victimsOut `json:"candidates"`
	Best       []string              `json:"best"`
	Error      string                `json:"error,omitempty"`
}

type output struct {
	Pod       string                      `json:"pod"`
	Prefilter *filterOut                  `json:"prefilter,omitempty"`
	PreRes    []string                    `json:"preFilterResult,omitempty"`
	Filter    map[string]filterOut        `json:"filter"`
	Scores    map[string]map[string]int64 `json:"scores"`
	Plugins   []string                    `json:"plugins"`
	Error     string                      `json:"error,omitempty"`
	Preempt   *preemptOut                 `json:"preemption,omitempty"`
}

// nopNominator: no nominated pods (the files have one pending pod and no nominatedNodeName use).
type nopNominator struct{}

func (nopNominator) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo)    {}
func (nopNominator) DeleteNominatedPodIfExists(*v1.Pod)                               {}
func (nopNominator) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)             {}
func (nopNominator) NominatedPodsForNode(string) []fwk.PodInfo                        { return nil }

func die(f string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "oracle: "+f+"\n", a...)
	os.Exit(2)
}

func filterList(ps []config.Plugin, dis map[string]bool) []config.Plugin {
	out := ps[:0:0]
	for _, p := range ps {
		if !dis[p.Name] {
			out = append(out, p)
		}
	}
	return out
}

func main() {
	disable := flag.String("disable", "VolumeBinding,VolumeRestrictions,VolumeZone,NodeVolumeLimits,DynamicResources", "comma-separated plugins to drop from the default profile")
	gates := flag.String("feature-gates", "", "feature gates to set, as kube-scheduler's --feature-gates (A=true,B=false)")
	preempt := flag.Bool("preempt", false, "when no node fits, run DefaultPreemption's dry run (all candidates, victims, best set)")
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	if v := os.Getenv("ORACLE_KLOG_V"); v != "" { // debugging: upstream's klog output on stderr
		_ = fs.Set("v", v)
		_ = fs.Set("logtostderr", "true")
		_ = fs.Set("stderrthreshold", "INFO")
		klog.SetOutput(os.Stderr)
	}
	flag.Parse()
	if flag.NArg() != 1 {
		die("usage: oracle [-disable a,b] CLUSTER.yaml")
	}
	if *gates != "" {
		if err := utilfeature.DefaultMutableFeatureGate.Set(*gates); err != nil {
			die("feature gates: %v", err)
		}
	}
	metrics.Register()

	raw, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		die("%v", err)
	}
	var nodes []*v1.Node
	var running []*v1.Pod
	var pending []*v1.Pod
	var nsObjs []runtime.Object
	dec := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := dec.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			die("yaml: %v", err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			die("yaml: %v", err)
		}
		switch tm.Kind {
		case "Node":
			n := &v1.Node{}
			if err := yaml.UnmarshalStrict(doc, n); err != nil {
				die("node: %v", err)
			}
			if n.Status.Allocatable == nil {
				n.Status.Allocatable = n.Status.Capacity
			}
			nodes = append(nodes, n)
		case "Pod":
			p := &v1.Pod{}
			if err := yaml.UnmarshalStrict(doc, p); err != nil {
				die("pod: %v", err)
			}
			if p.Namespace == "" {
				p.Namespace = "default"
			}
			if p.UID == "" {
				p.UID = types.UID(p.Namespace + "/" + p.Name)
			}
			// API defaulting (pkg/apis/core/v1 SetDefaults_Pod): a limit with no request sets the request.
			for _, cs := range [][]v1.Container{p.Spec.Containers, p.Spec.InitContainers} {
				for i := range cs {
					c := &cs[i]
					for k, v := range c.Resources.Limits {
						if c.Resources.Requests == nil {
							c.Resources.Requests = v1.ResourceList{}
						}
						if _, ok := c.Resources.Requests[k]; !ok {
							c.Resources.Requests[k] = v.DeepCopy()
						}
					}
				}
			}
			// API defaulting: hostNetwork pods get hostPort = containerPort.
			if p.Spec.HostNetwork {
				for _, cs := range [][]v1.Container{p.Spec.Containers, p.Spec.InitContainers} {
					for i := range cs {
						for j := range cs[i].Ports {
							if cs[i].Ports[j].HostPort == 0 {
								cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
							}
						}
					}
				}
			}
			for _, cs := range [][]v1.Container{p.Spec.Containers, p.Spec.InitContainers} {
				for i := range cs {
					for j := range cs[i].Ports {
						if cs[i].Ports[j].Protocol == "" {
							cs[i].Ports[j].Protocol = v1.ProtocolTCP
						}
					}
				}
			}
			if p.Spec.SchedulerName == "" {
				p.Spec.SchedulerName = "default-scheduler"
			}
			if p.Spec.NodeName != "" {
				running = append(running, p)
			} else {
				pending = append(pending, p)
			}
		case "Namespace":
			ns := &v1.Namespace{}
			if err := yaml.Unmarshal(doc, ns); err != nil {
				die("ns: %v", err)
			}
			nsObjs = append(nsObjs, ns)
		default:
			// Any other built-in kind (PodDisruptionBudget, PV, PVC, StorageClass, CSINode, CSIDriver,
			// DeviceClass, ResourceSlice, ResourceClaim, ...) goes into the fake clientset as it is
			// (no API defaulting).
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
			if err != nil {
				die("%s: %v", tm.Kind, err)
			}
			nsObjs = append(nsObjs, obj)
		}
	}
	if len(pending) != 1 {
		die("need exactly one pending pod, got %d", len(pending))
	}
	pod := pending[0]

	cfg, err := latest.Default()
	if err != nil {
		die("config: %v", err)
	}
	prof := cfg.Profiles[0]
	dis := map[string]bool{}
	for _, n := range strings.Split(*disable, ",") {
		if n = strings.TrimSpace(n); n != "" {
			dis[n] = true
		}
	}
	pl := prof.Plugins
	for _, ps := range []*config.PluginSet{&pl.MultiPoint, &pl.PreEnqueue, &pl.QueueSort, &pl.PreFilter, &pl.Filter,
		&pl.PostFilter, &pl.PreScore, &pl.Score, &pl.Reserve, &pl.Permit, &pl.PreBind, &pl.Bind, &pl.PostBind} {
		ps.Enabled = filterList(ps.Enabled, dis)
	}
	weights := map[string]int64{}
	for _, p := range pl.MultiPoint.Enabled {
		w := int64(p.Weight)
		if w == 0 {
			w = 1
		}
		weights[p.Name] = w
	}
	for _, p := range pl.Score.Enabled {
		w := int64(p.Weight)
		if w == 0 {
			w = 1
		}
		weights[p.Name] = w
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	objs := append([]runtime.Object{}, nsObjs...)
	client := fake.NewSimpleClientset(objs...)
	inf := informers.NewSharedInformerFactory(client, 0)
	snap := cache.NewSnapshot(running, nodes)
	opts := []frameworkruntime.Option{
		frameworkruntime.WithSnapshotSharedLister(snap),
		frameworkruntime.WithInformerFactory(inf),
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithPodNominator(nopNominator{}),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(inf.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithParallelism(1)}
	// As scheduler.go New does: the DRA manager reads claims through an assume cache and slices
	// through the slice tracker, both fed by the informers started below.
	var claimCache *assumecache.AssumeCache
	if !dis["DynamicResources"] && utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		claimCache = assumecache.NewAssumeCache(klog.Background(), inf.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
		topts := resourceslicetracker.Options{
			EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
			EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
			SliceInformer:            inf.Resource().V1().ResourceSlices(),
			KubeClient:               client,
		}
		if topts.EnableDeviceTaintRules {
			topts.TaintInformer = inf.Resource().V1alpha3().DeviceTaintRules()
			topts.ClassInformer = inf.Resource().V1().DeviceClasses()
		}
		tr, err := resourceslicetracker.StartTracker(ctx, topts)
		if err != nil {
			die("slice tracker: %v", err)
		}
		mgr := dynamicresources.NewDRAManager(ctx, claimCache, tr, inf)
		// As the scheduler's event handlers do (eventhandlers.go): DeviceClass events feed the cache that maps
		// extended resource names to DeviceClasses (DRAExtendedResource); without it no extended resource is
		// ever seen as backed by DRA.
		if utilfeature.DefaultFeatureGate.Enabled(features.DRAExtendedResource) {
			if erc, ok := mgr.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache); ok && erc != nil {
				if _, err := inf.Resource().V1().DeviceClasses().Informer().AddEventHandler(erc); err != nil {
					die("device class handler: %v", err)
				}
			}
		}
		opts = append(opts, frameworkruntime.WithSharedDRAManager(mgr))
	}
	pdbLister := inf.Policy().V1().PodDisruptionBudgets().Lister()
	f, err := frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), &prof, opts...)
	if err != nil {
		die("framework: %v", err)
	}
	inf.Start(ctx.Done())
	inf.WaitForCacheSync(ctx.Done())
	if len(nsObjs) > 2 {
		// The volume binder's PV/PVC assume caches and the DRA assume cache/allocated-devices tracker are
		// fed by informer event handlers, which may still be running after the stores synced.
		time.Sleep(50 * time.Millisecond)
	}
	if claimCache != nil {
		want := 0
		for _, o := range nsObjs {
			if o.GetObjectKind().GroupVersionKind().Kind == "ResourceClaim" {
				want++
			}
		}
		for i := 0; i < 200 && len(claimCache.List(nil)) < want; i++ {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
	}

	out := output{Pod: pod.Namespace + "/" + pod.Name, Filter: map[string]filterOut{}, Scores: map[string]map[string]int64{}}
	for _, p := range f.ListPlugins().Filter.Enabled {
		out.Plugins = append(out.Plugins, "filter:"+p.Name)
	}
	for _, p := range f.ListPlugins().Score.Enabled {
		out.Plugins = append(out.Plugins, "score:"+p.Name)
	}
	conv := func(s *fwk.Status) filterOut {
		r := s.Reasons()
		if r == nil {
			r = []string{}
		}
		return filterOut{Code: s.Code().String(), Plugin: s.Plugin(), Reasons: r}
	}

	state := framework.NewCycleState()
	allNodes, _ := snap.NodeInfos().List()
	preRes, s, unsched := f.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		fo := conv(s)
		out.Prefilter = &fo
		for _, ni := range allNodes {
			out.Filter[ni.Node().Name] = fo
		}
		if *preempt {
			// schedule_one.go: a PreFilter reject becomes the status of every node.
			n2s := framework.NewDefaultNodeToStatus()
			n2s.SetAbsentNodesStatus(s)
			out.Preempt = runPreemption(ctx, f, snap, state, pod, n2s, pdbLister)
		}
		emit(out)
		return
	}
	if !preRes.AllNodes() {
		for n := range preRes.NodeNames {
			out.PreRes = append(out.PreRes, n)
		}
		sort.Strings(out.PreRes)
	}
	var feasible []fwk.NodeInfo
	n2s := framework.NewDefaultNodeToStatus()
	for _, ni := range allNodes {
		name := ni.Node().Name
		if !preRes.AllNodes() && !preRes.NodeNames.Has(name) {
			st := fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unsched)))
			out.Filter[name] = conv(st)
			n2s.Set(name, st)
			continue
		}
		st := f.RunFilterPlugins(ctx, state, pod, ni)
		if st.IsSuccess() {
			out.Filter[name] = filterOut{Code: "Success", Reasons: []string{}}
			feasible = append(feasible, ni)
		} else {
			out.Filter[name] = conv(st)
			n2s.Set(name, st)
		}
	}
	if *preempt && len(feasible) == 0 {
		out.Preempt = runPreemption(ctx, f, snap, state, pod, n2s, pdbLister)
	}
	if len(feasible) > 0 {
		if ps := f.RunPreScorePlugins(ctx, state, pod, feasible); !ps.IsSuccess() {
			out.Error = "prescore: " + ps.Message()
			emit(out)
			return
		}
		scores, ss := f.RunScorePlugins(ctx, state, pod, feasible)
		if !ss.IsSuccess() {
			out.Error = "score: " + ss.Message()
			emit(out)
			return
		}
		for _, nps := range scores {
			m := map[string]int64{}
			for _, p := range nps.Scores {
				w := weights[p.Name]
				if w == 0 {
					w = 1
				}
				m[p.Name] = p.Score / w
			}
			out.Scores[nps.Name] = m
		}
	}
	emit(out)
}

// runPreemption does what preemption.Evaluator.Preempt does, minus the pod re-fetch, extenders and
// the API calls, and with every potential node dry-run (offset 0; with at most 100 nodes upstream
// dry-runs all of them anyway), so the whole candidate set and the tied best set can be compared.
func runPreemption(ctx context.Context, f framework.Framework, snap *cache.Snapshot, state fwk.CycleState, pod *v1.Pod,
	m *framework.NodeToStatus, pdbLister policylisters.PodDisruptionBudgetLister) *preemptOut {
	res := &preemptOut{Candidates: map[string]victimsOut{}, Best: []string{}}
	args := &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}
	pl, err := defaultpreemption.New(ctx, args, f, plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if ok, msg := pl.PodEligibleToPreemptOthers(ctx, pod, m.Get(pod.Status.NominatedNodeName)); !ok {
		res.Message = msg
		return res
	}
	res.Eligible = true
	potential, err := m.NodesForStatusCode(snap.NodeInfos(), fwk.Unschedulable)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if len(potential) == 0 {
		return res
	}
	pdbs, err := pdbLister.List(labels.Everything())
	if err != nil {
		res.Error = err.Error()
		return res
	}
	_, num := pl.GetOffsetAndNumCandidates(int32(len(potential)))
	cands, _, err := pl.Evaluator.DryRunPreemption(ctx, state, pod, potential, pdbs, 0, num)
	if err != nil && len(cands) == 0 {
		res.Error = err.Error()
		return res
	}
	victims := map[string]*extenderv1.Victims{}
	for _, c := range cands {
		var names []string
		for _, p := range c.Victims().Pods {
			names = append(names, p.Namespace+"/"+p.Name)
		}
		sort.Strings(names)
		res.Candidates[c.Name()] = victimsOut{Victims: names, PDBViolations: c.Victims().NumPDBViolations}
		victims[c.Name()] = c.Victims()
	}
	res.Best = bestCandidates(victims)
	return res
}

// bestCandidates is preemption.go pickOneNodeForPreemption with the default score functions, but
// it returns every node still tied after the last criterion instead of the first in map order.
func bestCandidates(nodesToVictims map[string]*extenderv1.Victims) []string {
	all := []string{}
	for n := range nodesToVictims {
		all = append(all, n)
	}
	sort.Strings(all)
	if len(all) == 0 {
		return all
	}
	funcs := []func(string) int64{
		func(n string) int64 { return -nodesToVictims[n].NumPDBViolations },
		func(n string) int64 { return -int64(corev1helpers.PodPriority(nodesToVictims[n].Pods[0])) },
		func(n string) int64 {
			var s int64
			for _, p := range nodesToVictims[n].Pods {
				s += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -s
		},
		func(n string) int64 { return -int64(len(nodesToVictims[n].Pods)) },
		func(n string) int64 {
			t := util.GetEarliestPodStartTime(nodesToVictims[n])
			if t == nil {
				return int64(math.MinInt64)
			}
			return t.UnixNano()
		},
	}
	for _, fn := range funcs {
		sel := []string{}
		maxS := int64(math.MinInt64)
		for _, n := range all {
			sc := fn(n)
			if sc > maxS {
				maxS = sc
				sel = []string{}
			}
			if sc == maxS {
				sel = append(sel, n)
			}
		}
		if len(sel) == 1 {
			return sel
		}
		all = sel
	}
	return all
}

func emit(o output) {
	b, _ := json.Marshal(o)
	os.Stdout.Write(b)
	os.Stdout.Write([]byte("\n"))
}
