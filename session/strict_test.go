package session

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestParseRequestStrict: one JSON object and nothing else. Each of these
// was accepted by the old parser, or its error did not name the request.
func TestParseRequestStrict(t *testing.T) {
	tests := []struct {
		msg, code, id string
	}{
		{`{"type":"go","id":"a","btime":0,"wtime":0}}`, CodeBadRequest, "a"},
		{`{"type":"go","id":"a","btime":0,"wtime":0}]`, CodeBadRequest, "a"},
		{`{"type":"go","id":"a","btime":0,"wtime":0} {"type":"stop","id":"a"}`, CodeBadRequest, "a"},
		{`{"type":"stop","id":"a","type":"go"}`, CodeBadRequest, "a"},
		{`{"type":"analyze","id":"a","position":{"sfen":"startpos","sfen":"x"}}`, CodeBadRequest, "a"},
		{`{"type":"analyze","id":"b","bogus":1}`, CodeBadRequest, "b"},
		{`{"type":"analyze","id":"c","limits":{"depth":"1"}}`, CodeBadRequest, "c"},
		{`{"type":"dance","id":"d"}`, CodeUnknownType, "d"},
		{`{"type":"stop","id":"a","TYPE":"go"}`, CodeBadRequest, "a"},
		{`{"type":"analyze","id":"a","position":{"sfen":"startpos","\u017ffen":"x"}}`, CodeBadRequest, "a"},
		{`{"type":"analyze","bogus":1}`, CodeBadRequest, ""},
		{`[]`, CodeBadRequest, ""},
		{``, CodeBadRequest, ""},
		{`   `, CodeBadRequest, ""},
		{`"x"`, CodeBadRequest, ""},
	}
	for _, tt := range tests {
		r, err := ParseRequest([]byte(tt.msg))
		if err == nil || err.Code != tt.code {
			t.Errorf("%s: %v, want %s", tt.msg, err, tt.code)
			continue
		}
		id := ""
		if r != nil {
			id = r.ID
		}
		if id != tt.id {
			t.Errorf("%s: error names id %q, want %q", tt.msg, id, tt.id)
		}
	}
	for _, ok := range []string{`{"type":"stop","id":"a"}`, " {\"type\":\"stop\",\"id\":\"a\"}\n", `{"type":"analyze","id":"a","position":{"sfen":"startpos","moves":["7g7f","3c3d"]},"limits":{"depth":1}}`} {
		if _, err := ParseRequest([]byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// FuzzParseRequest is the message parser as the rate limiter sees it: what
// the parser accepts is exactly one valid JSON object without duplicate keys,
// and a message that a lenient reader would take for a search request is
// either charged as a search or refused outright. The old limiter read
// messages leniently and skipped the ones it could not read, which the
// handler then ran.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"type":"go","id":"a","btime":0,"wtime":0}`, `{"type":"go","id":"a","btime":0,"wtime":0}}`,
		`{"type":"analyze","id":"x","limits":{"depth":1}}]`, `{"type":"stop","id":"a","type":"go"}`,
		`{"type":"mate","id":"m","timeout_ms":10}`, `{"type":"newgame","id":"n"}`, `{"type":"setoption","id":"o","name":"a","value":"b"}`,
		`{"type":"go","ID":"a"}`, `{"Type":"go","id":"a"}`, `{"type":"g\u006f","id":"a"}`,
		`{"type":"analyze_game","id":"g","position":{"moves":["7g7f"]},"limits":{"depth":2},"record":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		req, perr := ParseRequest(raw)
		if perr != nil {
			if req != nil && req.ID != "" && checkText("id", req.ID, 64) != nil {
				t.Fatalf("error echoes an unchecked id %q", req.ID)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("accepted invalid JSON or trailing data: %q", raw)
		}
		if err := checkShape(raw); err != nil {
			t.Fatalf("accepted %q: %v", raw, err)
		}
		// A lenient reader (what the limiter once was) sees the same type.
		var head struct{ Type string }
		dec := json.NewDecoder(bytes.NewReader(raw))
		if dec.Decode(&head) != nil {
			t.Fatalf("strict accepts what lenient refuses: %q", raw)
		}
		lenientSearch := head.Type == TypeAnalyze || head.Type == TypeGo || head.Type == TypeMate || head.Type == TypeAnalyzeGame
		if lenientSearch != req.IsSearch() {
			t.Fatalf("%q: lenient type %q, parsed type %q: the limiter and the handler disagree", raw, head.Type, req.Type)
		}
		if req.ID == "" || checkText("id", req.ID, 64) != nil {
			t.Fatalf("accepted id %q", req.ID)
		}
	})
}
