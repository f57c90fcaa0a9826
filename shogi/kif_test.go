package shogi

import (
	"slices"
	"testing"
)

func TestKIF(t *testing.T) {
	tests := []struct {
		sfen  string
		last  Square
		moves []string
		want  []string
	}{
		{"startpos", NoSquare, []string{"7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"},
			[]string{"▲７六歩(77)", "△３四歩(33)", "▲２二角成(88)", "△同　銀(31)", "▲４五角打"}},
		// 同 also applies to the first move when the previous move is given.
		{"lnsgkgsnl/1r5b1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL b - 3", NewSquare(3, 4), []string{"8h2b+", "3a2b"},
			[]string{"▲２二角成(88)", "△同　銀(31)"}},
		// Declined promotions are written 不成; forced ones can only be 成.
		{"4k4/9/9/2S6/9/9/9/9/4K4 b - 1", NoSquare, []string{"7d7c", "5a4a", "7c6b+"},
			[]string{"▲７三銀不成(74)", "△４一玉(51)", "▲６二銀成(73)"}},
		{"4k4/9/9/2S6/9/9/9/9/4K4 b - 1", NoSquare, []string{"7d6e"}, []string{"▲６五銀(74)"}},
		{"4k4/P8/9/9/9/9/9/9/4K4 b - 1", NoSquare, []string{"9b9a+"}, []string{"▲９一歩成(92)"}},
		// Promoted pieces and White's drops.
		{"4k4/9/9/9/9/9/9/9/+B3K3+R w 2p 1", NoSquare, []string{"P*5e", "9i5e", "5a4b", "1i1a"},
			[]string{"△５五歩打", "▲同　馬(99)", "△４二玉(51)", "▲１一龍(19)"}},
		{"4k4/9/9/9/9/9/9/9/4K4 w gsnl 1", NoSquare, []string{"G*5h", "5i5h", "N*3g"},
			[]string{"△５八金打", "▲同　玉(59)", "△３七桂打"}},
		{"4k4/9/9/9/9/9/+p+l+n+s5/9/4K4 b - 1", NoSquare, nil, []string{}},
	}
	for _, tt := range tests {
		p, errs := Load(tt.sfen, nil)
		if errs != nil {
			t.Fatalf("Load(%q): %v", tt.sfen, Errors(errs))
		}
		got, err := p.KIFLine(tt.moves, tt.last)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("KIFLine(%q, %v) = %q, %v; want %q", tt.sfen, tt.moves, got, err, tt.want)
		}
	}

	p := mustParse(t, "4k4/9/9/9/9/9/+p+l+n+s5/9/4K4 w - 1")
	got, _ := p.KIFLine([]string{"9g9h", "5i4i", "8g8h", "4i5i", "7g7h", "5i4i", "6g6h"}, NoSquare)
	want := []string{"△９八と(97)", "▲４九玉(59)", "△８八成香(87)", "▲５九玉(49)", "△７八成桂(77)", "▲４九玉(59)", "△６八成銀(67)"}
	if !slices.Equal(got, want) {
		t.Errorf("promoted pieces: got %q, want %q", got, want)
	}

	_, err := Startpos().KIFLine([]string{"7g7f", "7g7f"}, NoSquare)
	if e, ok := err.(*Error); !ok || e.MoveIndex != 1 || e.Code != CodeEmptySource {
		t.Errorf("an illegal second move: got %v, want empty_source at index 1", err)
	}
}
