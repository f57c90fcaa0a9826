// Package rules holds what the rules packages of each game (shogi, chess)
// share word for word: the refusal type with its stable code (Error, Code,
// Errors) and its JSON shape, the loop that plays a move list and names the
// refused move, the side-to-move facts a verdict reports, and the names of
// the two sides. The games' own packages alias these types, so their public
// API stays what it was.
//
// Everything here is pure and safe for concurrent use.
package rules
