package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/game"
	"github.com/usid/usid/internal/rules"
	"github.com/usid/usid/shogi"
)

// maxLine bounds one input line of `usid validate`; longer lines get an
// error verdict instead of unbounded memory.
const maxLine = 1 << 20

// runValidate prints one verdict per input line, in order, so output line i
// answers input line i.
func runValidate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var g gameFlags
	fs.BoolVar(&g.chess, "chess", false, "startpos is the chess start position")
	fs.BoolVar(&g.chess960, "chess960", false, "chess, castling by Chess960 rules")
	fs.StringVar(&g.name, "game", "", "the game of the positions: shogi (default), chess, othello")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	other, err := g.other()
	if err != nil {
		fmt.Fprintf(stderr, "usid validate: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "usid validate: takes no arguments, reads stdin\n")
		return 2
	}
	in := bufio.NewReaderSize(stdin, 64<<10)
	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for ctx.Err() == nil {
		line, tooLong, err := readLine(in)
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintf(stderr, "usid validate: %v\n", err)
			out.Flush()
			return 1
		}
		var v any
		switch {
		case tooLong:
			v = shogi.Verdict{LegalMoves: []string{}, Errors: []*shogi.Error{{
				Code: shogi.CodePositionSyntax, Message: fmt.Sprintf("line longer than %d bytes", maxLine), MoveIndex: -1}}}
		case other != nil:
			v = otherVerdict(other, line)
		case g.isChess(line):
			v = chessVerdict(line, g.variant())
		default:
			v = verdict(line)
		}
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(stderr, "usid validate: %v\n", err)
			return 1
		}
		if in.Buffered() == 0 { // keep interactive use responsive
			out.Flush()
		}
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintf(stderr, "usid validate: %v\n", err)
		return 1
	}
	return 0
}

func verdict(line string) shogi.Verdict {
	sfen, moves, err := shogi.ParsePositionCommand(line)
	if err != nil {
		var e *shogi.Error
		errors.As(err, &e)
		return shogi.Verdict{LegalMoves: []string{}, Errors: []*shogi.Error{e}}
	}
	return shogi.Inspect(sfen, moves)
}

// otherVerdict is the verdict of a position of a game other than shogi
// and chess, asked of the game.
func otherVerdict(gm game.Game, line string) any {
	start, moves, err := split(gm, line)
	if err != nil {
		return struct {
			Valid      bool           `json:"valid"`
			LegalMoves []string       `json:"legal_moves"`
			Errors     []*rules.Error `json:"errors"`
		}{LegalMoves: []string{}, Errors: []*rules.Error{err}}
	}
	return gm.Inspect(start, "", moves, false)
}

func chessVerdict(line string, variant chess.Variant) chess.Verdict {
	fen, moves, err := chess.ParsePositionCommand(line)
	if err != nil {
		var e *chess.Error
		errors.As(err, &e)
		return chess.Verdict{LegalMoves: []string{}, Errors: []*chess.Error{e}}
	}
	return chess.Inspect(fen, moves, variant)
}

// readLine reads one line without its line ending. A line over maxLine is
// consumed and reported as tooLong.
func readLine(r *bufio.Reader) (line string, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			if err == io.EOF && (buf != nil || tooLong) {
				return string(buf), tooLong, nil
			}
			return "", false, err
		}
		if !tooLong {
			if len(buf)+len(chunk) > maxLine {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if !isPrefix {
			if buf == nil {
				buf = []byte{}
			}
			return string(buf), tooLong, nil
		}
	}
}
