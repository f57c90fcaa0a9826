package deploy_test

import (
	"fmt"
	"net/netip"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// The contract with usid's server (ARCHITECTURE.md; checked live in live_test.go).
const (
	livenessPath  = "/healthz"
	readinessPath = "/readyz"
	metricsPath   = "/metrics"
	wsPath        = "/v1/ws"
	configFile    = "/etc/usid/usid.yaml" // the image's fixed configuration path
	hpaMetric     = "usid_pool_utilization"
	nonRootUID    = 10001
)

func forEachOverlay(t *testing.T, f func(t *testing.T, r *rendered)) {
	for _, ov := range overlays {
		t.Run(ov.dir, func(t *testing.T) { f(t, renderDecoded(t, ov.dir)) })
	}
}

// usidName is the usid Deployment's (and Service's) name; other workloads
// (the production overlay's Redis) have their own.
const usidName = "usid"

// named returns the object of type T called name, failing if there is none.
func named[T interface{ GetName() string }](t *testing.T, r *rendered, name string) T {
	t.Helper()
	for _, o := range byKind[T](r) {
		if o.GetName() == name {
			return o
		}
	}
	var zero T
	t.Fatalf("%s: no %T named %s", r.dir, zero, name)
	return zero
}

func usidDeployment(t *testing.T, r *rendered) *appsv1.Deployment {
	t.Helper()
	return named[*appsv1.Deployment](t, r, usidName)
}

func usidService(t *testing.T, r *rendered) *corev1.Service {
	t.Helper()
	return named[*corev1.Service](t, r, usidName)
}

func usidContainer(t *testing.T, d *appsv1.Deployment) *corev1.Container {
	t.Helper()
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != "usid" {
		t.Fatalf("Deployment %s: want one container named usid, got %d", d.Name, len(cs))
	}
	return &cs[0]
}

// containerPort resolves a probe's or Service's port (a name or a number).
func containerPort(t *testing.T, c *corev1.Container, p intstr.IntOrString) int32 {
	t.Helper()
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort
		}
	}
	t.Fatalf("port %s is not a port of container %s", p.String(), c.Name)
	return 0
}

func listenPort(t *testing.T, c *usidConfig) int32 {
	t.Helper()
	l := c.Listen
	if l == "" {
		l = ":8080" // usid's default
	}
	_, p, ok := strings.Cut(l, ":")
	n, err := strconv.Atoi(p)
	if !ok || err != nil {
		t.Fatalf("listen %q: want [host]:port", c.Listen)
	}
	return int32(n)
}

func matches(t *testing.T, sel *metav1.LabelSelector, lbls map[string]string, what string) {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if s.Empty() || !s.Matches(labels.Set(lbls)) {
		t.Errorf("%s: selector %q does not select the usid pods (labels %v)", what, s, lbls)
	}
}

// TestWiring checks that the objects name each other correctly: selectors,
// ports, the ConfigMap, the ServiceAccount and the autoscalers' target.
func TestWiring(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, r *rendered) {
		d := usidDeployment(t, r)
		c := usidContainer(t, d)
		pod := d.Spec.Template
		matches(t, d.Spec.Selector, pod.Labels, "Deployment")

		svc := usidService(t, r)
		if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) || len(svc.Spec.Selector) == 0 {
			t.Errorf("Service selector %v does not select the usid pods %v", svc.Spec.Selector, pod.Labels)
		}
		if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
			t.Error("Service: sessions need no affinity (a WebSocket's lease lives on its connection)")
		}
		svcPorts := map[int32]bool{}
		for _, p := range svc.Spec.Ports {
			containerPort(t, c, p.TargetPort)
			svcPorts[p.Port] = true
		}

		for _, pdb := range byKind[*policyv1.PodDisruptionBudget](r) {
			matches(t, pdb.Spec.Selector, pod.Labels, "PodDisruptionBudget")
		}
		// usid's NetworkPolicy; what it lets through is TestNetworkPaths'.
		np := named[*networkingv1.NetworkPolicy](t, r, usidName)
		matches(t, &np.Spec.PodSelector, pod.Labels, "NetworkPolicy")
		for _, in := range np.Spec.Ingress {
			for _, p := range in.Ports {
				containerPort(t, c, *p.Port)
			}
		}
		if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
			t.Errorf("NetworkPolicy: egress not restricted (usid opens connections only to its Redis), types %v", np.Spec.PolicyTypes)
		}
		target := func(what, apiVersion, kind, name string) {
			if apiVersion != "apps/v1" || kind != "Deployment" || name != d.Name {
				t.Errorf("%s targets %s %s %s, want apps/v1 Deployment %s", what, apiVersion, kind, name, d.Name)
			}
		}
		for _, h := range byKind[*autoscalingv2.HorizontalPodAutoscaler](r) {
			target("HorizontalPodAutoscaler", h.Spec.ScaleTargetRef.APIVersion, h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name)
		}
		for _, so := range byKind[*scaledObject](r) {
			ref := so.Spec.ScaleTargetRef
			target("ScaledObject", ref.APIVersion, ref.Kind, ref.Name)
		}
		cfg, _ := configOf(t, r)
		for _, hr := range byKind[*gwv1.HTTPRoute](r) {
			if len(hr.Spec.ParentRefs) == 0 || len(hr.Spec.Hostnames) == 0 {
				t.Errorf("HTTPRoute: want parentRefs and hostnames")
			}
			// The pages served under a hostname call /v1 with it as their
			// Origin: usid serves that only for names in server.hosts.
			for _, h := range hr.Spec.Hostnames {
				if !slices.Contains(cfg.Server.Hosts, string(h)) {
					t.Errorf("HTTPRoute hostname %s is not in the ConfigMap's server.hosts %v: its pages' /v1 requests would get 403", h, cfg.Server.Hosts)
				}
			}
			for _, rule := range hr.Spec.Rules {
				for _, b := range rule.BackendRefs {
					if (b.Kind != nil && *b.Kind != "Service") || string(b.Name) != svc.Name || b.Port == nil || !svcPorts[int32(*b.Port)] {
						t.Errorf("HTTPRoute backend %s:%v is not the usid Service's port", b.Name, b.Port)
					}
				}
				if rule.Retry != nil || rule.SessionPersistence != nil {
					t.Error("HTTPRoute uses experimental-channel fields (retry, sessionPersistence)")
				}
			}
		}
		for _, sm := range byKind[*monv1.ServiceMonitor](r) {
			matches(t, &sm.Spec.Selector, svc.Labels, "ServiceMonitor (on the Service's labels)")
			for _, ep := range sm.Spec.Endpoints {
				if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) {
					t.Errorf("ServiceMonitor endpoint port %q is not a named port of the Service", ep.Port)
				}
				if ep.Path != metricsPath {
					t.Errorf("ServiceMonitor path %q, want %s", ep.Path, metricsPath)
				}
			}
		}

		sa := pod.Spec.ServiceAccountName
		if !slices.ContainsFunc(byKind[*corev1.ServiceAccount](r), func(s *corev1.ServiceAccount) bool { return s.Name == sa }) {
			t.Errorf("pod runs as ServiceAccount %q, which is not rendered", sa)
		}

		// The configuration: --config names the file the ConfigMap volume
		// puts at the image's fixed path.
		if want := []string{"--config", configFile}; !slices.Equal(c.Args, want) || len(c.Command) != 0 {
			t.Errorf("container command %q args %q, want the image's entrypoint with args %q", c.Command, c.Args, want)
		}
		mounted := false
		for _, m := range c.VolumeMounts {
			for _, v := range pod.Spec.Volumes {
				if v.Name == m.Name && v.ConfigMap != nil && m.MountPath == path.Dir(configFile) && m.SubPath == "" {
					mounted = m.ReadOnly
				}
			}
		}
		if !mounted {
			t.Errorf("no read-only ConfigMap volume at %s", path.Dir(configFile))
		}
		configOf(t, r) // the mounted ConfigMap has a valid usid.yaml
	})
}

// TestProbesAndPorts checks the probes against usid's routes and the ports
// against the configuration (live_test.go asks a running usid).
func TestProbesAndPorts(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, r *rendered) {
		d := usidDeployment(t, r)
		c := usidContainer(t, d)
		cfg, _ := configOf(t, r)
		port := listenPort(t, cfg)
		if len(c.Ports) != 1 || c.Ports[0].ContainerPort != port || c.Ports[0].Name != "http" {
			t.Errorf("container ports %+v, want one named http on usid's listen port %d", c.Ports, port)
		}
		for _, p := range []struct {
			name  string
			probe *corev1.Probe
			path  string
		}{
			{"startup", c.StartupProbe, readinessPath},
			{"liveness", c.LivenessProbe, livenessPath},
			{"readiness", c.ReadinessProbe, readinessPath},
		} {
			if p.probe == nil || p.probe.HTTPGet == nil {
				t.Errorf("%s probe: want an HTTP GET", p.name)
				continue
			}
			if p.probe.HTTPGet.Path != p.path {
				t.Errorf("%s probe path %q, want %q", p.name, p.probe.HTTPGet.Path, p.path)
			}
			if got := containerPort(t, c, p.probe.HTTPGet.Port); got != port {
				t.Errorf("%s probe port %d, want %d", p.name, got, port)
			}
		}
		if c.StartupProbe == nil {
			return
		}
		// Slow engines: the startup probe waits out the first start's
		// profile probe, one failed start of the slowest engine and a
		// second try.
		var slowest time.Duration
		for _, e := range cfg.Engines {
			slowest = max(slowest, e.Timeouts.Start+e.Timeouts.Ready)
		}
		sp := c.StartupProbe
		budget := time.Duration(sp.PeriodSeconds*sp.FailureThreshold+sp.InitialDelaySeconds) * time.Second
		if budget < 2*slowest+probeAllowance {
			t.Errorf("startup probe allows %v, want at least %v (twice the slowest engine's start + ready timeouts, and %v for the profile probe)", budget, 2*slowest+probeAllowance, probeAllowance)
		}
		if lp := c.LivenessProbe; lp != nil && lp.InitialDelaySeconds > 0 {
			t.Error("liveness probe: the startup probe already holds it back; no initialDelaySeconds")
		}
	})
}

// preStopSeconds is the preStop hook's sleep: the sleep action, or exec sleep N.
func preStopSeconds(t *testing.T, c *corev1.Container) int64 {
	t.Helper()
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		t.Fatal("no preStop hook: the endpoint removal must reach the gateways before usid drains")
	}
	h := c.Lifecycle.PreStop
	switch {
	case h.Sleep != nil:
		return h.Sleep.Seconds
	case h.Exec != nil && len(h.Exec.Command) == 2 && path.Base(h.Exec.Command[0]) == "sleep":
		n, err := strconv.ParseInt(h.Exec.Command[1], 10, 64)
		if err == nil {
			return n
		}
	}
	t.Fatalf("preStop %+v: want a sleep", h)
	return 0
}

func ruleName(r gwv1.HTTPRouteRule) string {
	if r.Name == nil {
		return "(unnamed)"
	}
	return string(*r.Name)
}

var gatewayDuration = regexp.MustCompile(`^([0-9]{1,5}(h|m|s|ms)){1,4}$`) // GEP-2257, as the CRD validates it

func routeDuration(t *testing.T, d *gwv1.Duration) time.Duration {
	t.Helper()
	if d == nil {
		return -1
	}
	if !gatewayDuration.MatchString(string(*d)) {
		t.Errorf("HTTPRoute duration %q is not a Gateway API duration", *d)
	}
	v, err := time.ParseDuration(string(*d))
	if err != nil {
		t.Errorf("HTTPRoute duration %q: %v", *d, err)
	}
	return v
}

// TestShutdownBudget checks the drain: usid's shutdown_grace covers a search
// accepted before SIGTERM (its wait for an engine, then the longest search),
// and the pod's grace period covers the preStop sleep, that drain and the
// engines' quit. Also the gateway's timeouts and the autoscaler's scale-down.
func TestShutdownBudget(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, r *rendered) {
		d := usidDeployment(t, r)
		c := usidContainer(t, d)
		cfg, _ := configOf(t, r)
		caps := cfg.Session.Caps
		for name, v := range map[string]time.Duration{
			"session.caps.max_analysis": caps.MaxAnalysis, "session.caps.max_movetime": caps.MaxMoveTime,
			"session.caps.max_mate_time": caps.MaxMateTime, "session.queue_timeout": cfg.Session.QueueTimeout,
			"session.acquire_timeout": cfg.Session.AcquireTimeout, "server.shutdown_grace": cfg.Server.ShutdownGrace,
		} {
			if v <= 0 {
				t.Errorf("%s is not set: the budget below must not rest on a default", name)
			}
		}
		search, wait := cfg.longestSearch(), cfg.longestWait()
		if need := wait + search; cfg.Server.ShutdownGrace < need {
			t.Errorf("server.shutdown_grace %v < %v: a search accepted before SIGTERM (wait %v + search %v) may be cut",
				cfg.Server.ShutdownGrace, need, wait, search)
		}
		preStop := time.Duration(preStopSeconds(t, c)) * time.Second
		if preStop < 5*time.Second {
			t.Errorf("preStop sleep %v: want at least 5s for endpoint removal to propagate", preStop)
		}
		if d.Spec.Template.Spec.TerminationGracePeriodSeconds == nil {
			t.Fatal("no terminationGracePeriodSeconds (the default 30s cuts searches)")
		}
		grace := time.Duration(*d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
		if need := preStop + cfg.Server.ShutdownGrace + cfg.longestQuit(); grace <= need {
			t.Errorf("terminationGracePeriodSeconds %v <= preStop %v + shutdown_grace %v + engine quit %v",
				grace, preStop, cfg.Server.ShutdownGrace, cfg.longestQuit())
		}
		if grace <= preStop+search {
			t.Errorf("terminationGracePeriodSeconds %v <= preStop %v + the longest search %v", grace, preStop, search)
		}
		t.Logf("longest search %v, wait %v, shutdown_grace %v, preStop %v, grace %v", search, wait, cfg.Server.ShutdownGrace, preStop, grace)

		for _, hr := range byKind[*gwv1.HTTPRoute](r) {
			sawWS := false
			for _, rule := range hr.Spec.Rules {
				isWS := slices.ContainsFunc(rule.Matches, func(m gwv1.HTTPRouteMatch) bool {
					return m.Path != nil && m.Path.Value != nil && *m.Path.Value == wsPath && m.Path.Type != nil && *m.Path.Type == gwv1.PathMatchExact
				})
				if rule.Timeouts == nil {
					t.Errorf("HTTPRoute rule %s: no timeouts (implementation defaults cut WebSockets or long searches)", ruleName(rule))
					continue
				}
				req, backend := routeDuration(t, rule.Timeouts.Request), routeDuration(t, rule.Timeouts.BackendRequest)
				if req > 0 && backend > req {
					t.Errorf("HTTPRoute rule %s: backendRequest %v > request %v", ruleName(rule), backend, req)
				}
				if isWS {
					sawWS = true
					if req != 0 || backend != 0 {
						t.Errorf("HTTPRoute %s rule: timeouts %v/%v, want 0s (none) for long-lived WebSockets", wsPath, req, backend)
					}
					continue
				}
				if need := cfg.Session.AcquireTimeout + search; req < need || backend < need {
					t.Errorf("HTTPRoute rule %s: timeouts %v/%v, want at least %v (acquire_timeout + the longest search) for REST",
						ruleName(rule), req, backend, need)
				}
			}
			if !sawWS {
				t.Errorf("HTTPRoute: no rule for %s (Exact) with WebSocket timeouts", wsPath)
			}
		}

		for _, b := range behaviors(r) {
			sd := b.ScaleDown
			if sd == nil || sd.StabilizationWindowSeconds == nil {
				t.Errorf("autoscaler: no scale-down stabilization window")
				continue
			}
			win := time.Duration(*sd.StabilizationWindowSeconds) * time.Second
			if win < 10*time.Minute || win < caps.MaxAnalysis {
				t.Errorf("autoscaler scale-down stabilization %v: want at least 10m and max_analysis %v, so that sessions are not cut by a dip", win, caps.MaxAnalysis)
			}
		}
	})
}

func behaviors(r *rendered) []*autoscalingv2.HorizontalPodAutoscalerBehavior {
	var out []*autoscalingv2.HorizontalPodAutoscalerBehavior
	for _, h := range byKind[*autoscalingv2.HorizontalPodAutoscaler](r) {
		out = append(out, h.Spec.Behavior)
	}
	for _, so := range byKind[*scaledObject](r) {
		var b *autoscalingv2.HorizontalPodAutoscalerBehavior
		if a := so.Spec.Advanced; a != nil && a.HorizontalPodAutoscalerConfig != nil {
			b = a.HorizontalPodAutoscalerConfig.Behavior
		}
		out = append(out, b)
	}
	for i, b := range out {
		if b == nil {
			out[i] = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
		}
	}
	return out
}

// TestUsidStateFitsItsMemory: with every bound of usid.yaml reached
// (sessions, identities, tickets, game jobs), usid stays within the memory
// the pod gives it (issue 25: 1000 game jobs took 444-540 MB of the 64 MiB
// it had).
func TestUsidStateFitsItsMemory(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, r *rendered) {
		cfg, _ := configOf(t, r)
		got, limit := cfg.usidStateMB(), float64(usidOwnMiB)*1.048576
		t.Logf("%.1f MB at rest + %g x (%d sessions x %g KB + %d identities x %g KB + %g MB tickets + %d MiB games + %g MB) = %.1f MB of %.1f MB",
			usidAtRestMB, float64(gcFactor), cfg.Access.MaxSessions, sessionKB, cfg.Access.MaxClients, identityKB, ticketsMB, cfg.Games.MaxMB, gamesMB, got, limit)
		if got > limit {
			t.Errorf("usid may hold %.1f MB with access.max_sessions %d, access.max_clients %d, games.max_mb %d: more than its %d MiB (usidOwnMiB)",
				got, cfg.Access.MaxSessions, cfg.Access.MaxClients, cfg.Games.MaxMB, usidOwnMiB)
		}
	})
}

// TestResourcesMatchEngineConfig derives the requests from the ConfigMap's
// engines: CPU = instances x threads, memory = usid + instances x (hash +
// overhead), limit = request for memory, no CPU limit.
func TestResourcesMatchEngineConfig(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, r *rendered) {
		d := usidDeployment(t, r)
		c := usidContainer(t, d)
		cfg, _ := configOf(t, r)
		cpu, mem, err := cfg.wantResources()
		if err != nil {
			t.Fatal(err)
		}
		wantCPU := resource.NewMilliQuantity(cpu, resource.DecimalSI)
		wantMem := resource.MustParse(fmt.Sprintf("%dMi", mem))
		req, lim := c.Resources.Requests, c.Resources.Limits
		if got := req[corev1.ResourceCPU]; got.Cmp(*wantCPU) != 0 {
			t.Errorf("cpu request %s, want %s (engine threads in usid.yaml)", got.String(), wantCPU)
		}
		if got := req[corev1.ResourceMemory]; got.Cmp(wantMem) != 0 {
			t.Errorf("memory request %s, want %s (usid %dMi + instances x (hash + overhead) in usid.yaml)", got.String(), wantMem.String(), usidOwnMiB)
		}
		if got := lim[corev1.ResourceMemory]; got.Cmp(wantMem) != 0 {
			t.Errorf("memory limit %s, want the request %s", got.String(), wantMem.String())
		}
		if _, ok := lim[corev1.ResourceCPU]; ok {
			t.Error("CPU limit set: engines are CPU-bound and a limit only throttles them")
		}
		t.Logf("cpu %s, memory %s", wantCPU, wantMem.String())
	})
}

// TestPodHardening: non-root, read-only root filesystem, no capabilities,
// seccomp, no privilege escalation, no API token, only /tmp writable; the
// restricted Pod Security Standard enforced on the namespace.
func TestPodHardening(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, r *rendered) {
		d := usidDeployment(t, r)
		c := usidContainer(t, d)
		ps := d.Spec.Template.Spec
		psc, sc := ps.SecurityContext, c.SecurityContext
		if psc == nil || sc == nil {
			t.Fatal("pod and container need security contexts")
		}
		check := func(ok bool, what string) {
			if !ok {
				t.Error(what)
			}
		}
		check(psc.RunAsNonRoot != nil && *psc.RunAsNonRoot, "pod: runAsNonRoot")
		check(psc.RunAsUser != nil && *psc.RunAsUser == nonRootUID, fmt.Sprintf("pod: runAsUser %d (the image's USER)", nonRootUID))
		check(psc.RunAsGroup != nil && *psc.RunAsGroup != 0, "pod: runAsGroup non-zero")
		check(psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault, "pod: seccomp RuntimeDefault")
		check(sc.RunAsNonRoot != nil && *sc.RunAsNonRoot, "container: runAsNonRoot")
		check(sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem, "container: readOnlyRootFilesystem")
		check(sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation, "container: allowPrivilegeEscalation false")
		check(sc.Privileged == nil || !*sc.Privileged, "container: not privileged")
		check(sc.Capabilities != nil && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) && len(sc.Capabilities.Add) == 0, "container: capabilities drop ALL, add none")
		check(sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault, "container: seccomp RuntimeDefault")
		check(ps.AutomountServiceAccountToken != nil && !*ps.AutomountServiceAccountToken, "pod: automountServiceAccountToken false")
		check(!ps.HostNetwork && !ps.HostPID && !ps.HostIPC, "pod: no host namespaces")
		for _, v := range ps.Volumes {
			check(v.HostPath == nil, "pod: no hostPath volumes")
			// Secret and ConfigMap files are root's: the user reads them as
			// "other", or as the group when fsGroup is set.
			var mode *int32
			switch {
			case v.Secret != nil:
				mode = v.Secret.DefaultMode
			case v.ConfigMap != nil:
				mode = v.ConfigMap.DefaultMode
			}
			if mode != nil {
				readable := *mode&0o004 != 0 || (*mode&0o040 != 0 && psc.FSGroup != nil)
				check(readable, fmt.Sprintf("volume %s: mode %#o is not readable by uid %d (no fsGroup)", v.Name, *mode, nonRootUID))
			}
		}
		// The only writable place: /tmp, an emptyDir with a size limit; HOME points there.
		tmp := false
		for _, m := range c.VolumeMounts {
			for _, v := range ps.Volumes {
				if v.Name == m.Name && m.MountPath == "/tmp" && v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil && !m.ReadOnly {
					tmp = true
				}
			}
		}
		check(tmp, "/tmp: a writable emptyDir with a sizeLimit (engines may write there)")
		check(slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "HOME" && e.Value == "/tmp" }), "HOME=/tmp")

		// A pinned image, never :latest.
		name, tag, _ := strings.Cut(path.Base(c.Image), ":")
		check(name == "usid" && tag != "" && tag != "latest" && strings.Contains(c.Image, "/"),
			fmt.Sprintf("image %q: want REGISTRY/.../usid:TAG with a tag other than latest", c.Image))

		ns := one[*corev1.Namespace](t, r)
		check(ns.Labels["pod-security.kubernetes.io/enforce"] == "restricted", "namespace: enforce the restricted Pod Security Standard")
	})
}

// TestAutoscalerSignals: the autoscalers scale on usid_pool_utilization of
// every configured engine, with a target below 1 (before callers queue).
func TestAutoscalerSignals(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, r *rendered) {
		cfg, _ := configOf(t, r)
		var engines []string
		for _, e := range cfg.Engines {
			engines = append(engines, e.Name)
		}
		hpas := byKind[*autoscalingv2.HorizontalPodAutoscaler](r)
		sos := byKind[*scaledObject](r)
		if len(hpas)+len(sos) > 1 {
			t.Fatalf("%d HPAs and %d ScaledObjects: two autoscalers on one Deployment fight", len(hpas), len(sos))
		}
		if r.dir != "overlays/dev" && len(hpas)+len(sos) == 0 {
			t.Fatal("no autoscaler")
		}
		if r.dir != "overlays/dev" && len(byKind[*policyv1.PodDisruptionBudget](r)) == 0 {
			t.Error("no PodDisruptionBudget")
		}
		d := usidDeployment(t, r)
		if len(hpas)+len(sos) > 0 && d.Spec.Replicas != nil {
			t.Error("Deployment sets replicas under an autoscaler: every apply would reset the count")
		}
		for _, h := range hpas {
			var scaled []string
			for _, m := range h.Spec.Metrics {
				if m.Type != autoscalingv2.PodsMetricSourceType || m.Pods == nil || m.Pods.Metric.Name != hpaMetric {
					t.Errorf("HPA metric %+v: want Pods %s", m, hpaMetric)
					continue
				}
				sel := m.Pods.Metric.Selector
				if sel == nil || len(sel.MatchLabels) != 1 || sel.MatchLabels["engine"] == "" {
					t.Errorf("HPA metric %s: want a selector on one engine label", hpaMetric)
					continue
				}
				scaled = append(scaled, sel.MatchLabels["engine"])
				if tg := m.Pods.Target; tg.Type != autoscalingv2.AverageValueMetricType || tg.AverageValue == nil ||
					tg.AverageValue.Cmp(resource.MustParse("1")) >= 0 || tg.AverageValue.Sign() <= 0 {
					t.Errorf("HPA target %+v: want an AverageValue in (0, 1): scale out before callers queue", tg)
				}
			}
			slices.Sort(scaled)
			want := slices.Sorted(slices.Values(engines))
			if !slices.Equal(scaled, want) {
				t.Errorf("HPA scales on engines %v, want every configured engine %v", scaled, want)
			}
			if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 {
				t.Error("HPA minReplicas < 2: one pod's drain takes the service down")
			}
		}
		for _, so := range sos {
			var scaled []string
			for _, tr := range so.Spec.Triggers {
				if tr.Type != "prometheus" || tr.MetricType != "AverageValue" {
					t.Errorf("ScaledObject trigger %s: type %s metricType %s, want prometheus AverageValue", tr.Name, tr.Type, tr.MetricType)
				}
				for k := range tr.Metadata {
					if !slices.Contains(prometheusTriggerKeys, k) {
						t.Errorf("ScaledObject trigger %s: unknown prometheus metadata %q", tr.Name, k)
					}
				}
				for _, k := range []string{"serverAddress", "query", "threshold"} {
					if tr.Metadata[k] == "" {
						t.Errorf("ScaledObject trigger %s: no %s", tr.Name, k)
					}
				}
				if v, err := strconv.ParseFloat(tr.Metadata["threshold"], 64); err != nil || v <= 0 || v >= 1 {
					t.Errorf("ScaledObject trigger %s: threshold %q, want a number in (0, 1)", tr.Name, tr.Metadata["threshold"])
				}
				q := tr.Metadata["query"]
				m := regexp.MustCompile(`^sum\(` + hpaMetric + `\{namespace="([^"]+)",engine="([^"]+)"\}\)$`).FindStringSubmatch(q)
				if m == nil || m[1] != r.namespace {
					t.Errorf("ScaledObject query %q: want sum(%s{namespace=%q,engine=NAME})", q, hpaMetric, r.namespace)
					continue
				}
				scaled = append(scaled, m[2])
			}
			slices.Sort(scaled)
			if want := slices.Sorted(slices.Values(engines)); !slices.Equal(scaled, want) {
				t.Errorf("ScaledObject scales on engines %v, want every configured engine %v", scaled, want)
			}
			if so.Spec.MinReplicaCount == nil || *so.Spec.MinReplicaCount < 2 || so.Spec.MaxReplicaCount == nil {
				t.Error("ScaledObject: want minReplicaCount >= 2 and a maxReplicaCount")
			}
		}
	})

	// KEDA's and the plain HPA's behaviour and bounds agree.
	prod, mon := renderDecoded(t, "overlays/production"), renderDecoded(t, "overlays/monitoring")
	h := one[*autoscalingv2.HorizontalPodAutoscaler](t, prod)
	so := one[*scaledObject](t, mon)
	if diff := cmp.Diff(h.Spec.Behavior, behaviors(mon)[0]); diff != "" {
		t.Errorf("ScaledObject behavior differs from the HPA's (-hpa +keda):\n%s", diff)
	}
	if *so.Spec.MinReplicaCount != *h.Spec.MinReplicas || *so.Spec.MaxReplicaCount != h.Spec.MaxReplicas {
		t.Errorf("ScaledObject replicas %d..%d, HPA %d..%d", *so.Spec.MinReplicaCount, *so.Spec.MaxReplicaCount, *h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}
}

// adapterValues is the part of the prometheus-adapter chart's values that
// deploy/prometheus-adapter/values.yaml sets.
type adapterValues struct {
	Rules struct {
		Default bool `json:"default"`
		Custom  []struct {
			SeriesQuery string `json:"seriesQuery"`
			Resources   struct {
				Overrides map[string]struct {
					Resource string `json:"resource"`
				} `json:"overrides"`
			} `json:"resources"`
			Name struct {
				Matches string `json:"matches"`
				As      string `json:"as"`
			} `json:"name"`
			MetricsQuery string `json:"metricsQuery"`
		} `json:"custom"`
	} `json:"rules"`
}

func loadAdapterRules(t *testing.T) *adapterValues {
	t.Helper()
	b, err := os.ReadFile("prometheus-adapter/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var v adapterValues
	if err := yaml.UnmarshalStrict(b, &v); err != nil {
		t.Fatalf("prometheus-adapter/values.yaml: %v", err)
	}
	return &v
}

// TestPrometheusAdapterRule: the adapter serves the HPA's metric per pod.
func TestPrometheusAdapterRule(t *testing.T) {
	v := loadAdapterRules(t)
	found := false
	for _, r := range v.Rules.Custom {
		if r.Name.As != hpaMetric {
			continue
		}
		found = true
		if !strings.HasPrefix(r.SeriesQuery, hpaMetric+"{") || !regexp.MustCompile(r.Name.Matches).MatchString(hpaMetric) {
			t.Errorf("adapter rule for %s: seriesQuery %q / matches %q do not select it", hpaMetric, r.SeriesQuery, r.Name.Matches)
		}
		if r.Resources.Overrides["pod"].Resource != "pod" || r.Resources.Overrides["namespace"].Resource != "namespace" {
			t.Errorf("adapter rule for %s: want pod and namespace overrides (a Pods metric)", hpaMetric)
		}
		if !strings.Contains(r.MetricsQuery, "<<.LabelMatchers>>") || !strings.Contains(r.MetricsQuery, "by (<<.GroupBy>>)") {
			t.Errorf("adapter rule metricsQuery %q: want the HPA's selector (<<.LabelMatchers>>) and grouping by pod", r.MetricsQuery)
		}
	}
	if !found {
		t.Errorf("no adapter rule serves %s", hpaMetric)
	}
}

// TestAccessFiles: the files usid.yaml's access section names come from a
// Secret volume; with more than one pod possible, the WebSocket ticket
// secret is shared (a ticket from one pod must open a socket on another);
// behind the Gateway, X-Forwarded-For is believed from cluster addresses
// (else every anonymous client shares the gateway's quota).
func TestAccessFiles(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, r *rendered) {
		d := usidDeployment(t, r)
		c := usidContainer(t, d)
		cfg, _ := configOf(t, r)
		secretDirs := map[string]string{} // mount path -> Secret name
		for _, m := range c.VolumeMounts {
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Name == m.Name && v.Secret != nil && m.ReadOnly {
					secretDirs[m.MountPath] = v.Secret.SecretName
				}
			}
		}
		for what, f := range map[string]string{"access.keys_file": cfg.Access.KeysFile, "access.ticket_secret_file": cfg.Access.TicketSecret} {
			if f == "" {
				continue
			}
			name, ok := secretDirs[path.Dir(f)]
			if !ok {
				t.Errorf("%s %s: not in a read-only Secret volume (mounted: %v)", what, f, secretDirs)
				continue
			}
			// A Secret the overlay generates must have the key; the
			// production one is created by the operator (README).
			for _, s := range byKind[*corev1.Secret](r) {
				if s.Name == name {
					_, inData := s.Data[path.Base(f)]
					_, inString := s.StringData[path.Base(f)]
					if !inData && !inString {
						t.Errorf("%s %s: Secret %s has no key %s", what, f, name, path.Base(f))
					}
				}
			}
		}
		multi := len(byKind[*autoscalingv2.HorizontalPodAutoscaler](r))+len(byKind[*scaledObject](r)) > 0 ||
			(d.Spec.Replicas != nil && *d.Spec.Replicas > 1)
		if multi && cfg.Access.TicketSecret == "" {
			t.Error("several pods but no access.ticket_secret_file: each pod would sign WebSocket tickets with its own random secret")
		}
		if len(byKind[*gwv1.HTTPRoute](r)) > 0 && len(cfg.Access.TrustedProxies) == 0 {
			t.Error("behind a Gateway but access.trusted_proxies is empty: every anonymous client would share the gateway pods' quota")
		}
		for _, p := range cfg.Access.TrustedProxies {
			if _, err := netip.ParsePrefix(p); err != nil {
				t.Errorf("access.trusted_proxies: %v", err)
			}
		}
	})
}
