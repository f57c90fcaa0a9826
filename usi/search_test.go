package usi

import (
	"fmt"
	"strings"
	"testing"
)

func TestInfoQueue(t *testing.T) {
	// Lines are written "multipv.n": the n-th line of that multipv; multipv
	// 0 is a line without a pv (nodes, currmove...).
	tests := []struct {
		name    string
		cap     int
		push    string
		want    string // what the reader gets, in order
		dropped int64
	}{
		{"fits", 4, "1.1 2.1 0.1 1.2", "1.1 2.1 0.1 1.2", 0},
		{"same multipv replaces its newest", 2, "1.1 2.1 1.2 1.3 2.2", "1.3 2.2", 3},
		{"new multipv drops a superseded line", 3, "1.1 1.2 2.1 3.1", "1.2 2.1 3.1", 1},
		{"superseded line in the middle", 3, "2.1 1.1 1.2 3.1", "2.1 1.2 3.1", 1},
		{"all lines latest: the oldest goes", 2, "1.1 2.1 3.1", "2.1 3.1", 1},
		{"latest of each multipv kept", 3, "1.1 2.1 1.2 2.2 1.3 2.3 3.1", "2.3 1.3 3.1", 4},
	}
	for _, tt := range tests {
		q := infoQueue{cap: tt.cap}
		for _, l := range strings.Fields(tt.push) {
			var in Info
			fmt.Sscanf(l, "%d.%d", &in.MultiPV, &in.Nodes)
			in.Fields = InfoNodes
			if in.MultiPV > 0 {
				in.Fields |= InfoMultiPV | InfoPV
			}
			q.push(in)
		}
		var got []string
		for in, ok := q.pop(); ok; in, ok = q.pop() {
			got = append(got, fmt.Sprintf("%d.%d", in.MultiPV, in.Nodes))
		}
		if g := strings.Join(got, " "); g != tt.want || q.dropped != tt.dropped || q.highWater > tt.cap {
			t.Errorf("%s: pushed %s: got %q (dropped %d, high water %d), want %q (dropped %d)",
				tt.name, tt.push, g, q.dropped, q.highWater, tt.want, tt.dropped)
		}
	}
}
