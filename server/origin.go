package server

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/usid/usid/session"
)

// loopbackHosts are always the service's own: a browser on the machine.
var loopbackHosts = []string{"localhost", "localhost:*", "127.0.0.1", "127.0.0.1:*", "[::1]", "[::1]:*"}

// sameSite refuses /v1 requests that a browser sends from a page of
// another site, and requests for a Host the service does not answer to.
//
// A browser names the page's origin in Origin; it is allowed when its host
// matches server.hosts, server.origins or a loopback name, never because it
// equals the request's Host: with DNS rebinding a hostile page sends
// Host: evil.example and Origin: http://evil.example alike. Requests
// without Origin (curl, servers, other programs) are not browsers' and pass.
// usid sends no CORS headers: pages of other origins cannot read its
// answers, and JSON bodies (the only ones accepted) need a preflight that
// usid does not grant.
func (s *Server) sameSite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(s.cfg.Hosts) > 0 && !matchHost(strings.ToLower(r.Host), s.cfg.Hosts, loopbackHosts) {
			s.problem(w, r, &session.Error{Code: codeMisdirected, Message: "this server does not answer for host " + clipHost(r.Host), MoveIndex: -1})
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || u.Host == "" || !matchHost(strings.ToLower(u.Host), s.cfg.OriginPatterns, s.cfg.Hosts, loopbackHosts) {
				s.problem(w, r, &session.Error{Code: codeOriginNotAllowed, Message: "requests from pages of origin " + clipHost(o) + " are not allowed (server.origins)", MoveIndex: -1})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// matchHost reports whether host ("name" or "name:port") matches one of
// the patterns (path.Match syntax, as "*.example.com" or "localhost:*").
func matchHost(host string, lists ...[]string) bool {
	for _, l := range lists {
		for _, p := range l {
			p = strings.ToLower(p)
			if ok, _ := path.Match(p, host); ok {
				return true
			}
			// A pattern without a port matches the host on any default port.
			if name, _, found := strings.Cut(host, ":"); found && !strings.Contains(p, ":") && !strings.HasPrefix(host, "[") {
				if ok, _ := path.Match(p, name); ok {
					return true
				}
			}
		}
	}
	return false
}

func clipHost(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return strings.ToValidUTF8(strings.Map(func(r rune) rune {
		if session.IsControl(r) {
			return '?'
		}
		return r
	}, s), "?")
}
