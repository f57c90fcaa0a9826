package deploy_test

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// wantRedis says which overlays share a Redis between their pods (the
// evaluation cache and the engine-time budgets). Dev runs one pod: its
// in-memory cache and budgets are already exact (deploy/README.md, "Redis").
var wantRedis = map[string]bool{
	"overlays/dev":        false,
	"overlays/production": true,
	"overlays/monitoring": true,
}

// redisURLs are the Redis URLs usid.yaml configures, by key.
func redisURLs(c *usidConfig) map[string]string {
	out := map[string]string{}
	if c.Cache.Redis != "" && (c.Cache.Enabled == nil || *c.Cache.Enabled) {
		out["cache.redis"] = c.Cache.Redis
	}
	if c.Access.Redis != "" {
		out["access.redis"] = c.Access.Redis
	}
	return out
}

// redisTarget resolves the Redis URLs to the rendered Service and the pods
// behind it: every URL names the same in-cluster Service, by its name in the
// namespace (or its cluster DNS name), and one of its ports. It returns the
// pods and their port.
func redisTarget(t *testing.T, r *rendered, urls map[string]string) (peer, int32) {
	t.Helper()
	var hostPort string
	for key, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			t.Fatalf("%s %q: want redis://HOST:PORT/DB (%v)", key, raw, err)
		}
		if hostPort != "" && u.Host != hostPort {
			t.Errorf("%s names %s, another key %s: one Redis for both", key, u.Host, hostPort)
		}
		hostPort = u.Host
		if db := strings.TrimPrefix(u.Path, "/"); db != "" && db != "0" {
			t.Errorf("%s: database %s; keep 0 (the prefixes keep the two apart, and the ACL covers keys, not databases)", key, db)
		}
	}
	host, portText, err := net.SplitHostPort(hostPort)
	if err != nil {
		t.Fatalf("Redis address %q: want HOST:PORT (%v)", hostPort, err)
	}
	svcName, _, _ := strings.Cut(host, ".")
	if host != svcName && !slices.Contains([]string{svcName + "." + r.namespace, svcName + "." + r.namespace + ".svc",
		svcName + "." + r.namespace + ".svc.cluster.local"}, host) {
		t.Fatalf("Redis host %s: want a Service of namespace %s (NAME or NAME.%s.svc...)", host, r.namespace, r.namespace)
	}
	svc := named[*corev1.Service](t, r, svcName)
	svcPort, _ := strconv.Atoi(portText)
	i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == int32(svcPort) })
	if i < 0 {
		t.Fatalf("Redis port %d is not a port of Service %s", svcPort, svc.Name)
	}
	d := selectedDeployment(t, r, labels.SelectorFromSet(svc.Spec.Selector), "Service "+svc.Name)
	pods := podPeer(t, r, d.Name)
	target := svc.Spec.Ports[i].TargetPort
	if target.Type == intstr.Int && target.IntVal == 0 {
		target = intstr.FromInt32(int32(svcPort))
	}
	return pods, containerPort(t, &d.Spec.Template.Spec.Containers[0], target)
}

// selectedDeployment is the one Deployment whose pods sel selects.
func selectedDeployment(t *testing.T, r *rendered, sel labels.Selector, what string) *appsv1.Deployment {
	t.Helper()
	var found []*appsv1.Deployment
	for _, d := range byKind[*appsv1.Deployment](r) {
		if !sel.Empty() && sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, d := range found {
			names = append(names, d.Name)
		}
		t.Fatalf("%s: selector %q selects the pods of %v, want exactly one Deployment", what, sel, names)
	}
	return found[0]
}

// redisConf is a redis.conf: directive (lower case) -> its arguments, in order.
type redisConf map[string][][]string

func parseRedisConf(text string) (redisConf, error) {
	c := redisConf{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		var args []string
		for _, f := range strings.Fields(line) {
			if f == `""` {
				f = ""
			} else if strings.ContainsAny(f, `"'`) {
				return nil, fmt.Errorf("line %d: quotes other than an empty \"\" are not handled here: %q", n+1, line)
			}
			args = append(args, f)
		}
		c[strings.ToLower(args[0])] = append(c[strings.ToLower(args[0])], args[1:])
	}
	return c, nil
}

// one returns the single value of a directive given once with one argument.
func (c redisConf) one(name string) (string, bool) {
	v := c[name]
	if len(v) != 1 || len(v[0]) != 1 {
		return "", false
	}
	return v[0][0], true
}

// redisBytes reads Redis's memory units (1k = 1000, 1kb = 1024, ...).
func redisBytes(s string) (int64, error) {
	m := regexp.MustCompile(`^([0-9]+)(k|kb|m|mb|g|gb)?$`).FindStringSubmatch(strings.ToLower(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a Redis memory size", s)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	mult := map[string]int64{"": 1, "k": 1e3, "kb": 1 << 10, "m": 1e6, "mb": 1 << 20, "g": 1e9, "gb": 1 << 30}[m[2]]
	return n * mult, nil
}

// redisConfigOf is the redis.conf the Redis pods run: the file named on the
// container's command line, from the ConfigMap mounted there.
func redisConfigOf(t *testing.T, r *rendered, d *appsv1.Deployment) (redisConf, string) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(argv) < 2 || path.Base(argv[0]) != "redis-server" || !strings.HasSuffix(argv[1], ".conf") {
		t.Fatalf("Redis container runs %q: want redis-server FILE.conf", argv)
	}
	if len(argv) > 2 {
		t.Errorf("Redis container: options on the command line %q; keep them in the .conf, where the tests read them", argv[2:])
	}
	file := argv[1]
	for _, m := range c.VolumeMounts {
		if m.MountPath != path.Dir(file) {
			continue
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			cm := named[*corev1.ConfigMap](t, r, v.ConfigMap.Name)
			text, ok := cm.Data[path.Base(file)]
			if !ok {
				t.Fatalf("ConfigMap %s has no %s", cm.Name, path.Base(file))
			}
			conf, err := parseRedisConf(text)
			if err != nil {
				t.Fatalf("%s: %v", path.Base(file), err)
			}
			return conf, text
		}
	}
	t.Fatalf("%s is not in a ConfigMap volume of Deployment %s", file, d.Name)
	return nil, ""
}

// redisGlob matches a Redis key pattern (*, ?, [..]) against a key.
func redisGlob(pattern, key string) bool {
	ok, err := path.Match(pattern, key) // usid's keys have no '/'
	return err == nil && ok
}

// TestRedisConfig: where several pods serve (production, monitoring),
// usid.yaml, as usid reads it, keeps the evaluation cache and the
// engine-time budgets in one Redis, which the overlay runs: the URLs name
// its Service, and its redis.conf makes it a bounded cache (maxmemory below
// the container's memory limit, volatile-lru), keeps nothing on disk, listens
// on the container's port and lets usid's user at usid's keys.
func TestRedisConfig(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, r *rendered) {
		cfg, _ := configOf(t, r)
		urls := redisURLs(cfg)
		want, ok := wantRedis[r.dir]
		if !ok {
			t.Fatalf("%s: add it to wantRedis", r.dir)
		}
		if !want {
			if len(urls) != 0 {
				t.Errorf("usid.yaml sets %v, but this overlay runs no Redis", urls)
			}
			return
		}
		for _, key := range []string{"cache.redis", "access.redis"} {
			if urls[key] == "" {
				t.Errorf("%s is not set: with several pods it must be shared", key)
			}
		}
		if len(urls) == 0 {
			return
		}
		pods, port := redisTarget(t, r, urls)
		d := named[*appsv1.Deployment](t, r, strings.TrimSuffix(pods.name, " pod"))
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
			t.Errorf("Redis Deployment %s: replicas %v, want 1 (two unreplicated Redis behind one Service split the budgets)", d.Name, d.Spec.Replicas)
		}
		if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("Redis Deployment %s: strategy %s, want Recreate (one Redis at a time)", d.Name, d.Spec.Strategy.Type)
		}
		conf, _ := redisConfigOf(t, r, d)
		check := func(ok bool, format string, args ...any) {
			if !ok {
				t.Errorf(format, args...)
			}
		}
		p, _ := conf.one("port")
		check(p == strconv.Itoa(int(port)), "redis.conf port %q, want the container's port %d", p, port)
		policy, _ := conf.one("maxmemory-policy")
		// volatile-lru: the cache's entries and the budgets (all with a
		// TTL) go least recently used first; game jobs under way (no TTL)
		// are never evicted from under the pod running them.
		check(policy == "volatile-lru", "redis.conf maxmemory-policy %q, want volatile-lru (cache entries go, jobs under way stay)", policy)
		check(len(conf["save"]) == 1 && slices.Equal(conf["save"][0], []string{""}), `redis.conf: want save "" (no snapshots: a cache and quotas need no persistence), got %v`, conf["save"])
		ao, _ := conf.one("appendonly")
		check(ao == "no", "redis.conf appendonly %q, want no", ao)
		mm, _ := conf.one("maxmemory")
		maxBytes, err := redisBytes(mm)
		check(err == nil && maxBytes > 0, "redis.conf maxmemory %q: want a size (%v)", mm, err)
		c := d.Spec.Template.Spec.Containers[0]
		limit := c.Resources.Limits[corev1.ResourceMemory]
		// Redis's RSS exceeds maxmemory by its allocator's fragmentation and
		// the clients' buffers: keep a quarter of the limit for them.
		check(maxBytes > 0 && maxBytes*4 <= limit.Value()*3, "redis.conf maxmemory %s > 3/4 of the memory limit %s: Redis would be OOM-killed before it evicts", mm, limit.String())
		dir, ok := conf.one("dir")
		if !ok {
			dir = "/data" // the image's WORKDIR, Redis's default "./"
		}
		{
			writable := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
				return m.MountPath == dir && !m.ReadOnly && slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
					return v.Name == m.Name && v.EmptyDir != nil
				})
			})
			check(writable, "redis.conf dir %s is not a writable emptyDir", dir)
		}
		// The default user (usid's, the URL names none) may touch usid's keys.
		for _, u := range conf["user"] {
			if len(u) == 0 || u[0] != "default" {
				continue
			}
			var patterns []string
			for _, rule := range u[1:] {
				if p, ok := strings.CutPrefix(rule, "~"); ok {
					patterns = append(patterns, p)
				}
				if rule == "allkeys" {
					patterns = append(patterns, "*")
				}
			}
			for key, prefix := range map[string]string{"cache.redis_prefix": cfg.Cache.RedisPrefix, "access.redis_prefix": cfg.Access.RedisPrefix} {
				if prefix == "" {
					t.Errorf("%s is empty: keep the cache's and the budgets' keys apart", key)
				}
				check(slices.ContainsFunc(patterns, func(p string) bool { return redisGlob(p, prefix+"k") }),
					"redis.conf: the default user's key patterns %v do not cover %s %q", patterns, key, prefix)
			}
		}
		// Without a password, protected mode refuses every client but
		// loopback ones: usid's pods would never get in.
		if _, pass := conf.one("requirepass"); !pass && !slices.ContainsFunc(urls2list(urls), func(u string) bool { return strings.Contains(u, "@") }) {
			pm, _ := conf.one("protected-mode")
			check(pm == "no", "redis.conf: no password and protected-mode %q: Redis would refuse usid's pods (want protected-mode no, with the NetworkPolicy admitting usid only)", pm)
		}
		check(cfg.Cache.RedisPrefix != cfg.Access.RedisPrefix, "cache.redis_prefix and access.redis_prefix are both %q", cfg.Cache.RedisPrefix)
		t.Logf("Redis %s:%d, maxmemory %s of %s", pods.name, port, mm, limit.String())
	})
}

func TestRedisConfParsing(t *testing.T) {
	c, err := parseRedisConf("# x\nsave \"\"\nMaxMemory 256mb\nuser default on ~usid:* +@all\n")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := c.one("maxmemory"); v != "256mb" || len(c["save"]) != 1 || !slices.Equal(c["save"][0], []string{""}) || len(c["user"][0]) != 4 {
		t.Errorf("parsed %v", c)
	}
	if _, err := parseRedisConf(`requirepass "a b"`); err == nil {
		t.Error("quoted argument: no error")
	}
	for s, want := range map[string]int64{"256mb": 256 << 20, "1gb": 1 << 30, "100": 100, "2m": 2e6} {
		if got, err := redisBytes(s); err != nil || got != want {
			t.Errorf("redisBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	if _, err := redisBytes("lots"); err == nil {
		t.Error("redisBytes(lots): no error")
	}
	if !redisGlob("usid:*", "usid:eval:k") || redisGlob("usid:*", "other:k") {
		t.Error("redisGlob")
	}
}

var versionTag = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-.+][0-9A-Za-z.-]+)?$`)

// TestEveryWorkload holds every Deployment (usid's and the others, such as
// the production overlay's Redis) to what the usid pod meets: non-root,
// read-only root, no capabilities, seccomp, no API token, only size-limited
// emptyDirs writable; memory request = limit and no CPU limit; liveness and
// readiness probes on its own ports; a pinned image. Every Service,
// NetworkPolicy and PodDisruptionBudget selects the pods of exactly one
// Deployment (usid's selectors never catch another workload's pods).
func TestEveryWorkload(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, r *rendered) {
		for _, d := range byKind[*appsv1.Deployment](r) {
			t.Run(d.Name, func(t *testing.T) {
				checkWorkload(t, r, d)
			})
		}
		for _, s := range byKind[*corev1.Service](r) {
			d := selectedDeployment(t, r, labels.SelectorFromSet(s.Spec.Selector), "Service "+s.Name)
			for _, p := range s.Spec.Ports {
				containerPort(t, &d.Spec.Template.Spec.Containers[0], p.TargetPort)
			}
		}
		for _, np := range byKind[*networkingv1.NetworkPolicy](r) {
			sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
			if err != nil {
				t.Fatal(err)
			}
			d := selectedDeployment(t, r, sel, "NetworkPolicy "+np.Name)
			for _, in := range np.Spec.Ingress {
				for _, p := range in.Ports {
					containerPort(t, &d.Spec.Template.Spec.Containers[0], *p.Port)
				}
			}
			if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
				t.Errorf("NetworkPolicy %s: egress not restricted", np.Name)
			}
		}
		for _, pdb := range byKind[*policyv1.PodDisruptionBudget](r) {
			sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil {
				t.Fatal(err)
			}
			selectedDeployment(t, r, sel, "PodDisruptionBudget "+pdb.Name)
		}
		// Every pod is behind a NetworkPolicy.
		for _, d := range byKind[*appsv1.Deployment](r) {
			if !slices.ContainsFunc(byKind[*networkingv1.NetworkPolicy](r), func(np *networkingv1.NetworkPolicy) bool {
				return selects(&np.Spec.PodSelector, d.Spec.Template.Labels)
			}) {
				t.Errorf("Deployment %s: no NetworkPolicy selects its pods", d.Name)
			}
		}
	})
}

func checkWorkload(t *testing.T, r *rendered, d *appsv1.Deployment) {
	ps := d.Spec.Template.Spec
	check := func(ok bool, format string, args ...any) {
		if !ok {
			t.Errorf(format, args...)
		}
	}
	matches(t, d.Spec.Selector, d.Spec.Template.Labels, "Deployment "+d.Name)
	psc := ps.SecurityContext
	if psc == nil {
		t.Fatal("no pod securityContext")
	}
	check(psc.RunAsNonRoot != nil && *psc.RunAsNonRoot, "pod: runAsNonRoot")
	check(psc.RunAsUser != nil && *psc.RunAsUser > 0, "pod: a numeric non-root runAsUser")
	check(psc.RunAsGroup != nil && *psc.RunAsGroup != 0, "pod: runAsGroup non-zero")
	check(psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault, "pod: seccomp RuntimeDefault")
	check(ps.AutomountServiceAccountToken != nil && !*ps.AutomountServiceAccountToken, "pod: automountServiceAccountToken false")
	check(!ps.HostNetwork && !ps.HostPID && !ps.HostIPC, "pod: no host namespaces")
	check(ps.ServiceAccountName != "" && slices.ContainsFunc(byKind[*corev1.ServiceAccount](r), func(s *corev1.ServiceAccount) bool {
		return s.Name == ps.ServiceAccountName
	}), "pod: runs as ServiceAccount %q, which is not rendered", ps.ServiceAccountName)
	check(ps.TerminationGracePeriodSeconds != nil, "pod: no terminationGracePeriodSeconds")
	check(len(ps.InitContainers) == 0, "pod: init containers are not checked here; add them")
	if len(ps.Containers) != 1 {
		t.Errorf("%d containers: the wiring tests assume one", len(ps.Containers))
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range ps.Volumes {
		volumes[v.Name] = v
		check(v.HostPath == nil, "volume %s: hostPath", v.Name)
	}
	for i := range ps.Containers {
		c := &ps.Containers[i]
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("container %s: no securityContext", c.Name)
			continue
		}
		check(sc.RunAsNonRoot != nil && *sc.RunAsNonRoot, "container %s: runAsNonRoot", c.Name)
		check(sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem, "container %s: readOnlyRootFilesystem", c.Name)
		check(sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation, "container %s: allowPrivilegeEscalation false", c.Name)
		check(sc.Privileged == nil || !*sc.Privileged, "container %s: privileged", c.Name)
		check(sc.Capabilities != nil && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) && len(sc.Capabilities.Add) == 0, "container %s: capabilities drop ALL, add none", c.Name)
		check(sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault, "container %s: seccomp RuntimeDefault", c.Name)
		check(sc.RunAsUser == nil || *sc.RunAsUser > 0, "container %s: runAsUser 0", c.Name)

		// Writable: only emptyDirs with a size limit.
		for _, m := range c.VolumeMounts {
			v, ok := volumes[m.Name]
			check(ok, "container %s: mount %s of no volume", c.Name, m.Name)
			if !m.ReadOnly {
				check(v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil, "container %s: %s is writable but not a size-limited emptyDir", c.Name, m.MountPath)
			}
		}

		// Resources: memory limit = request, a CPU request, no CPU limit.
		req, lim := c.Resources.Requests, c.Resources.Limits
		cpu, mem, memLim := req[corev1.ResourceCPU], req[corev1.ResourceMemory], lim[corev1.ResourceMemory]
		check(cpu.Sign() > 0, "container %s: no CPU request", c.Name)
		check(mem.Sign() > 0 && mem.Cmp(memLim) == 0, "container %s: memory request %s, limit %s: want equal (no overcommit, no surprise OOM kills)", c.Name, mem.String(), memLim.String())
		_, cpuLimit := lim[corev1.ResourceCPU]
		check(!cpuLimit, "container %s: a CPU limit only throttles (and a throttled Redis times usid out)", c.Name)
		check(len(lim) <= 2 && len(req) <= 2, "container %s: resources beyond cpu and memory: %v %v", c.Name, req, lim)

		// Probes: liveness and readiness, on the container's own ports.
		for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
			if p == nil {
				t.Errorf("container %s: no %s probe", c.Name, name)
				continue
			}
			switch {
			case p.HTTPGet != nil:
				containerPort(t, c, p.HTTPGet.Port)
			case p.TCPSocket != nil:
				containerPort(t, c, p.TCPSocket.Port)
			case p.Exec != nil:
				check(len(p.Exec.Command) > 0, "container %s: %s probe: empty exec", c.Name, name)
			default:
				t.Errorf("container %s: %s probe: no handler", c.Name, name)
			}
			check(p.TimeoutSeconds > 0 && p.PeriodSeconds > 0 && p.FailureThreshold > 0, "container %s: %s probe: set period, timeout and failure threshold", c.Name, name)
		}
		check(len(c.Ports) > 0, "container %s: no ports", c.Name)

		// A pinned image from a named registry: usid's own release tag (or
		// the dev overlay's), others a full version or a digest.
		name, digest, hasDigest := strings.Cut(c.Image, "@")
		repo, tag := name, ""
		if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
			repo, tag = name[:i], name[i+1:]
		}
		registry, _, _ := strings.Cut(repo, "/")
		check(strings.Contains(repo, "/") && (strings.ContainsAny(registry, ".:") || registry == "localhost"), "container %s: image %q: name its registry", c.Name, c.Image)
		check(tag != "latest" && (tag != "" || hasDigest), "container %s: image %q: pin a tag or digest, never latest", c.Name, c.Image)
		if hasDigest {
			check(regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(digest), "container %s: image digest %q", c.Name, digest)
		}
		if d.Name != usidName && !hasDigest {
			check(versionTag.MatchString(tag), "container %s: image %q: pin a full version (x.y.z) or a digest; a moving tag changes under you", c.Name, c.Image)
		}
	}
}

func urls2list(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
