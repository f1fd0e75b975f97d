//go:build test_performance

// Karpenter's own Scheduler.Solve on pods exported by autonode's benchmark
// (test/bench/karpenter-side.ts). This file is copied into a copy of Karpenter's
// pkg/controllers/provisioning/scheduling (package scheduling_test) so it can reuse that
// package's benchmark setup (setupScheduler: one NodePool with Karpenter's limits,
// fake.InstanceTypes(400)) exactly as Karpenter's BenchmarkScheduling* do. Only the pods
// differ: they are read from AUTONODE_EXPORTED_PODS instead of drawn from Go's math/rand,
// so both solvers see the very same input.
//
// Output: one JSON line on stdout prefixed "AUTONODE_RESULT ".

package scheduling_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/test"
)

type exportedTerm struct {
	Kind        string            `json:"kind"` // spread | affinity | anti
	TopologyKey string            `json:"topologyKey"`
	MaxSkew     int32             `json:"maxSkew"`
	MatchLabels map[string]string `json:"matchLabels"`
}

type exportedPod struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
	CPU    string            `json:"cpu"`
	Memory string            `json:"memory"`
	Terms  []exportedTerm    `json:"terms"`
}

type exportedResult struct {
	Pods          int       `json:"pods"`
	Seconds       []float64 `json:"seconds"`
	NodeClaims    int       `json:"nodeClaims"`
	PodsScheduled int       `json:"podsScheduled"`
	PodErrors     int       `json:"podErrors"`
	Price         float64   `json:"price"`
	MaxRSSMiB     float64   `json:"maxRssMiB"`
	HeapMiB       float64   `json:"heapMiB"`
	// Pod name → NodeClaim index, for realisability checks of Karpenter's plan.
	Placement map[string]int `json:"placement,omitempty"`
}

func exportedPods(t *testing.T, path string) []*corev1.Pod {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %s", path, err)
	}
	var exported []exportedPod
	if err := json.Unmarshal(data, &exported); err != nil {
		t.Fatalf("parsing %s: %s", path, err)
	}
	pods := make([]*corev1.Pod, 0, len(exported))
	for i, e := range exported {
		opts := test.PodOptions{
			ObjectMeta: metav1.ObjectMeta{Name: e.Name, Labels: e.Labels, UID: types.UID(fmt.Sprintf("autonode-%08d", i))},
			ResourceRequirements: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(e.CPU),
				corev1.ResourceMemory: resource.MustParse(e.Memory),
			}},
		}
		for _, term := range e.Terms {
			selector := &metav1.LabelSelector{MatchLabels: term.MatchLabels}
			switch term.Kind {
			case "spread":
				opts.TopologySpreadConstraints = append(opts.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
					MaxSkew: term.MaxSkew, TopologyKey: term.TopologyKey, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector,
				})
			case "affinity":
				opts.PodRequirements = append(opts.PodRequirements, corev1.PodAffinityTerm{LabelSelector: selector, TopologyKey: term.TopologyKey})
			case "anti":
				opts.PodAntiRequirements = append(opts.PodAntiRequirements, corev1.PodAffinityTerm{LabelSelector: selector, TopologyKey: term.TopologyKey})
			default:
				t.Fatalf("pod %s: unknown term kind %q", e.Name, term.Kind)
			}
		}
		pods = append(pods, test.Pod(opts))
	}
	return pods
}

func TestAutonodeExportedSolve(t *testing.T) {
	path := os.Getenv("AUTONODE_EXPORTED_PODS")
	if path == "" {
		t.Skip("AUTONODE_EXPORTED_PODS is not set (test/bench/karpenter-side.ts sets it)")
	}
	runs := 1
	if v := os.Getenv("AUTONODE_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("AUTONODE_RUNS=%q: want a positive integer", v)
		}
		runs = n
	}
	pods := exportedPods(t, path)
	ctx = options.ToContext(injection.WithControllerName(context.Background(), "provisioner"), test.Options())
	result := exportedResult{Pods: len(pods)}
	for run := 0; run < runs; run++ {
		// As benchmarkScheduler: topology and scheduler construction are not timed.
		scheduler, err := setupScheduler(ctx, pods, scheduling.NumConcurrentReconciles(5))
		if err != nil {
			t.Fatalf("creating scheduler: %s", err)
		}
		runtime.GC()
		start := time.Now()
		results, err := scheduler.Solve(ctx, pods)
		result.Seconds = append(result.Seconds, time.Since(start).Seconds())
		if err != nil {
			t.Fatalf("solve: %s", err)
		}
		if run > 0 {
			continue
		}
		var stats runtime.MemStats
		runtime.ReadMemStats(&stats)
		result.HeapMiB = float64(stats.HeapAlloc) / (1 << 20)
		result.NodeClaims = len(results.NewNodeClaims)
		result.PodErrors = len(results.PodErrors)
		result.Placement = map[string]int{}
		for i, nc := range results.NewNodeClaims {
			result.PodsScheduled += len(nc.Pods)
			for _, p := range nc.Pods {
				result.Placement[p.Name] = i
			}
			// What the claim launches: the cheapest available offering, over its remaining
			// instance types, that its requirements (zone, capacity type) allow.
			cheapest := math.Inf(1)
			for _, it := range nc.InstanceTypeOptions {
				if o := it.Offerings.Available().Compatible(nc.Requirements).Cheapest(); o != nil && o.Price < cheapest {
					cheapest = o.Price
				}
			}
			if !math.IsInf(cheapest, 1) {
				result.Price += cheapest
			}
		}
	}
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err == nil {
		result.MaxRSSMiB = float64(usage.Maxrss) / 1024
	}
	line, _ := json.Marshal(result)
	fmt.Printf("AUTONODE_RESULT %s\n", line)
}
