package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// overlays are the kustomizations operators apply, with the namespace each
// one deploys to and the kinds it must render (no more, no fewer).
var overlays = []struct {
	dir       string
	namespace string
	kinds     []string
}{
	{"overlays/dev", "usid-dev", []string{"ConfigMap", "Deployment", "HTTPRoute", "Namespace", "NetworkPolicy", "Secret", "Service", "ServiceAccount"}},
	// production and monitoring: usid's objects and its Redis's (a ConfigMap,
	// Deployment, NetworkPolicy, Service and ServiceAccount each).
	{"overlays/production", "usid", []string{"ConfigMap", "ConfigMap", "Deployment", "Deployment", "HTTPRoute", "HorizontalPodAutoscaler", "Namespace", "NetworkPolicy", "NetworkPolicy", "PodDisruptionBudget", "Service", "Service", "ServiceAccount", "ServiceAccount"}},
	{"overlays/monitoring", "usid", []string{"ConfigMap", "ConfigMap", "Deployment", "Deployment", "HTTPRoute", "Namespace", "NetworkPolicy", "NetworkPolicy", "PodDisruptionBudget", "ScaledObject", "Service", "Service", "ServiceAccount", "ServiceAccount", "ServiceMonitor"}},
}

// kustomizeCommand finds a kustomize: kubectl's built-in one, else a
// standalone kustomize. Missing both is a failure, never a skip: these tests
// are how the manifests are known to be right.
func kustomizeCommand(t *testing.T) []string {
	t.Helper()
	for _, c := range []string{"kubectl", "/usr/bin/kubectl", "/usr/local/bin/kubectl"} {
		if p, err := exec.LookPath(c); err == nil {
			return []string{p, "kustomize"}
		}
	}
	for _, c := range []string{"kustomize", filepath.Join(build.Default.GOPATH, "bin", "kustomize")} {
		if p, err := exec.LookPath(c); err == nil {
			return []string{p, "build"}
		}
	}
	t.Fatal("rendering the manifests needs kubectl (kustomize is built in) or kustomize, and neither is on PATH.\n" +
		"Install kubectl: the Kubernetes project's package (https://kubernetes.io/docs/tasks/tools/; the project's machines have /usr/bin/kubectl),\n" +
		"or kustomize from the Go module proxy: go install sigs.k8s.io/kustomize/kustomize/v5@v5.5.0 and add $(go env GOPATH)/bin to PATH.")
	return nil
}

var renders sync.Map // dir -> *renderResult

type renderResult struct {
	once sync.Once
	out  []byte
	err  error
}

// render runs kustomize on dir (relative to deploy/) once per test binary.
func render(t *testing.T, dir string) []byte {
	t.Helper()
	cmd := kustomizeCommand(t)
	v, _ := renders.LoadOrStore(dir, &renderResult{})
	r := v.(*renderResult)
	r.once.Do(func() {
		trackManifests()
		c := exec.Command(cmd[0], append(cmd[1:], dir)...)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		r.out, r.err = c.Output()
		if r.err != nil {
			r.err = fmt.Errorf("%s %s: %v\n%s", strings.Join(cmd, " "), dir, r.err, stderr.String())
		}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.out
}

// trackManifests reads every file kustomize may read (base/, overlays/)
// from the test process itself: go test caches a passing result keyed on
// the files the test opened, and it cannot see kubectl's reads, so without
// this an edited manifest could be reported "ok (cached)".
func trackManifests() {
	for _, root := range []string{"base", "overlays"} {
		filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				os.ReadFile(path)
			}
			return nil
		})
	}
}

// object is one rendered object: its identity and its strictly decoded Go value.
type object struct {
	apiVersion, kind, namespace, name string
	value                             any
}

func (o object) String() string {
	return fmt.Sprintf("%s/%s %s/%s", o.apiVersion, o.kind, o.namespace, o.name)
}

// newObject returns a pointer to the Go type of apiVersion/kind: k8s.io/api
// for the built-in kinds, the projects' own Go types for HTTPRoute (Gateway
// API) and ServiceMonitor (Prometheus Operator), and the hand-written minimal
// schema below for KEDA's ScaledObject (KEDA's Go module drags in every
// scaler's dependencies).
func newObject(apiVersion, kind string) (any, bool) {
	switch apiVersion + "/" + kind {
	case "v1/Namespace":
		return &corev1.Namespace{}, true
	case "v1/ServiceAccount":
		return &corev1.ServiceAccount{}, true
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}, true
	case "v1/Secret":
		return &corev1.Secret{}, true
	case "v1/Service":
		return &corev1.Service{}, true
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}, true
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, true
	case "autoscaling/v2/HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}, true
	case "networking.k8s.io/v1/NetworkPolicy":
		return &networkingv1.NetworkPolicy{}, true
	case "gateway.networking.k8s.io/v1/HTTPRoute":
		return &gwv1.HTTPRoute{}, true
	case "monitoring.coreos.com/v1/ServiceMonitor":
		return &monv1.ServiceMonitor{}, true
	case "keda.sh/v1alpha1/ScaledObject":
		return &scaledObject{}, true
	}
	return nil, false
}

// scaledObject is the part of KEDA's keda.sh/v1alpha1 ScaledObject that usid
// uses, field names as in KEDA's CRD (keda.sh/docs/concepts/scaling-deployments
// and scalers/prometheus). Decoding is strict, so a misspelt or unknown field
// is an error; the autoscaling behavior is k8s.io/api's own type, as in KEDA.
type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ScaleTargetRef struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
		} `json:"scaleTargetRef"`
		PollingInterval *int32 `json:"pollingInterval"`
		CooldownPeriod  *int32 `json:"cooldownPeriod"`
		MinReplicaCount *int32 `json:"minReplicaCount"`
		MaxReplicaCount *int32 `json:"maxReplicaCount"`
		Fallback        *struct {
			FailureThreshold int32 `json:"failureThreshold"`
			Replicas         int32 `json:"replicas"`
		} `json:"fallback"`
		Advanced *struct {
			RestoreToOriginalReplicaCount bool `json:"restoreToOriginalReplicaCount"`
			HorizontalPodAutoscalerConfig *struct {
				Name     string                                         `json:"name"`
				Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior"`
			} `json:"horizontalPodAutoscalerConfig"`
		} `json:"advanced"`
		Triggers []struct {
			Type       string            `json:"type"`
			Name       string            `json:"name"`
			MetricType string            `json:"metricType"`
			Metadata   map[string]string `json:"metadata"`
		} `json:"triggers"`
	} `json:"spec"`
}

// prometheusTriggerKeys are the metadata keys of KEDA's prometheus scaler.
var prometheusTriggerKeys = []string{"serverAddress", "query", "threshold", "activationThreshold", "namespace",
	"customHeaders", "ignoreNullValues", "unsafeSsl", "queryParameters", "timeout"}

// decodeAll splits kustomize's output and decodes every document strictly:
// unknown fields and duplicate keys are errors, and so is a kind without a
// known Go type.
func decodeAll(out []byte) ([]object, error) {
	var objs []object
	var errs []error
	for i, doc := range bytes.Split(out, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			errs = append(errs, fmt.Errorf("document %d: %v", i, err))
			continue
		}
		v, ok := newObject(meta.APIVersion, meta.Kind)
		if !ok {
			errs = append(errs, fmt.Errorf("document %d: %s %s: no Go type known for it; add one to newObject", i, meta.APIVersion, meta.Kind))
			continue
		}
		if err := yaml.UnmarshalStrict(doc, v); err != nil {
			errs = append(errs, fmt.Errorf("%s/%s %s: strict decode into %T: %v", meta.APIVersion, meta.Kind, meta.Metadata.Name, v, err))
			continue
		}
		objs = append(objs, object{meta.APIVersion, meta.Kind, meta.Metadata.Namespace, meta.Metadata.Name, v})
	}
	return objs, errors.Join(errs...)
}

// rendered is one overlay's objects, typed.
type rendered struct {
	dir, namespace string
	objs           []object
}

func renderDecoded(t *testing.T, dir string) *rendered {
	t.Helper()
	objs, err := decodeAll(render(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	r := &rendered{dir: dir, objs: objs}
	for _, o := range overlays {
		if o.dir == dir {
			r.namespace = o.namespace
		}
	}
	return r
}

func byKind[T any](r *rendered) []T {
	var out []T
	for _, o := range r.objs {
		if v, ok := o.value.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// one returns the only object of type T, failing if there is not exactly one.
func one[T any](t *testing.T, r *rendered) T {
	t.Helper()
	all := byKind[T](r)
	if len(all) != 1 {
		var zero T
		t.Fatalf("%s: %d objects of type %T, want 1", r.dir, len(all), zero)
	}
	return all[0]
}

func TestRenderEveryOverlay(t *testing.T) {
	for _, dir := range []string{"base", "overlays/dev", "overlays/production", "overlays/monitoring"} {
		t.Run(dir, func(t *testing.T) {
			if out := render(t, dir); len(bytes.TrimSpace(out)) == 0 {
				t.Fatal("rendered nothing")
			}
		})
	}
	// Every kustomization under deploy/ is one of those (a new overlay must be
	// added to the overlays table, and so to every check).
	var found []string
	filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "kustomization.yaml" {
			found = append(found, filepath.Dir(path))
		}
		return err
	})
	sort.Strings(found)
	want := []string{"base", "overlays/dev", "overlays/monitoring", "overlays/production"}
	if !slices.Equal(found, want) {
		t.Errorf("kustomizations under deploy/: got %v, want %v (add new overlays to the overlays table)", found, want)
	}
}

func TestDecodeStrict(t *testing.T) {
	for _, dir := range []string{"base", "overlays/dev", "overlays/production", "overlays/monitoring"} {
		t.Run(dir, func(t *testing.T) {
			r := renderDecoded(t, dir)
			seen := map[string]bool{}
			for _, o := range r.objs {
				if seen[o.String()] {
					t.Errorf("%v rendered twice", o)
				}
				seen[o.String()] = true
			}
		})
	}
	for _, ov := range overlays {
		t.Run(ov.dir+"/kinds", func(t *testing.T) {
			r := renderDecoded(t, ov.dir)
			var kinds []string
			for _, o := range r.objs {
				kinds = append(kinds, o.kind)
				if o.kind == "Namespace" {
					if o.name != ov.namespace {
						t.Errorf("%v: want the overlay's namespace %s", o, ov.namespace)
					}
				} else if o.namespace != ov.namespace {
					t.Errorf("%v: in namespace %q, want %q", o, o.namespace, ov.namespace)
				}
			}
			sort.Strings(kinds)
			if !slices.Equal(kinds, ov.kinds) {
				t.Errorf("kinds: got %v, want %v", kinds, ov.kinds)
			}
		})
	}
}

// TestStrictDecodeCatchesMistakes makes sure the strict decoding above would
// fail on the mistakes it is there for.
func TestStrictDecodeCatchesMistakes(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"unknown field", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replica: 1}\n"},
		{"misplaced field", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 80, path: /}]}\n"},
		{"duplicate key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\ndata: {c: d}\n"},
		{"keda unknown field", "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: x}\nspec: {minReplicas: 1}\n"},
		{"gateway unknown field", "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: x}\nspec: {rules: [{timeout: 1s}]}\n"},
		{"servicemonitor unknown field", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: x}\nspec: {endpoints: [{metricsPath: /metrics}]}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeAll([]byte(tc.doc)); err == nil {
				t.Errorf("decoding %q: no error", tc.doc)
			} else {
				t.Logf("%v", err)
			}
		})
	}
}
