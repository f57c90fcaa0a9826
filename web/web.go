// Package web serves usid's browser pages: the board application for
// shogi at /, chess at /chess and othello at /othello (one controller, a
// module per game), the tsume (mate problem) solver at /tsume, the watch
// page of a broadcast at /watch/{id} (and of a match's game at
// /watch/{match}/{n}), the page of an engine match at /match/{id}, with their scripts, styles and fonts
// under /static/. Everything is embedded in the binary with go:embed; the
// pages are plain ES modules, CSS and SVG, so there is no build step.
//
// The pages talk to usid itself (same origin): /v1/validate for legal moves
// and Japanese notation, /v1/engines, /v1/mate and the /v1/ws WebSocket.
//
// Caching: the HTML pages refer to their assets under a content-hashed prefix
// (/static/<hash>/...), which is cached for a year as immutable; a new binary
// with changed assets has a new hash, so browsers never mix old and new
// files. The pages themselves are revalidated on every load (ETag).
//
// Handler is safe for concurrent use; everything it serves is computed once.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

//go:embed pages static
var files embed.FS

// hashLen is the length of the hex content hash in versioned asset URLs.
const hashLen = 12

// contentTypes is fixed here rather than taken from mime.TypeByExtension so
// that a machine's /etc/mime.types cannot change what browsers get (module
// scripts are refused unless served as JavaScript).
var contentTypes = map[string]string{
	".html":  "text/html; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".svg":   "image/svg+xml",
	".woff2": "font/woff2",
	".txt":   "text/plain; charset=utf-8",
	".json":  "application/json",
	".png":   "image/png",
}

// pageSecurity is the Content-Security-Policy of the pages: everything from
// usid itself and nothing inline (scripts set styles through CSSOM, which
// CSP allows).
const pageSecurity = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// asset is one file ready to serve.
type asset struct {
	body  []byte
	gzip  []byte // nil when compressing does not pay
	ctype string
	etag  string
}

type site struct {
	hash   string            // content hash of all static files
	pages  map[string]*asset // by URL path: "/", "/tsume"
	watch  *asset            // /watch/{id}: one page for every broadcast (and match game)
	match  *asset            // /match/{id}: one page for every engine match
	static map[string]*asset // by path below /static/: "js/board.js"
}

var (
	loadOnce sync.Once
	loaded   *site
	loadErr  error
)

// Handler returns the handler for the pages and their assets. It answers
// GET and HEAD for /, /tsume and /static/...; any other path is 404. Mount it
// at those three routes (or as the router's fallback).
func Handler() http.Handler {
	loadOnce.Do(func() { loaded, loadErr = load(files) })
	if loadErr != nil {
		// The embedded files are part of the binary: failing here is a build bug.
		panic("web: " + loadErr.Error())
	}
	return loaded
}

// StaticHash is the content hash in the versioned asset URLs, e.g. for logs.
func StaticHash() string {
	Handler()
	return loaded.hash
}

func load(fsys fs.FS) (*site, error) {
	s := &site{pages: map[string]*asset{}, static: map[string]*asset{}}
	h := sha256.New()
	err := fs.WalkDir(fsys, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "static/")
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
		a, err := newAsset(rel, b)
		if err != nil {
			return err
		}
		s.static[rel] = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.hash = hex.EncodeToString(h.Sum(nil))[:hashLen]

	// Every page is a template, executed once here, with the parts the
	// pages share (pages/parts: the top bar, the board pages' modules, the
	// second engine's panel).
	pages := map[string][]byte{}
	render := func(name string, data any) ([]byte, error) {
		t, err := template.New(path.Base(name)).Funcs(template.FuncMap{"topbar": newTopbar}).ParseFS(fsys, name, partsGlob)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return b.Bytes(), nil
	}
	for route, name := range map[string]string{"/tsume": "pages/tsume.html", "/watch/": "pages/watch.html", "/match/": "pages/match.html"} {
		b, err := render(name, nil)
		if err != nil {
			return nil, err
		}
		pages[route] = b
	}
	for route, p := range boardPages {
		b, err := render("pages/board.html", p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", route, err)
		}
		pages[route] = b
	}
	for route, b := range pages {
		name := "pages" + route + ".html"
		// Point every asset reference at the versioned prefix.
		b = bytes.ReplaceAll(b, []byte(`"/static/`), []byte(`"/static/`+s.hash+`/`))
		a, err := newAsset(name, b)
		if err != nil {
			return nil, err
		}
		s.pages[route] = a
	}
	s.watch, s.match = s.pages["/watch/"], s.pages["/match/"]
	delete(s.pages, "/watch/")
	delete(s.pages, "/match/")
	return s, nil
}

// partsGlob names the parts the pages share (templates they execute by
// name).
const partsGlob = "pages/parts/*.html"

// topbar is what differs in the top bar between pages (pages/parts/topbar.html):
// the current tab ("" for none), the notation choice ("", "shown",
// "hidden") and whether the page shows its connection.
type topbar struct {
	Tab, Notation string
	Connection    bool
}

func newTopbar(tab, notation string, connection bool) topbar {
	return topbar{Tab: tab, Notation: notation, Connection: connection}
}

// boardPage is what differs between the board pages of pages/board.html:
// the game (its module, its i18n keys: "<game>.copy", ...), the files the
// record picker offers, the sides in the play panel's order (the side a
// player usually takes first), and the side the graph's top means.
type boardPage struct {
	Game, Accept, Ahead string
	Sides               []string
}

// boardPages are the pages served from pages/board.html, by route:
// shogi's (the board page the service began with: its own words where
// the template tests $shogi), chess's and othello's.
var boardPages = map[string]boardPage{
	"/":        {Game: "shogi"},
	"/chess":   {Game: "chess", Accept: ".pgn,.fen,.txt", Ahead: "White", Sides: []string{"w", "b"}},
	"/othello": {Game: "othello", Accept: ".txt", Ahead: "Black", Sides: []string{"b", "w"}},
}

func newAsset(name string, body []byte) (*asset, error) {
	ct, ok := contentTypes[path.Ext(name)]
	if !ok {
		return nil, fmt.Errorf("%s: no content type for %q", name, path.Ext(name))
	}
	sum := sha256.Sum256(body)
	a := &asset{body: body, ctype: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	if strings.HasPrefix(ct, "text/") || ct == "image/svg+xml" || ct == "application/json" {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(body)
		zw.Close()
		if buf.Len() < len(body)*9/10 {
			a.gzip = buf.Bytes()
		}
	}
	return a, nil
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var (
		a     *asset
		cache string
		page  bool
	)
	p := r.URL.Path
	switch {
	case s.pages[p] != nil:
		a, cache, page = s.pages[p], "no-cache", true
	case strings.HasPrefix(p, "/watch/") && (isBroadcastID(strings.TrimPrefix(p, "/watch/")) || isMatchGame(strings.TrimPrefix(p, "/watch/"))):
		a, cache, page = s.watch, "no-cache", true
	case strings.HasPrefix(p, "/match/") && isMatchID(strings.TrimPrefix(p, "/match/")):
		a, cache, page = s.match, "no-cache", true
	case p == "/index.html":
		http.Redirect(w, r, "/", http.StatusMovedPermanently)
		return
	case p == "/tsume/":
		http.Redirect(w, r, "/tsume", http.StatusMovedPermanently)
		return
	case strings.HasPrefix(p, "/static/"):
		rel := strings.TrimPrefix(p, "/static/")
		cache = "no-cache"
		if v, rest, ok := strings.Cut(rel, "/"); ok && isHash(v) {
			rel = rest
			if v == s.hash {
				cache = "public, max-age=31536000, immutable"
			}
			// An older hash (a page from before a deploy) gets today's file,
			// revalidated, rather than a broken page.
		}
		a = s.static[rel]
	}
	if a == nil {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}

	hdr := w.Header()
	hdr.Set("Content-Type", a.ctype)
	hdr.Set("Cache-Control", cache)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Add("Vary", "Accept-Encoding")
	if page {
		hdr.Set("Content-Security-Policy", pageSecurity)
		hdr.Set("Referrer-Policy", "same-origin")
		hdr.Set("X-Frame-Options", "DENY")
	}
	body, etag := a.body, a.etag
	if a.gzip != nil && acceptsGzip(r) {
		body, etag = a.gzip, strings.TrimSuffix(a.etag, `"`)+`-gz"`
		hdr.Set("Content-Encoding", "gzip")
	}
	hdr.Set("ETag", etag)
	// ServeContent answers If-None-Match with 304, HEAD and Range requests.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

func isHash(s string) bool {
	if len(s) != hashLen {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// isBroadcastID reports whether s can be a broadcast's id (32 lower-case
// hex digits), isMatchID a match's (24), isMatchGame a match's game
// ("{match id}/{index}"): any other /watch/ or /match/ path is 404
// without reaching the page.
func isBroadcastID(s string) bool { return isHexID(s, 32) }

func isMatchID(s string) bool { return isHexID(s, 24) }

func isMatchGame(s string) bool {
	id, n, ok := strings.Cut(s, "/")
	if !ok || !isMatchID(id) || n == "" || len(n) > 6 || (n[0] == '0' && len(n) > 1) {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isHexID(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// acceptsGzip reports whether the request allows gzip (q=0 refuses it).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
