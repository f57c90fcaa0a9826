package rules

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Code is a stable, machine-readable reason why a position or move is refused.
// Clients match on codes; messages are for people and may change.
type Code string

// Error is one reason a position or move is refused.
type Error struct {
	Code    Code
	Message string
	// MoveIndex is the index (from 0) of the refused move in a move list, or
	// -1 when the error is about the position itself.
	MoveIndex int
}

func (e *Error) Error() string {
	if e.MoveIndex >= 0 {
		return fmt.Sprintf("%s: move %d: %s", e.Code, e.MoveIndex, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Newf returns an Error about a position (MoveIndex -1).
func Newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), MoveIndex: -1}
}

// MarshalJSON writes {"code", "message", "move_index"?}; move_index only for moves.
func (e *Error) MarshalJSON() ([]byte, error) {
	type problem struct {
		Code      Code   `json:"code"`
		Message   string `json:"message"`
		MoveIndex *int   `json:"move_index,omitempty"`
	}
	p := problem{Code: e.Code, Message: e.Message}
	if e.MoveIndex >= 0 {
		p.MoveIndex = &e.MoveIndex
	}
	return json.Marshal(p)
}

// Errors joins several errors found in one position.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}
