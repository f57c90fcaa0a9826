package broadcast

import (
	"encoding/json"
	"testing"

	"github.com/usid/usid/session"
)

// sinkViewer takes a batch as a socket would: it copies the bytes (a
// write(2) copies them into the kernel).
type sinkViewer struct{ buf [4096]byte }

func (v *sinkViewer) Send(b []byte) bool {
	copy(v.buf[:], b)
	return true
}

func (v *sinkViewer) Close(CloseReason) {}

// BenchmarkFanout: one info line to 10,000 viewers, usid's own work
// without the system calls: the hub framing the batch once for all
// (hub), against encoding the event for each viewer as the per-session
// path does (per-viewer). go test -run '^$' -bench Fanout ./broadcast
func BenchmarkFanout(b *testing.B) {
	const viewers = 10000
	score := 42
	ev := &session.Event{Type: session.EventInfo, ID: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", MultiPV: 1, Depth: 20, Score: &session.Score{CP: &score},
		Nodes: 1234567, NPS: 900000, TimeMS: 1371, PV: []string{"7g7f", "3c3d", "2g2f", "8c8d", "2f2e", "8d8e", "6i7h", "4a3b"}}
	vs := make([]Viewer, viewers)
	for i := range vs {
		vs[i] = &sinkViewer{}
	}
	b.Run("hub", func(b *testing.B) {
		m := &Manager{cfg: Config{Workers: 1}}
		h := &hub{m: m, id: "x", lines: map[int]*item{}, viewers: vs}
		for b.Loop() {
			js, _ := ev.MarshalJSON()
			var bt batch
			bt.add(kindInfo, 1, 1, withSearch(js, 1))
			items := parseBatch(bt.bytes())
			buf := AppendFrame(nil, items[0].json)
			h.fanout(h.viewers, buf)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*viewers), "ns/viewer")
	})
	b.Run("per-viewer", func(b *testing.B) {
		for b.Loop() {
			for _, v := range vs {
				js, _ := json.Marshal(ev)
				v.Send(AppendFrame(nil, js))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*viewers), "ns/viewer")
	})
}
