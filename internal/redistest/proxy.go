package redistest

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy is a TCP proxy on a free loopback port in front of a Server: a test
// points usid at Proxy.URL and cuts the link (Cut: every connection is
// closed and new ones are closed as they come, as a network partition or a
// Redis failover shows to a client) and mends it (Mend) while Redis itself
// keeps its data, to see what an outage of a few seconds does.
type Proxy struct {
	Addr string // host:port
	URL  string // redis://host:port/0
	to   string
	l    net.Listener

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	cuts  int // connections refused or closed by a cut
}

// NewProxy starts a proxy to s, closed at the test's end.
func NewProxy(t testing.TB, s *Server) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: l.Addr().String(), to: s.Addr, l: l, conns: map[net.Conn]struct{}{}}
	p.URL = fmt.Sprintf("redis://%s/0", p.Addr)
	go p.accept()
	t.Cleanup(func() {
		l.Close()
		p.Cut()
	})
	return p
}

func (p *Proxy) accept() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.cuts++
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		go p.pipe(c)
	}
}

func (p *Proxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.to)
	if err == nil {
		p.mu.Lock()
		if p.cut {
			up.Close()
			err = net.ErrClosed
		} else {
			p.conns[up] = struct{}{}
		}
		p.mu.Unlock()
	}
	if err != nil {
		c.Close()
		return
	}
	go func() {
		io.Copy(up, c)
		up.Close()
	}()
	io.Copy(c, up)
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// Cut closes every connection through the proxy and every new one until
// Mend.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
		p.cuts++
	}
	clear(p.conns)
}

// Mend lets connections through again.
func (p *Proxy) Mend() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// Cuts is how many connections the cuts closed or refused.
func (p *Proxy) Cuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}
