// Package match plays engine against engine: two players (an engine, its
// options, optionally a level), a number of games or pairs, each move
// bounded by limits (movetime, nodes, depth) or a clock the server keeps,
// from openings each played twice with colours swapped (a default set per
// game: shogi's common openings, chess's usual first moves, a spread of
// othello's positions four plies from the start), with an optional SPRT
// that ends the match once it has decided, several games at once.
//
// The rules decide (package game): every move an engine answers is checked
// before it is played, and an illegal one loses the game with its reason
// in the record; the end is the rules' (shogi's mate, 千日手 and perpetual
// check, 入玉宣言 when an engine answers bestmove win; chess's mate,
// stalemate, insufficient material, threefold repetition and the
// fifty-move rule; othello's count); a player whose clock ran out (by the
// server's count, the time its search held an engine) loses on time; a
// resignation loses; optional adjudication by the engines' scores, as
// cutechess-cli's, says so in the record; a game reaching Config.MaxPlies
// is drawn.
//
// Each player's engine is driven through a session.Session of usid's
// (seat.go), as package play drives its engine: every search is checked,
// planned from the engine's profile, charged to the match owner's engine
// time (session.Caller.Budget) and waits in the pool's fair queue as the
// owner's, so that a match takes its owner's turn and never more. A worker
// (one per game played at once) holds one session per player for all its
// games and sends usinewgame before each.
//
// Results are from players[0]'s side: wins, draws, losses, the
// pentanomial counts of the pairs, the Elo difference with its 95%
// interval and LOS, the SPRT's log-likelihood ratio (package match/stats).
//
// Every game is watchable (watch.go): GET /v1/matches/{id}/games/{n}
// answers it with the players' own evaluations (each move's search's last
// line), which the watch page shows instead of a search of its own, so
// that watching costs the match no engine time.
//
// A Manager is safe for concurrent use: it bounds matches per client and
// in total, runs Config.MaxRunning at once, keeps ended matches for
// Config.Keep, and on Close cancels them and waits for their engines to
// be given back. Matches live in this process (New), or in Redis (Open
// with Config.Redis; shared.go, redis.go): every pod sharing it answers
// for every match and plays its games, each under a lease it renews; a
// game under way is stored as it stands with each renewal (every pod lists
// it and follows it for its watchers), an ended game at once, and the
// result is computed from the stored games. A dead pod's games are played
// again from their start by another once their leases ran out.
package match
