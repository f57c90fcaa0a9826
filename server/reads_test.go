package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/usid/usid/internal/shogitest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/quota"
)

// readsServer is a server like the shared one whose anonymous clients
// have the quota q (Reads 0: the default flood guard).
func readsServer(tb testing.TB, q Quota) *Server {
	cfg := shared.srv.cfg
	cfg.Access, cfg.Registerer = &Access{Anonymous: true, AnonymousQuota: q}, nil
	srv := New(cfg)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Drain(ctx)
	})
	return srv
}

// serve sends one request to srv from the test's client (127.0.0.1, as
// over a loopback connection) and returns the answer.
func serve(srv *Server, method, path, body string, hdr http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.RemoteAddr = "127.0.0.1:40000"
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	return w
}

// bigJob runs a game analysis of a 640-move game at depth 1 with KIF
// notation to its end (an answer of about 280 KB, as in issue 35) and
// returns its id.
func bigJob(tb testing.TB, srv *Server) string {
	moves, _ := json.Marshal(shogitest.RandomGame(640, 35, 1))
	w := serve(srv, "POST", "/v1/games/analysis", `{"engine":"fairy","notation":"kif","position":{"moves":`+string(moves)+`},"limits":{"depth":1}}`, nil)
	if w.Code != 202 {
		tb.Fatalf("game analysis: %d %s", w.Code, w.Body)
	}
	var job struct{ ID string }
	json.Unmarshal(w.Body.Bytes(), &job)
	testwait.For(tb, "the game analysis' end", 5*time.Minute, func() bool {
		v, err := srv.cfg.Review.Get("ip:127.0.0.1", job.ID)
		return err == nil && v.FinishedAt != nil
	})
	return job.ID
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestReadsAreCheap (issue 35): reads are charged like writes. 600 GETs
// in a row of one unchanged 280 KB game analysis from one client are each
// refused (429, past the client's flood guard of reads) or answered from
// the job's one encoding (the same ETag, the same bytes), and a GET with
// If-None-Match of that ETag is 304 without a body. The board's pages and
// scripts that poll send it. GET /v1/engines and /v1/limits are tagged and
// guarded alike. Before, all 600 were encoded afresh (9-11 ms of CPU each)
// and none was refused.
func TestReadsAreCheap(t *testing.T) {
	shared.waitIdle(t)
	srv := readsServer(t, Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5})
	id := bigJob(t, srv)
	path := "/v1/games/analysis/" + id
	began := time.Now() // the client's first read: its guard was full then
	first := serve(srv, "GET", path, "", nil)
	etag := first.Header().Get("ETag")
	t.Logf("the job's answer: %d bytes, ETag %q, Cache-Control %q", first.Body.Len(), etag, first.Header().Get("Cache-Control"))
	if first.Code != 200 || etag == "" || first.Body.Len() < 200<<10 {
		t.Fatalf("GET: %d, ETag %q, %d bytes; want 200 with an ETag and about 280 KB", first.Code, etag, first.Body.Len())
	}
	// A client that sends the tag back gets 304.
	if w := serve(srv, "GET", path, "", http.Header{"If-None-Match": {etag}}); w.Code != 304 || w.Body.Len() != 0 || w.Header().Get("ETag") != etag {
		t.Errorf("GET with If-None-Match %s: %d, %d bytes, ETag %q; want 304 without a body", etag, w.Code, w.Body.Len(), w.Header().Get("ETag"))
	}
	// Another tag (an older answer's) gets the job.
	if w := serve(srv, "GET", path, "", http.Header{"If-None-Match": {`"other"`}}); w.Code != 200 || w.Body.String() != first.Body.String() {
		t.Errorf("GET with another If-None-Match: %d, want 200 with the job", w.Code)
	}
	for _, p := range []string{"/v1/engines", "/v1/limits"} {
		w := serve(srv, "GET", p, "", nil)
		tag := w.Header().Get("ETag")
		if w.Code != 200 || tag == "" {
			t.Errorf("GET %s: %d, ETag %q; want 200 with an ETag", p, w.Code, tag)
			continue
		}
		// The engines' state may change between two GETs (idle, busy): 304
		// is asked of the limits only.
		if w := serve(srv, "GET", p, "", http.Header{"If-None-Match": {tag}}); w.Code != 304 && p == "/v1/limits" {
			t.Errorf("GET %s with If-None-Match: %d, want 304", p, w.Code)
		}
	}
	// Over HTTP, each exchange checked against openapi.yaml: the 304, and
	// the 429 of every GET route once a client's reads are spent (a guard
	// of one read per 1000 s: it stays spent).
	hs := httptest.NewServer(srv)
	defer hs.Close()
	get := func(url, inm string) int {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", url, nil)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := checkedClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(hs.URL+path, etag); code != 304 {
		t.Errorf("GET over HTTP with If-None-Match: %d, want 304", code)
	}
	spent := httptest.NewServer(readsServer(t, Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5, Reads: 0.001}))
	defer spent.Close()
	for _, p := range []string{path, "/v1/engines", "/v1/limits"} {
		get(spent.URL+p, "") // the one read of the burst, or 404 (not its job)
		if code := get(spent.URL+p, ""); code != 429 {
			t.Errorf("GET %s with the reads spent: %d, want 429", p, code)
		}
	}

	counts := map[int]int{}
	cpu0 := cpuTime()
	for i := range 600 {
		w := serve(srv, "GET", path, "", nil)
		counts[w.Code]++
		switch w.Code {
		case 200:
			if w.Header().Get("ETag") != etag || w.Body.String() != first.Body.String() {
				t.Fatalf("GET %d: another answer for an unchanged job (ETag %q)", i, w.Header().Get("ETag"))
			}
		case 429:
			if w.Header().Get("Retry-After") == "" {
				t.Errorf("GET %d: 429 without Retry-After", i)
			}
		default:
			t.Fatalf("GET %d: %d %s", i, w.Code, w.Body)
		}
	}
	cpu, took := cpuTime()-cpu0, time.Since(began)
	// What the guard promises for the time the GETs really took (issue 43:
	// a busy machine's 600 GETs took long enough to refill past a fixed
	// 150): its burst and its rate over that time, less the reads above.
	q := srv.gate.cfg.AnonymousQuota
	promised := int(2*q.Reads) + 1 + int(q.Reads*took.Seconds()) + 1
	t.Logf("600 GETs in a row: %v in %v (the guard allows %d); %v of CPU, %v per GET (process-wide: engines and other tests included)", counts, took.Round(time.Millisecond), promised, cpu, cpu/600)
	if counts[429] == 0 && promised < 600 {
		t.Errorf("600 GETs in a row: none refused; want 429 past the flood guard of reads")
	}
	if counts[200] > promised {
		t.Errorf("600 GETs in a row: %d answered, want at most the burst and the refill over %v: %d", counts[200], took, promised)
	}
}

// BenchmarkGameAnalysisGET (issue 35): the CPU of one GET of an unchanged
// 280 KB game analysis: before (the job rendered and encoded each time, as
// the handler did), the handler now (the job's one encoding, written), and
// with If-None-Match of its ETag (304).
//
//	go test -run '^$' -bench GameAnalysisGET -benchtime 200x ./server
func BenchmarkGameAnalysisGET(b *testing.B) {
	srv := readsServer(b, Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5, Reads: 1e9})
	id := bigJob(b, srv)
	path := "/v1/games/analysis/" + id
	etag := serve(srv, "GET", path, "", nil).Header().Get("ETag")
	b.Run("before", func(b *testing.B) {
		for b.Loop() {
			v, _ := srv.cfg.Review.Get("ip:127.0.0.1", id)
			w := httptest.NewRecorder()
			writeJSON(w, 200, v)
		}
	})
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			if w := serve(srv, "GET", path, "", nil); w.Code != 200 {
				b.Fatal(w.Code)
			}
		}
	})
	b.Run("if-none-match", func(b *testing.B) {
		h := http.Header{"If-None-Match": {etag}}
		for b.Loop() {
			if w := serve(srv, "GET", path, "", h); w.Code != 304 {
				b.Fatal(w.Code)
			}
		}
	})
}
