package session

import (
	"net/netip"
	"sync"
)

// Places a client holds for a long time (games in progress, broadcasts,
// viewers, WebSocket sessions) are bounded per client, per network and in
// all, with one rule for every kind: a client's networks are the prefixes
// one subscriber may hold addresses in, an IPv4 /24, an IPv6 /64, /56 and
// /48 (one home's and one site's delegations), and each wider prefix may
// hold twice what the next narrower one may (a /56 twice a /64's bound, a
// /48 four times), so that neither one subscriber's many addresses nor its
// many /64s can take every place.

// NetworksOf is the networks of address a, narrowest first, as
// Caller.Networks carries them: "net:1.2.3.0/24"; "net:2001:db8:1:2::/64",
// "net:2001:db8:1::/56", "net:2001:db8::/48".
func NetworksOf(a netip.Addr) []string {
	a = a.Unmap().WithZone("")
	bits := []int{24}
	if a.Is6() {
		bits = []int{64, 56, 48}
	}
	out := make([]string, len(bits))
	for i, b := range bits {
		out[i] = "net:" + netip.PrefixFrom(a, b).Masked().String()
	}
	return out
}

// NetworkBound is the bound of a client's i-th network (Caller.Networks,
// narrowest first) when its narrowest may hold perNetwork places: doubled
// at each wider prefix.
func NetworkBound(perNetwork, i int) int { return perNetwork << i }

// Bounds are the places one client, one network (its narrowest; wider ones
// by NetworkBound) and everyone together may hold. A zero bound is none.
type Bounds struct {
	PerClient, PerNetwork, Total int
}

// Full is the bound a place was refused by: "client", "network" (Network
// names the prefix) or "total", and its Max.
type Full struct {
	What, Network string
	Max           int
}

// Check reports which of b a new place would pass, counts (per client, per
// network, total) given by count, or nil when it fits. Stores that keep
// the counts elsewhere (Redis) check the same way in their scripts.
func (b Bounds) Check(client string, networks []string, count func(key string) int, total int) *Full {
	if b.PerClient > 0 && count(client) >= b.PerClient {
		return &Full{What: "client", Max: b.PerClient}
	}
	for i, n := range networks {
		if m := NetworkBound(b.PerNetwork, i); b.PerNetwork > 0 && count(n) >= m {
			return &Full{What: "network", Network: n, Max: m}
		}
	}
	if b.Total > 0 && total >= b.Total {
		return &Full{What: "total", Max: b.Total}
	}
	return nil
}

// Places counts the places held per client and per network, and in all.
// Entries leave when their count comes back to zero, so its memory is
// bounded by the places held. Safe for concurrent use; the zero Places is
// empty.
type Places struct {
	mu    sync.Mutex
	n     map[string]int
	total int
}

// Take counts a place of client in networks if b allows it; otherwise it
// counts nothing and says which bound is full.
func (p *Places) Take(client string, networks []string, b Bounds) *Full {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := b.Check(client, networks, func(k string) int { return p.n[k] }, p.total); f != nil {
		return f
	}
	p.addLocked(client, networks, 1)
	return nil
}

// Add counts a place whatever the bounds (one taken over from another
// instance, which the shared store admitted).
func (p *Places) Add(client string, networks []string) {
	p.mu.Lock()
	p.addLocked(client, networks, 1)
	p.mu.Unlock()
}

// Give gives back a place Take or Add counted.
func (p *Places) Give(client string, networks []string) {
	p.mu.Lock()
	p.addLocked(client, networks, -1)
	p.mu.Unlock()
}

// Held is what key (a client or a network) holds, and the total.
func (p *Places) Held(key string) (int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[key], p.total
}

func (p *Places) addLocked(client string, networks []string, d int) {
	if p.n == nil {
		p.n = map[string]int{}
	}
	p.total += d
	for _, k := range append([]string{client}, networks...) {
		if p.n[k] += d; p.n[k] <= 0 {
			delete(p.n, k)
		}
	}
}
