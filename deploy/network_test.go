package deploy_test

import (
	"net/netip"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// peer is one end of a connection, as NetworkPolicies see it: a pod (its
// namespace, labels and container ports) or an address outside the cluster
// (namespace "").
type peer struct {
	name      string
	namespace string
	labels    map[string]string
	ip        netip.Addr
	ports     []corev1.ContainerPort // to resolve named ports on the receiving side
}

func (p peer) String() string { return p.name }

// nsLabels are the labels the API server gives every namespace.
func nsLabels(ns string) labels.Set { return labels.Set{"kubernetes.io/metadata.name": ns} }

func selects(sel *metav1.LabelSelector, lbls map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		panic(err) // checked by the callers' wiring tests
	}
	return s.Matches(labels.Set(lbls))
}

// peerMatches reports whether a policy rule's peers (in the policy's
// namespace) include p. No peers: everyone.
func peerMatches(peers []networkingv1.NetworkPolicyPeer, policyNS string, p peer) bool {
	if len(peers) == 0 {
		return true
	}
	for _, np := range peers {
		switch {
		case np.IPBlock != nil:
			cidr, err := netip.ParsePrefix(np.IPBlock.CIDR)
			if err != nil || !p.ip.IsValid() || !cidr.Contains(p.ip) {
				continue
			}
			excluded := false
			for _, e := range np.IPBlock.Except {
				if ex, err := netip.ParsePrefix(e); err == nil && ex.Contains(p.ip) {
					excluded = true
				}
			}
			if !excluded {
				return true
			}
		case p.namespace == "":
			// Selectors only ever select pods.
		case np.NamespaceSelector != nil:
			if selects(np.NamespaceSelector, nsLabels(p.namespace)) &&
				(np.PodSelector == nil || selects(np.PodSelector, p.labels)) {
				return true
			}
		case np.PodSelector != nil:
			if p.namespace == policyNS && selects(np.PodSelector, p.labels) {
				return true
			}
		}
	}
	return false
}

// portMatches reports whether a rule's ports include port/proto on dst (a
// named port is dst's container port of that name). No ports: every port.
func portMatches(ports []networkingv1.NetworkPolicyPort, dst peer, port int32, proto corev1.Protocol) bool {
	if len(ports) == 0 {
		return true
	}
	for _, pp := range ports {
		want := corev1.ProtocolTCP
		if pp.Protocol != nil {
			want = *pp.Protocol
		}
		if want != proto {
			continue
		}
		if pp.Port == nil {
			return true
		}
		var n int32 = -1
		if pp.Port.Type == intstr.Int {
			n = pp.Port.IntVal
		} else {
			for _, cp := range dst.ports {
				if cp.Name == pp.Port.StrVal && cp.Protocol == proto {
					n = cp.ContainerPort
				}
			}
		}
		end := n
		if pp.EndPort != nil {
			end = *pp.EndPort
		}
		if n >= 0 && port >= n && port <= end {
			return true
		}
	}
	return false
}

// allowed evaluates the rendered NetworkPolicies (all in r's namespace) as
// Kubernetes does: a connection passes if the sender's egress and the
// receiver's ingress both admit it, and a pod no policy of that direction
// selects admits everything.
func allowed(r *rendered, from, to peer, port int32, proto corev1.Protocol) bool {
	return policySide(r, from, to, port, proto, networkingv1.PolicyTypeEgress) &&
		policySide(r, to, from, port, proto, networkingv1.PolicyTypeIngress)
}

// policySide is one half of allowed: whether self's policies of direction
// dir admit a connection with other (self sends when dir is Egress, else
// receives) on port/proto.
func policySide(r *rendered, self, other peer, port int32, proto corev1.Protocol, dir networkingv1.PolicyType) bool {
	{
		if self.namespace != r.namespace {
			return true // no rendered policy applies there
		}
		selected := false
		for _, np := range byKind[*networkingv1.NetworkPolicy](r) {
			if !selects(&np.Spec.PodSelector, self.labels) {
				continue
			}
			types := np.Spec.PolicyTypes
			if len(types) == 0 {
				types = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
				if len(np.Spec.Egress) > 0 {
					types = append(types, networkingv1.PolicyTypeEgress)
				}
			}
			applies := false
			for _, ty := range types {
				applies = applies || ty == dir
			}
			if !applies {
				continue
			}
			selected = true
			if dir == networkingv1.PolicyTypeEgress {
				for _, rule := range np.Spec.Egress {
					if peerMatches(rule.To, np.Namespace, other) && portMatches(rule.Ports, other, port, proto) {
						return true
					}
				}
			} else {
				for _, rule := range np.Spec.Ingress {
					if peerMatches(rule.From, np.Namespace, other) && portMatches(rule.Ports, self, port, proto) {
						return true
					}
				}
			}
		}
		return !selected
	}
}

// podPeer is the pods of the Deployment called name, as rendered.
func podPeer(t *testing.T, r *rendered, name string) peer {
	t.Helper()
	d := named[*appsv1.Deployment](t, r, name)
	var ports []corev1.ContainerPort
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
			ports = append(ports, p)
		}
	}
	return peer{name: name + " pod", namespace: r.namespace, labels: d.Spec.Template.Labels, ip: netip.MustParseAddr("10.0.0.10"), ports: ports}
}

// TestNetworkPaths: usid's pods may open connections only to their Redis (on
// its port) and to the cluster DNS (to find it), and only where the
// configuration names a Redis; Redis admits usid's pods only, on its port,
// and opens nothing; usid is reached on its HTTP port.
func TestNetworkPaths(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, r *rendered) {
		cfg, _ := configOf(t, r)
		usid := podPeer(t, r, usidName)
		dns := peer{name: "kube-dns pod", namespace: "kube-system", labels: map[string]string{"k8s-app": "kube-dns"},
			ip: netip.MustParseAddr("10.96.0.10"), ports: []corev1.ContainerPort{
				{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}, {Name: "dns-tcp", ContainerPort: 53, Protocol: corev1.ProtocolTCP}}}
		fakeDNS := peer{name: "a pod labelled kube-dns in another namespace", namespace: "default", labels: dns.labels, ip: netip.MustParseAddr("10.0.5.5"), ports: dns.ports}
		otherSys := peer{name: "another kube-system pod", namespace: "kube-system", labels: map[string]string{"k8s-app": "metrics-server"}, ip: netip.MustParseAddr("10.0.3.3")}
		gateway := peer{name: "gateway pod", namespace: "gateway-system", labels: map[string]string{"app": "gateway"}, ip: netip.MustParseAddr("10.0.1.1")}
		neighbour := peer{name: "another pod in the namespace", namespace: r.namespace, labels: map[string]string{"app": "other"}, ip: netip.MustParseAddr("10.0.2.2"),
			ports: []corev1.ContainerPort{{Name: "redis", ContainerPort: 6379, Protocol: corev1.ProtocolTCP}}}
		impostor := peer{name: "a pod labelled usid in another namespace", namespace: "default", labels: usid.labels, ip: netip.MustParseAddr("10.0.4.4")}
		internet := peer{name: "an address outside the cluster", ip: netip.MustParseAddr("203.0.113.7")}
		tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP

		type path struct {
			from, to peer
			port     int32
			proto    corev1.Protocol
			want     bool
		}
		httpPort := listenPort(t, cfg)
		paths := []path{
			{gateway, usid, httpPort, tcp, true},
			{gateway, usid, httpPort + 1, tcp, false},
			{usid, internet, 443, tcp, false},
			{usid, internet, 53, udp, false},
			{usid, neighbour, 6379, tcp, false},
			{usid, otherSys, 53, udp, false},
			{usid, gateway, 8080, tcp, false},
		}
		ownEgress, ownIngress := map[string]bool{usid.name: true}, map[string]bool{}
		urls := redisURLs(cfg)
		if len(urls) == 0 {
			// Nothing to reach: every connection out is refused.
			paths = append(paths, path{usid, dns, 53, udp, false}, path{usid, dns, 53, tcp, false})
			if n := len(byKind[*appsv1.Deployment](r)); n != 1 {
				t.Errorf("no Redis in usid.yaml, but %d Deployments", n)
			}
		} else {
			redis, port := redisTarget(t, r, urls)
			ownEgress[redis.name], ownIngress[redis.name] = true, true
			paths = append(paths,
				path{usid, redis, port, tcp, true},
				path{usid, dns, 53, udp, true},
				path{usid, dns, 53, tcp, true},
				path{usid, dns, 80, tcp, false},
				path{usid, fakeDNS, 53, udp, false},
				path{usid, redis, port + 1, tcp, false},
				path{usid, redis, port, udp, false},
				path{neighbour, redis, port, tcp, false},
				path{impostor, redis, port, tcp, false},
				path{gateway, redis, port, tcp, false},
				path{redis, usid, httpPort, tcp, false},
				path{redis, internet, 443, tcp, false},
				path{redis, dns, 53, udp, false},
				path{redis, neighbour, 6379, tcp, false},
			)
		}
		verb := map[bool]string{true: "allowed", false: "refused"}
		for _, p := range paths {
			if got := allowed(r, p.from, p.to, p.port, p.proto); got != p.want {
				t.Errorf("%v -> %v port %d/%s: want %s, got the opposite", p.from, p.to, p.port, p.proto, verb[p.want])
			}
			// Each side's own policy says the same, so that neither rests on
			// the other: usid's and Redis's egress, Redis's ingress (usid's
			// admits anyone on its HTTP port).
			if ownEgress[p.from.name] {
				if got := policySide(r, p.from, p.to, p.port, p.proto, networkingv1.PolicyTypeEgress); got != p.want {
					t.Errorf("%v's egress policy: -> %v port %d/%s %s, want %s", p.from, p.to, p.port, p.proto, verb[got], verb[p.want])
				}
			}
			if ownIngress[p.to.name] {
				if got := policySide(r, p.to, p.from, p.port, p.proto, networkingv1.PolicyTypeIngress); got != p.want {
					t.Errorf("%v's ingress policy: <- %v port %d/%s %s, want %s", p.to, p.from, p.port, p.proto, verb[got], verb[p.want])
				}
			}
		}
	})
}

// TestNetworkEvaluator checks allowed on policies whose answers are known.
func TestNetworkEvaluator(t *testing.T) {
	ns := "x"
	tcp := corev1.ProtocolTCP
	port := func(p intstr.IntOrString) []networkingv1.NetworkPolicyPort {
		return []networkingv1.NetworkPolicyPort{{Port: &p}}
	}
	a := peer{name: "a", namespace: ns, labels: map[string]string{"app": "a"}, ip: netip.MustParseAddr("10.0.0.1")}
	b := peer{name: "b", namespace: ns, labels: map[string]string{"app": "b"}, ip: netip.MustParseAddr("10.0.0.2"),
		ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 80, Protocol: tcp}}}
	out := peer{name: "out", ip: netip.MustParseAddr("192.0.2.1")}
	sel := func(app string) metav1.LabelSelector {
		return metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	pol := func(spec networkingv1.NetworkPolicySpec) *rendered {
		np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}, Spec: spec}
		return &rendered{namespace: ns, objs: []object{{"networking.k8s.io/v1", "NetworkPolicy", ns, "p", np}}}
	}
	egressOnly := []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
	bSel := sel("b")
	for _, tc := range []struct {
		name     string
		r        *rendered
		from, to peer
		port     int32
		want     bool
	}{
		{"no policy", &rendered{namespace: ns}, a, b, 80, true},
		{"egress denied", pol(networkingv1.NetworkPolicySpec{PodSelector: sel("a"), PolicyTypes: egressOnly}), a, b, 80, false},
		{"egress to b by named port", pol(networkingv1.NetworkPolicySpec{PodSelector: sel("a"), PolicyTypes: egressOnly,
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &bSel}}, Ports: port(intstr.FromString("web"))}}}), a, b, 80, true},
		{"egress to b, other port", pol(networkingv1.NetworkPolicySpec{PodSelector: sel("a"), PolicyTypes: egressOnly,
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &bSel}}, Ports: port(intstr.FromInt32(80))}}}), a, b, 81, false},
		{"pod selector is not an address", pol(networkingv1.NetworkPolicySpec{PodSelector: sel("a"), PolicyTypes: egressOnly,
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}}}), a, out, 80, false},
		{"ip block", pol(networkingv1.NetworkPolicySpec{PodSelector: sel("a"), PolicyTypes: egressOnly,
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24"}}}}}}), a, out, 80, true},
		{"ingress only from a", pol(networkingv1.NetworkPolicySpec{PodSelector: sel("b"),
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: ptr(sel("a"))}}}}}), b, b, 80, false},
		{"ingress from a", pol(networkingv1.NetworkPolicySpec{PodSelector: sel("b"),
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: ptr(sel("a"))}}}}}), a, b, 80, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := allowed(tc.r, tc.from, tc.to, tc.port, tcp); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
