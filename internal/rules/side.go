package rules

// SideLetter returns "w" or "b", as FEN and SFEN write the side to move
// (chess's White and shogi's White (gote) are both "w").
func SideLetter(white bool) string {
	if white {
		return "w"
	}
	return "b"
}

// SideName returns "White" or "Black", for messages.
func SideName(white bool) string {
	if white {
		return "White"
	}
	return "Black"
}
