package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPages(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		path, title string
	}{
		{"/", "analysis board"},
		{"/tsume", "tsume solver"},
		{"/watch/0f1e2d3c4b5a69788796a5b4c3d2e1f0", "broadcast"}, // any id: the page asks usid for it
		{"/watch/0f1e2d3c4b5a69788796a5b4/3", "broadcast"},       // a match's game
		{"/match/0f1e2d3c4b5a69788796a5b4", "match"},
	} {
		res := get(t, h, "GET", tc.path, nil)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: status %d, want 200", tc.path, res.StatusCode)
		}
		if got, want := res.Header.Get("Content-Type"), "text/html; charset=utf-8"; got != want {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, got, want)
		}
		if got, want := res.Header.Get("Cache-Control"), "no-cache"; got != want {
			t.Errorf("GET %s: Cache-Control %q, want %q", tc.path, got, want)
		}
		if res.Header.Get("Content-Security-Policy") == "" || res.Header.Get("ETag") == "" {
			t.Errorf("GET %s: missing CSP or ETag: %v", tc.path, res.Header)
		}
		b := body(t, res)
		if !strings.Contains(b, "<title>") || !strings.Contains(b, tc.title) {
			t.Errorf("GET %s: body lacks title %q", tc.path, tc.title)
		}
		if strings.Contains(b, `"/static/js`) || strings.Contains(b, `"/static/css`) {
			t.Errorf("GET %s: an asset reference was not versioned", tc.path)
		}
	}
}

var (
	htmlRef   = regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	jsImport  = regexp.MustCompile(`(?m)(?:^\s*import\s[^'"]*?from\s*|^\s*import\s*|import\(\s*)['"]([^'"]+)['"]`)
	cssURLRef = regexp.MustCompile(`url\(\s*['"]?([^'")]+)['"]?\s*\)`)
)

// refs lists what a served file refers to, by its content type.
func refs(ctype, text string) []string {
	var re *regexp.Regexp
	switch {
	case strings.HasPrefix(ctype, "text/html"):
		re = htmlRef
	case strings.HasPrefix(ctype, "text/javascript"):
		re = jsImport
	case strings.HasPrefix(ctype, "text/css"):
		re = cssURLRef
	default:
		return nil
	}
	var out []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestReferencesExist crawls from the pages through every src/href, module
// import and CSS url() and requires each to be served with the content type
// its extension promises. It also requires every embedded static file to be
// reachable, so nothing is shipped dead.
func TestReferencesExist(t *testing.T) {
	h := Handler()
	wantType := map[string]string{
		".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
		".svg": "image/svg+xml", ".woff2": "font/woff2", ".html": "text/html; charset=utf-8",
	}
	seen := map[string]bool{}
	queue := []string{"/", "/tsume", "/watch/0123456789abcdef0123456789abcdef", "/match/0123456789abcdef01234567"}
	reached := map[string]bool{}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		res := get(t, h, "GET", p, nil)
		if res.StatusCode != 200 {
			t.Errorf("GET %s: status %d, want 200", p, res.StatusCode)
			continue
		}
		ct := res.Header.Get("Content-Type")
		if want, ok := wantType[path.Ext(p)]; ok && ct != want {
			t.Errorf("GET %s: Content-Type %q, want %q", p, ct, want)
		}
		if rel, ok := strings.CutPrefix(p, "/static/"+StaticHash()+"/"); ok {
			reached[rel] = true
		}
		base, _ := url.Parse(p)
		for _, r := range refs(ct, body(t, res)) {
			u, err := url.Parse(r)
			if err != nil {
				t.Errorf("%s: bad reference %q", p, r)
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				t.Errorf("%s refers to %q: the pages must load nothing from outside usid", p, r)
				continue
			}
			target := base.ResolveReference(u).Path
			switch {
			case strings.HasPrefix(target, "/static/"), target == "/", target == "/tsume", target == "/chess", target == "/othello":
				queue = append(queue, target)
			case target == "/openapi.yaml":
				// served by the server package, not by web
			default:
				t.Errorf("%s refers to %q, which web does not serve", p, r)
			}
		}
	}
	err := fs.WalkDir(files, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, "static/")
		if !reached[rel] && path.Ext(rel) != ".txt" {
			t.Errorf("static/%s is embedded but no page refers to it", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(reached) < 10 {
		t.Errorf("crawl reached only %d static files: %v", len(reached), reached)
	}
}

func TestCaching(t *testing.T) {
	h := Handler()
	hash := StaticHash()
	for _, tc := range []struct {
		path, cache string
	}{
		{"/static/" + hash + "/js/board.js", "public, max-age=31536000, immutable"},
		{"/static/js/board.js", "no-cache"},
		{"/static/0123456789ab/js/board.js", "no-cache"}, // a page from an older build
	} {
		res := get(t, h, "GET", tc.path, nil)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: status %d", tc.path, res.StatusCode)
		}
		if got := res.Header.Get("Cache-Control"); got != tc.cache {
			t.Errorf("GET %s: Cache-Control %q, want %q", tc.path, got, tc.cache)
		}
		if got, want := res.Header.Get("Content-Type"), "text/javascript; charset=utf-8"; got != want {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, got, want)
		}
	}

	res := get(t, h, "GET", "/", nil)
	etag := res.Header.Get("ETag")
	res = get(t, h, "GET", "/", map[string]string{"If-None-Match": etag})
	if res.StatusCode != http.StatusNotModified {
		t.Errorf("GET / with If-None-Match %s: status %d, want 304", etag, res.StatusCode)
	}
}

func TestGzip(t *testing.T) {
	h := Handler()
	p := "/static/" + StaticHash() + "/css/usid.css"
	plain := body(t, get(t, h, "GET", p, nil))
	res := get(t, h, "GET", p, map[string]string{"Accept-Encoding": "br, gzip"})
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("GET %s accepting gzip: Content-Encoding %q", p, res.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	if !bytes.Equal(unzipped, []byte(plain)) {
		t.Errorf("gzip body differs from the plain body")
	}
	res = get(t, h, "GET", p, map[string]string{"Accept-Encoding": "gzip;q=0"})
	if res.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 still got Content-Encoding %q", res.Header.Get("Content-Encoding"))
	}
	// Fonts are compressed already.
	res = get(t, h, "GET", "/static/fonts/usid-pieces.woff2", map[string]string{"Accept-Encoding": "gzip"})
	if res.Header.Get("Content-Encoding") != "" {
		t.Errorf("woff2 got Content-Encoding %q", res.Header.Get("Content-Encoding"))
	}
}

func TestNotServed(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/nope", 404},
		{"GET", "/static/", 404},
		{"GET", "/static/js/missing.js", 404},
		{"GET", "/static/../web.go", 404},
		{"GET", "/pages/index.html", 404},
		{"POST", "/", 405},
		{"HEAD", "/tsume", 200},
		{"GET", "/tsume/", 301},
		{"GET", "/watch/", 404},
		{"GET", "/watch", 404},
		{"GET", "/watch/0F1E2D3C4B5A69788796A5B4C3D2E1F0", 404}, // ids are lower-case
		{"GET", "/watch/0f1e2d3c4b5a69788796a5b4c3d2e1f0/x", 404},
		{"GET", "/watch/0f1e2d3c4b5a69788796a5b4/", 404},
		{"GET", "/watch/0f1e2d3c4b5a69788796a5b4/01", 404},
		{"GET", "/watch/0f1e2d3c4b5a69788796a5b4/1x", 404},
		{"GET", "/match/0f1e2d3c4b5a69788796a5b4/1", 404},
		{"GET", "/match/0F1E2D3C4B5A69788796A5B4", 404},
		{"GET", "/match/", 404},
	} {
		res := get(t, h, tc.method, tc.path, nil)
		if res.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, res.StatusCode, tc.status)
		}
	}
}

func TestRefs(t *testing.T) {
	js := "import { Board } from './board.js';\nimport * as api from \"./api.js\";\nimport './side.js';\nconst x = 'import from nowhere';\nconst m = import('./lazy.js');\n"
	got := strings.Join(refs("text/javascript; charset=utf-8", js), " ")
	if want := "./board.js ./api.js ./side.js ./lazy.js"; got != want {
		t.Errorf("refs(js) = %q, want %q", got, want)
	}
	css := `@font-face { src: url("../fonts/a.woff2") format("woff2"); } .x { background: url(../img/b.svg); }`
	if got, want := strings.Join(refs("text/css; charset=utf-8", css), " "), "../fonts/a.woff2 ../img/b.svg"; got != want {
		t.Errorf("refs(css) = %q, want %q", got, want)
	}
}
