package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
)

// DecodeStrict decodes raw, which must be exactly one JSON object, into v.
// It is the one parser for every client message and request body: syntax
// errors, trailing data (`{}}`, `{}]`, a second object), duplicate keys at
// any depth, unknown fields and wrong types are all refused. What the rate
// limiter charges and what the handler runs come from the same parse, so no
// message can look like one thing to the first and another to the second.
func DecodeStrict(raw []byte, v any) error {
	if err := checkShape(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New(JSONError(err))
	}
	return nil
}

// checkShape walks raw's tokens: one object, no duplicate key in any
// object, nothing but white space after it.
func checkShape(raw []byte) error {
	type frame struct {
		object    bool
		expectKey bool
		keys      map[string]struct{}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []*frame
	first := true
	for {
		tok, err := dec.Token()
		if err != nil {
			if err == io.EOF {
				return errors.New("empty message")
			}
			return errors.New(JSONError(err))
		}
		if first {
			if d, ok := tok.(json.Delim); !ok || d != '{' {
				return errors.New("want a JSON object")
			}
			first = false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
			} else {
				k := foldKey(tok.(string)) // the decoder only yields string keys here
				if _, dup := top.keys[k]; dup {
					return fmt.Errorf("duplicate key %q", clip(tok.(string)))
				}
				top.keys[k] = struct{}{}
				top.expectKey = false
				continue
			}
		} else {
			switch tok {
			case json.Delim('{'):
				stack = append(stack, &frame{object: true, expectKey: true, keys: map[string]struct{}{}})
				continue
			case json.Delim('['):
				stack = append(stack, &frame{})
				continue
			case json.Delim(']'):
				stack = stack[:len(stack)-1]
			}
		}
		// A value ended: its object, if any, expects a key next.
		if len(stack) == 0 {
			break
		}
		if p := stack[len(stack)-1]; p.object {
			p.expectKey = true
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	return nil
}

// foldKey maps a key to one spelling per case-fold class: encoding/json
// matches field names case-insensitively (Unicode simple folding, so "ſ" is
// "s"), and "type" and "TYPE" in one object would be a duplicate to it.
func foldKey(k string) string {
	return strings.Map(func(r rune) rune {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		return min
	}, k)
}
