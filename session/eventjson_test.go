package session

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/usid/usid/usi"
)

// marshalPlain is encoding/json's encoding of e, which the hand-written
// info encoder must equal byte for byte.
func marshalPlain(t testing.TB, e *Event) []byte {
	t.Helper()
	type plain Event
	b, err := json.Marshal((*plain)(e))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }

// infoEvents are info events as sessions send them, and odd ones.
func infoEvents() []*Event {
	return []*Event{
		{Type: EventInfo},
		{Type: EventInfo, ID: "a1", MultiPV: 1, Depth: 12, SelDepth: 18, Score: &Score{CP: ptr(34)}, Nodes: 123456, NPS: 987654, TimeMS: 125, Hashfull: 12, PV: []string{"7g7f", "3c3d", "2g2f"}},
		{Type: EventInfo, ID: "a1", MultiPV: 2, Depth: 3, Score: &Score{Mate: ptr(-5), MateSign: "-"}, Bound: "lower", PV: []string{"P*5e"}, PVKIF: []string{"５五歩打"}},
		{Type: EventInfo, ID: "c", MultiPV: 1, Depth: 20, Score: &Score{CP: ptr(-12), Scale: "stone"}, Bound: "upper", PV: []string{"e2e4"}, PVSAN: []string{"e4"}, WDL: []int{400, 500, 100}},
		{Type: EventInfo, ID: "s", MultiPV: 1, Nodes: 50, Text: "t=1764276000000000000"},
		{Type: EventInfo, ID: `q"<>&\` + "\u2028\u2029\x00\x1f\t\n\r\b\f\x7f" + "\xff\xc3", Text: "日本語 \xed\xa0\x80 end", Cached: true, Score: &Score{}},
		{Type: EventInfo, ID: "neg", MultiPV: -1, Depth: -2, Nodes: -9223372036854775808, NPS: 9223372036854775807, WDL: []int{0}, PV: []string{""}},
	}
}

// TestInfoJSONMatchesEncodingJSON: the hand-written encoder writes exactly
// what encoding/json writes, and MarshalJSON and AppendJSON use it.
func TestInfoJSONMatchesEncodingJSON(t *testing.T) {
	for _, e := range infoEvents() {
		if !e.plainInfo() {
			t.Fatalf("%+v: not a plain info", e)
		}
		want := marshalPlain(t, e)
		if got := e.appendInfo(nil); !bytes.Equal(got, want) {
			t.Errorf("appendInfo\n got %s\nwant %s", got, want)
		}
		if got, err := e.MarshalJSON(); err != nil || !bytes.Equal(got, want) {
			t.Errorf("MarshalJSON\n got %s, %v\nwant %s", got, err, want)
		}
		if got, err := e.AppendJSON([]byte("x")); err != nil || !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("AppendJSON\n got %s, %v\nwant x%s", got, err, want)
		}
	}
	// Events the encoder does not write go through encoding/json, as before.
	for _, e := range []*Event{
		{Type: EventInfo, ID: "o", Score: &Score{CP: ptr(410), Points: ptr(4.1), Scale: "stone"}},
		{Type: EventInfo, ID: "o", Message: "x"},
		{Type: EventCheckmate, ID: "m", Result: "nomate"},
		{Type: EventBestMove, ID: "b", Move: "7g7f", Nodes: 10},
	} {
		if e.plainInfo() {
			t.Fatalf("%+v: taken for a plain info", e)
		}
		want, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if got, err := e.AppendJSON(nil); err != nil || !bytes.Equal(got, want) {
			t.Errorf("AppendJSON\n got %s, %v\nwant %s", got, err, want)
		}
	}
}

// TestEventFields: every field of Event is either written by appendInfo or
// checked unset by plainInfo. A field added to Event must be sorted into
// one of the lists (and into the code): otherwise an info event carrying it
// would lose it on the wire.
func TestEventFields(t *testing.T) {
	written := []string{"Type", "ID", "MultiPV", "Depth", "SelDepth", "Score", "Bound", "Nodes", "NPS", "TimeMS",
		"Hashfull", "PV", "PVKIF", "PVSAN", "WDL", "Text", "Cached"}
	checked := []string{"Name", "USIName", "Restored", "Position", "Probing", "Move", "MoveKIF", "MoveSAN", "PonderMv",
		"Emulated", "Capped", "LimitedByBudget", "Book", "Unscored", "Result", "Moves", "MovesKIF", "MovesSAN", "Verified", "Code", "Message",
		"MoveIndex", "Value", "Job", "Progress", "Positions", "Status", "Summary", "Play",
		"retry", "held"} // not in JSON
	var fields []string
	for f := range reflect.TypeFor[Event]().Fields() {
		fields = append(fields, f.Name)
	}
	if known := slices.Concat(written, checked); !sameSet(fields, known) {
		t.Fatalf("Event's fields %v\nare not the encoder's %v", fields, known)
	}
	var score []string
	for f := range reflect.TypeFor[Score]().Fields() {
		score = append(score, f.Name)
	}
	if !sameSet(score, []string{"CP", "Mate", "MateSign", "Points", "Scale"}) {
		t.Fatalf("Score's fields %v are not the encoder's", score)
	}
	// Each checked field, set, makes the event go through encoding/json.
	for _, name := range checked {
		if name == "retry" || name == "held" {
			continue
		}
		e := &Event{Type: EventInfo}
		f := reflect.ValueOf(e).Elem().FieldByName(name)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int:
			f.SetInt(1)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("field %s: kind %v", name, f.Kind())
		}
		if e.plainInfo() {
			t.Errorf("an info event with %s set is taken for a plain info", name)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}

// FuzzInfoJSON: for any strings and numbers, the hand-written encoder and
// encoding/json agree, and the output is valid JSON.
func FuzzInfoJSON(f *testing.F) {
	f.Add("a1", "7g7f 3c3d", "t=1", "lower", "-", "stone", 1, 12, int64(1000), 34, true, false)
	f.Add("\u2028<&>\"\\", "\xff \x00", "日本語\x7f", "", "+", "", -1, 0, int64(-1), 0, false, true)
	f.Fuzz(func(t *testing.T, id, pv, text, bound, sign, scale string, multipv, depth int, nodes int64, cp int, hasScore, cached bool) {
		e := &Event{Type: EventInfo, ID: id, MultiPV: multipv, Depth: depth, SelDepth: depth / 2, Bound: bound,
			Nodes: nodes, NPS: nodes / 3, TimeMS: nodes % 1000, Hashfull: cp % 1001, Text: text, Cached: cached}
		if pv != "" {
			e.PV = strings.Split(pv, " ")
		}
		if hasScore {
			e.Score = &Score{MateSign: sign, Scale: scale}
			if cp%2 == 0 {
				e.Score.CP = &cp
			} else {
				e.Score.Mate = &cp
			}
			e.WDL = []int{cp, depth, multipv}
		}
		want := marshalPlain(t, e)
		got := e.appendInfo(nil)
		if !bytes.Equal(got, want) {
			t.Fatalf("appendInfo\n got %s\nwant %s", got, want)
		}
		if !json.Valid(got) {
			t.Fatalf("invalid JSON %s", got)
		}
	})
}

// BenchmarkInfoJSON: a typical info event (score, pv of 8 moves) through
// encoding/json as before (json) and through the hand-written encoder into
// a reused buffer (append), as the WebSocket writer does.
//
//	go test -run '^$' -bench InfoJSON -benchmem ./session/
func BenchmarkInfoJSON(b *testing.B) {
	e := &Event{Type: EventInfo, ID: "a1", MultiPV: 1, Depth: 18, SelDepth: 24, Score: &Score{CP: ptr(-34)},
		Nodes: 2345678, NPS: 1234567, TimeMS: 1900, Hashfull: 120,
		PV: []string{"7g7f", "3c3d", "2g2f", "4c4d", "3i4h", "8b4b", "5i6h", "5a6b"}}
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			marshalPlain(b, e)
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = e.AppendJSON(buf[:0])
		}
	})
}

// TestInfoEventOwnsItsData: the event made of an engine's info line points
// into nothing of the line's: the usi.Info is the engine reader's, reused
// for the next line (usi.Search.Deliver), while the event waits in the
// outbox and in the cache's lines.
func TestInfoEventOwnsItsData(t *testing.T) {
	c := &Service{}
	pos, perr := CheckPosition(&Position{Game: "chess", Start: "startpos"}, 10)
	if perr != nil {
		t.Fatal(perr)
	}
	j := &job{id: "a1", pos: pos}
	in := usi.Info{Fields: usi.InfoDepth | usi.InfoScore | usi.InfoWDL | usi.InfoPV, Depth: 3,
		Score: usi.Score{Value: 31}, WDL: [3]int{95, 895, 10}, PV: []string{"e2e4"}}
	ev := c.infoEvent(j, &in)
	want := string(marshalPlain(t, ev))
	in = usi.Info{Fields: usi.InfoWDL | usi.InfoScore, Score: usi.Score{Mate: true, Value: -2}, WDL: [3]int{1, 2, 3}}
	if got := string(marshalPlain(t, ev)); got != want {
		t.Fatalf("the event changed with the next line:\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(want, `"score":{"cp":31}`) || !strings.Contains(want, `"wdl":[95,895,10]`) {
		t.Fatalf("event %s: want cp 31 and wdl 95,895,10", want)
	}
	mate := c.infoEvent(j, &usi.Info{Fields: usi.InfoScore, Score: usi.Score{Mate: true, MateSign: '-'}})
	if got := string(marshalPlain(t, mate)); got != `{"type":"info","id":"a1","multipv":1,"score":{"mate":0,"mate_sign":"-"}}` {
		t.Errorf("mate - : got %s", got)
	}
}

// TestInfoEventCutsIllegalLine (issue 43): an engine's line is shown cut at
// its first illegal move, in every game (here chess: e2e4 e2e4).
func TestInfoEventCutsIllegalLine(t *testing.T) {
	pos, perr := CheckPosition(&Position{Game: "chess", Start: "startpos"}, 10)
	if perr != nil {
		t.Fatal(perr)
	}
	ev := (&Service{}).infoEvent(&job{id: "a", pos: pos}, &usi.Info{Fields: usi.InfoPV, PV: []string{"e2e4", "e7e5", "e2e4", "d7d5"}})
	if got := strings.Join(ev.PV, " "); got != "e2e4 e7e5" {
		t.Errorf("pv %q, want e2e4 e7e5 (the second e2e4 is illegal)", got)
	}
}
