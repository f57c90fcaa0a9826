package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/usid/usid/game"
	"github.com/usid/usid/internal/rules"
	"github.com/usid/usid/usi"
)

// Error codes of this package, in error events and REST problems. Position
// errors use the shogi package's codes (nifu, self_check, ...).
const (
	CodeBadRequest       = "bad_request"        // not JSON, unknown field, wrong type
	CodeUnknownType      = "unknown_type"       // a message type this server does not know
	CodeInvalidField     = "invalid_field"      // a field's value is out of range or malformed
	CodeUnknownEngine    = "unknown_engine"     // no engine by that name
	CodeQueueFull        = "queue_full"         // too many callers wait for that engine
	CodeUnavailable      = "engine_unavailable" // the engine keeps failing; retry later
	CodeNoEngine         = "no_engine"          // no engine became free in time
	CodeOptionNotAllowed = "option_not_allowed" // not on the engine's allow-list, or out of bounds
	CodeUnsupported      = "unsupported"        // the engine cannot do what was asked (multipv, binc)
	CodeEngineError      = "engine_error"       // the engine crashed, hung or answered nonsense
	CodeNoSearch         = "no_search"          // stop/ponderhit for a search that is not running
	CodeBusy             = "busy"               // an option change or new game during a search
	CodeTooManyRequests  = "too_many_requests"  // requests arrive faster than they are served
	CodeShuttingDown     = "shutting_down"      // the server is draining
	// CodePreempted ends a Background caller's search that gave its engine
	// to an interactive caller (Caller.Class); game analysis searches the
	// position again later. Interactive callers never get it.
	CodePreempted = "preempted"
)

// Error is a refusal with a stable code, as error events and REST problems carry it.
type Error struct {
	Code      string
	Message   string
	MoveIndex int // index of the refused move, or -1
	// Retry, when set, is the wait the Message announces; RetryAfter
	// returns it so that a Retry-After header says the same. NoRetry:
	// no wait can be announced.
	Retry time.Duration
}

// NoRetry is the Retry of a refusal that announces no wait (no
// Retry-After): a place (a broadcast, a viewer's seat) is held until its
// holder gives it back, which may be hours, and a constant would be
// a lie.
const NoRetry time.Duration = -1

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), MoveIndex: -1}
}

// Position is a position as clients send it: a game's position text in
// the game's field ("sfen" for shogi, "fen" for chess: package game's
// registry says which field is whose; none is the default game's start),
// the variant ("chess960"), and the moves played from it, in the game's
// engine notation. A position names at most one game's field.
type Position struct {
	// Game is the game's name ("" for the default game), Start its
	// position text ("" or "startpos" for the start).
	Game    string
	Start   string
	Moves   []string
	Variant string
	// also is a second game's field in the same object, refused by
	// CheckPosition.
	also string
}

// GameOf is the position's game: the registered game it names, or the
// default one; nil for a name no game has.
func (p *Position) GameOf() game.Game {
	if p == nil || p.Game == "" {
		return game.Default()
	}
	return game.Named(p.Game)
}

// UnmarshalJSON reads {"<game's field>"?: text, "moves"?, "variant"?};
// keys match case-insensitively, as encoding/json matches struct fields.
func (p *Position) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*p = Position{}
	for k, v := range m {
		var err error
		switch {
		case strings.EqualFold(k, "moves"):
			err = json.Unmarshal(v, &p.Moves)
		case strings.EqualFold(k, "variant"):
			err = json.Unmarshal(v, &p.Variant)
		default:
			g := gameByField(k)
			if g == nil {
				return fmt.Errorf("json: unknown field %q", clip(k))
			}
			var text string
			if err = json.Unmarshal(v, &text); err != nil {
				break
			}
			if text == "" {
				continue // an empty field names no game, as before
			}
			if p.Game != "" {
				p.also = g.Name()
				continue
			}
			p.Game, p.Start = g.Name(), text
		}
		if err != nil {
			return fmt.Errorf("position.%s: %s", clip(k), JSONError(err))
		}
	}
	return nil
}

func gameByField(k string) game.Game {
	for _, g := range game.All() {
		if strings.EqualFold(g.Field(), k) {
			return g
		}
	}
	return nil
}

// MarshalJSON writes {"<game's field>": text, "moves", "variant"?}.
func (p Position) MarshalJSON() ([]byte, error) {
	g := p.GameOf()
	if g == nil {
		return nil, fmt.Errorf("position of an unknown game %q", p.Game)
	}
	moves := p.Moves
	if moves == nil {
		moves = []string{}
	}
	b := make([]byte, 0, 32+len(p.Start)+8*len(moves))
	b = append(b, '{')
	b, _ = appendJSONField(b, g.Field(), p.Start)
	b = append(b, ',')
	b, _ = appendJSONField(b, "moves", moves)
	if p.Variant != "" {
		b = append(b, ',')
		b, _ = appendJSONField(b, "variant", p.Variant)
	}
	return append(b, '}'), nil
}

func appendJSONField(b []byte, k string, v any) ([]byte, error) {
	kb, _ := json.Marshal(k)
	vb, err := json.Marshal(v)
	b = append(b, kb...)
	b = append(b, ':')
	return append(b, vb...), err
}

// Limits bound one search. Zero fields are unset; none set means "until stop".
type Limits struct {
	MoveTimeMS int64 `json:"movetime_ms"`
	Depth      int   `json:"depth"`
	Nodes      int64 `json:"nodes"`
}

// Request is any client message; Type says which fields matter.
type Request struct {
	Type      string    `json:"type"`
	ID        string    `json:"id"`
	Position  *Position `json:"position"`
	Engine    string    `json:"engine"`
	Limits    *Limits   `json:"limits"`
	MultiPV   int       `json:"multipv"`
	Notation  string    `json:"notation"` // "kif" adds Japanese notation to shogi moves, "san" SAN to chess moves
	TimeoutMS int64     `json:"timeout_ms"`
	// go (play) clocks, in milliseconds.
	BTime   *int64 `json:"btime"`
	WTime   *int64 `json:"wtime"`
	Byoyomi *int64 `json:"byoyomi"`
	BInc    *int64 `json:"binc"`
	WInc    *int64 `json:"winc"`
	Ponder  bool   `json:"ponder"`
	// MovesToGo: moves to the next time control (chess clocks).
	MovesToGo *int `json:"movestogo"`
	// Depth caps a game move's search at that depth (a play level's, as
	// lichess's weakest levels search shallow): go depth where the engine
	// takes it, else usid stops the search there. The bestmove's Capped
	// says it was applied.
	Depth *int `json:"depth"`
	// Random is the share, in percent, of a game move's answers usid
	// replaces with a legal move drawn at random (a beginner level's: a
	// player who sometimes moves without looking); the bestmove's Capped
	// says "random" when this one was. Games whose positions list their
	// moves only (game.Lister: chess); elsewhere refused.
	Random *int `json:"random"`
	// MateIn bounds a chess mate search to a mate in that many moves (UCI's
	// "go mate <n>"); default 10.
	MateIn *int `json:"mate_in"`
	// setoption
	Name  string `json:"name"`
	Value string `json:"value"`
	// gameover
	Result string `json:"result"`
	// analyze_game: a game record's text, instead of position (KIF, KI2,
	// CSA, USI, SFEN; see package review).
	Record *string `json:"record"`
	// analyze_game: judgement thresholds; keep: the job outlives the
	// connection (without it, closing the connection cancels the job).
	Thresholds *GameThresholds `json:"thresholds"`
	Keep       bool            `json:"keep"`
	// play_*: a game against the engine (package play). Game names it,
	// Move is the human's move; Play carries play_start's settings, which
	// package play decodes and checks.
	Game string          `json:"game"`
	Move string          `json:"move"`
	Play json.RawMessage `json:"play"`
}

// Request types.
const (
	TypeAnalyze   = "analyze"
	TypeStop      = "stop"
	TypeGo        = "go"
	TypePonderhit = "ponderhit"
	TypeMate      = "mate"
	TypeSetOption = "setoption"
	TypeNewGame   = "newgame"
	TypeGameOver  = "gameover"
)

// ParseRequest decodes one client message with DecodeStrict. On error the
// returned Request, when not nil, carries only what may be echoed: the
// message's id, if it had a well-formed one, so that the error event names
// the request it answers.
func ParseRequest(raw []byte) (*Request, *Error) {
	var r Request
	if err := DecodeStrict(raw, &r); err != nil {
		e := errorf(CodeBadRequest, "malformed message: %v", err)
		if id := lenientID(raw); id != "" {
			return &Request{ID: id}, e
		}
		return nil, e
	}
	if err := checkText("id", r.ID, 64); err != nil {
		return nil, err
	}
	switch r.Type {
	case TypeAnalyze, TypeStop, TypeGo, TypePonderhit, TypeMate, TypeSetOption, TypeNewGame, TypeGameOver, TypeAnalyzeGame:
	case TypePlayStart, TypePlayMove, TypePlayResign, TypePlayResume, TypePlayDeclare:
	default:
		return &Request{ID: r.ID}, errorf(CodeUnknownType, "unknown message type %q", clip(r.Type))
	}
	if r.ID == "" {
		return nil, errorf(CodeInvalidField, "id is required: every request carries an id that its events echo")
	}
	return &r, nil
}

// lenientID finds the id of a message the strict parser refused (an unknown
// field, trailing data), for the error event only; "" when there is none
// that passes the checks every id passes.
func lenientID(raw []byte) string {
	var head struct {
		ID string `json:"id"`
	}
	// The first value only: trailing data is what may have been refused.
	if json.NewDecoder(bytes.NewReader(raw)).Decode(&head) != nil || checkText("id", head.ID, 64) != nil {
		return ""
	}
	return head.ID
}

// IsSearch reports whether r asks for engine search time (analyze, go,
// mate, analyze_game): what a client's search rate is charged for.
func (r *Request) IsSearch() bool {
	return r.Type == TypeAnalyze || r.Type == TypeGo || r.Type == TypeMate || r.Type == TypeAnalyzeGame
}

// JSONError words a decoding error without echoing large inputs.
func JSONError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("field %q: expected %s", te.Field, te.Type)
	}
	return clip(err.Error())
}

// checkText refuses control characters, invalid UTF-8 and overlong values in
// a client string that may reach an engine, be echoed or be logged.
func checkText(field, s string, max int) *Error {
	if len(s) > max {
		return errorf(CodeInvalidField, "%s is longer than %d bytes", field, max)
	}
	if !utf8.ValidString(s) {
		return errorf(CodeInvalidField, "%s is not valid UTF-8", field)
	}
	for _, c := range s {
		if IsControl(c) {
			return errorf(CodeInvalidField, "%s contains the control character %U", field, c)
		}
	}
	return nil
}

// IsControl reports whether r is a control in any sense that matters to a
// line-oriented engine, a log or a terminal: Unicode's Cc (C0, DEL and C1,
// which holds NEL U+0085 and CSI U+009B), Cf (format characters: BOM
// U+FEFF, bidi embeddings, overrides and isolates, zero-width characters),
// Zl (U+2028) and Zp (U+2029). Whole categories, not a list of the ones
// known to be abused.
func IsControl(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
}

func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}

// Checked is a position that passed every rule: what an engine may be told.
type Checked struct {
	// Position is the checked position, asked for everything its game's
	// rules say (package game).
	game.Position
	// USI is the position command's payload, rebuilt from parsed values,
	// never copied from the client.
	USI usi.Position
}

// GameName is the position's game's name ("shogi", "chess").
func (c *Checked) GameName() string { return c.Game().Name() }

// CheckPosition validates a client position with the rules of its game.
// maxMoves caps the move list.
func CheckPosition(p *Position, maxMoves int) (*Checked, *Error) {
	if p == nil {
		p = &Position{}
	}
	g, variant, gerr := p.CheckGame()
	if gerr != nil {
		return nil, gerr
	}
	start := p.Start
	if start == "" {
		start = "startpos"
	}
	if err := checkText("position."+g.Field(), start, 256); err != nil {
		return nil, err
	}
	if len(p.Moves) > maxMoves {
		return nil, errorf(CodeInvalidField, "position.moves has %d moves; at most %d", len(p.Moves), maxMoves)
	}
	pos, err := g.Check(start, variant, p.Moves)
	if err != nil {
		return nil, fromRules(err)
	}
	return &Checked{Position: pos, USI: usi.NewPosition(g.Keyword(), pos.Start(), pos.Moves())}, nil
}

// CheckGame is the position's game and its normalized variant, or why the
// position names no game rightly: a game usid does not serve, two games'
// fields, a variant its game does not have.
func (p *Position) CheckGame() (game.Game, string, *Error) {
	g := p.GameOf()
	if g == nil {
		return nil, "", errorf(CodeInvalidField, "position: no game %q", clip(p.Game))
	}
	if p.also != "" {
		return nil, "", errorf(CodeInvalidField, "position: give the position of one game (%s or %s), not both", fieldOf(g), fieldOf(game.Named(p.also)))
	}
	variant, verr := g.Variant(p.Variant)
	if verr != nil {
		return nil, "", fromRules(verr)
	}
	return g, variant, nil
}

// fieldOf names a game by its field for a message: "a shogi position (sfen)".
func fieldOf(g game.Game) string { return g.Field() + " (" + g.Name() + ")" }

func fromRules(e *rules.Error) *Error {
	return &Error{Code: string(e.Code), Message: e.Message, MoveIndex: e.MoveIndex}
}

// Score is an engine score from the side to move's point of view: exactly one
// of CP and Mate is set. Mate counts plies; negative when the side to move is
// mated. "mate +"/"mate -" (length unknown) become Mate 0 with MateSign.
type Score struct {
	CP       *int   `json:"cp,omitempty"`
	Mate     *int   `json:"mate,omitempty"`
	MateSign string `json:"mate_sign,omitempty"`
	// Points and Scale: an engine's bare score in its declared scale
	// ("score 41.0" of an othello engine whose scale is "stone", "WP" or
	// "other"); CP is then the same in hundredths of the game's unit.
	Points *float64 `json:"points,omitempty"`
	Scale  string   `json:"scale,omitempty"`
}

// Event types.
const (
	EventEngine    = "engine"
	EventQueued    = "queued"
	EventInfo      = "info"
	EventBestMove  = "bestmove"
	EventCheckmate = "checkmate"
	EventError     = "error"
	EventOption    = "option"
	EventReady     = "ready"
	EventClosing   = "closing"
)

// Event is one server message. Type says which fields are set.
type Event struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`

	// engine
	Name    string `json:"name,omitempty"`
	USIName string `json:"usi_name,omitempty"`
	// Restored (engine events): the options the session had set on this
	// engine kind, set again on the engine just leased.
	Restored []string `json:"restored,omitempty"`
	// queued
	Position int `json:"position,omitempty"`
	// Probing (queued): the request waits for these engines' probes, which
	// will tell which engine can answer it (a mate request naming none).
	Probing []string `json:"probing,omitempty"`
	// info
	MultiPV  int      `json:"multipv,omitempty"`
	Depth    int      `json:"depth,omitempty"`
	SelDepth int      `json:"seldepth,omitempty"`
	Score    *Score   `json:"score,omitempty"`
	Bound    string   `json:"bound,omitempty"` // "lower" or "upper"
	Nodes    int64    `json:"nodes,omitempty"`
	NPS      int64    `json:"nps,omitempty"`
	TimeMS   int64    `json:"time_ms,omitempty"`
	Hashfull int      `json:"hashfull,omitempty"`
	PV       []string `json:"pv,omitempty"`
	PVKIF    []string `json:"pv_kif,omitempty"`
	PVSAN    []string `json:"pv_san,omitempty"`
	// WDL is a chess engine's win/draw/loss chances, per mille, from the
	// side to move.
	WDL  []int  `json:"wdl,omitempty"`
	Text string `json:"string,omitempty"`
	// Cached: the line comes from the evaluation cache, sent at once
	// before the live search's (WebSocket analyze).
	Cached bool `json:"cached,omitempty"`
	// bestmove
	Move     string `json:"move,omitempty"`
	MoveKIF  string `json:"move_kif,omitempty"`
	MoveSAN  string `json:"move_san,omitempty"`
	PonderMv string `json:"ponder,omitempty"`
	// Emulated lists the limits usid enforced itself (the engine does not
	// honour them natively): they stop at the first info line past them.
	Emulated []string `json:"emulated,omitempty"`
	// Capped (bestmove of a go): the limits of the request's own that
	// capped the game move ("depth"), applied by the engine or, where
	// Emulated names them too, by usid; "random": the move was drawn at
	// random (Request.Random), not the engine's.
	Capped []string `json:"capped,omitempty"`
	// LimitedByBudget (bestmove, checkmate): the client's engine time ran
	// out before the search's own limit; the search was cut to what was
	// left (a movetime, a mate's timeout) or stopped when it ran out (an
	// analysis until stop, a game move).
	LimitedByBudget bool `json:"limited_by_budget,omitempty"`
	// Book (bestmove): the engine answered without an evaluation (no info
	// line with a score), as from its opening book. Nodes (bestmove): the
	// nodes the search reached, as the engine last reported them.
	Book bool `json:"book,omitempty"`
	// Unscored (bestmove): no evaluation came either, but the search ran
	// to near its movetime: not a book answer, a search that finished no
	// iteration (an engine starved of CPU answers so). The move is the
	// engine's, unevaluated.
	Unscored bool `json:"unscored,omitempty"`
	// checkmate
	Result   string   `json:"result,omitempty"`
	Moves    []string `json:"moves,omitempty"`
	MovesKIF []string `json:"moves_kif,omitempty"`
	MovesSAN []string `json:"moves_san,omitempty"`
	// Verified, with result mate: "forced" when every defender alternative
	// along the line was shown mated too (the line is a proof), "line" when
	// the verification's node budget ran out first (see shogi.MateProof).
	Verified string `json:"verified,omitempty"`
	// error
	Code      string        `json:"code,omitempty"`
	Message   string        `json:"message,omitempty"`
	MoveIndex *int          `json:"move_index,omitempty"`
	retry     time.Duration // the wait the message announces (REST's Retry-After)
	// held (info): the search has another line at hand; the outbox keeps
	// this one for it rather than have it written at once (outbox.flush).
	held bool
	// option
	Value string `json:"value,omitempty"`
	// progress and game_analysis (whole-game analysis, package review):
	// Job is the job's id (for GET /v1/games/analysis/{job}); Positions
	// are the positions analysed or judged since the last progress event.
	Job       string            `json:"job,omitempty"`
	Progress  *GameProgress     `json:"progress,omitempty"`
	Positions []json.RawMessage `json:"positions,omitempty"`
	Status    string            `json:"status,omitempty"`
	Summary   json.RawMessage   `json:"summary,omitempty"`
	// play (a game against the engine, package play): the game's state.
	Play json.RawMessage `json:"play,omitempty"`
}

// terminal reports whether e ends a request.
func (e *Event) terminal() bool {
	return e.Type == EventBestMove || e.Type == EventCheckmate || e.Type == EventError
}

// ErrorEvent turns an error into an error event for request id.
func ErrorEvent(id string, err *Error) *Event { return errorEvent(id, err) }

func errorEvent(id string, err *Error) *Event {
	ev := &Event{Type: EventError, ID: id, Code: err.Code, Message: err.Message, retry: err.Retry}
	if err.MoveIndex >= 0 {
		i := err.MoveIndex
		ev.MoveIndex = &i
	}
	return ev
}

// MarshalJSON writes the event; a checkmate event always has "moves" (empty
// for nomate, timeout and notimplemented) so that clients can rely on it.
func (e *Event) MarshalJSON() ([]byte, error) {
	if e.plainInfo() {
		return e.appendInfo(make([]byte, 0, 256)), nil // eventjson.go
	}
	type plain Event
	if e.Type != EventCheckmate {
		return json.Marshal((*plain)(e))
	}
	moves := e.Moves
	if moves == nil {
		moves = []string{}
	}
	return json.Marshal(struct {
		*plain
		Moves []string `json:"moves"`
	}{(*plain)(e), moves})
}
