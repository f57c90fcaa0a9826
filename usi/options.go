// Options. The engine's advertised options, their current values, and
// setoption with every value checked against the option's declaration first.

package usi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Options returns the options the engine advertised, in its order.
func (e *Engine) Options() []Option {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Option, len(e.options))
	for i, o := range e.options {
		o.Vars = slices.Clone(o.Vars)
		out[i] = o
	}
	return out
}

// OptionValue returns the current value of an option as this Engine knows it:
// its default until SetOption changed it. Names match case-insensitively.
// USI has no command to read options back from the engine.
func (e *Engine) OptionValue(name string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o, ok := e.findOption(name)
	if !ok {
		return "", false
	}
	return e.values[o.Name], true
}

// findOption looks an option up by name, case-insensitively as USI says.
// e.mu must be held.
func (e *Engine) findOption(name string) (Option, bool) {
	for _, o := range e.options {
		if strings.EqualFold(o.Name, name) {
			return o, true
		}
	}
	return Option{}, false
}

// SetOption sets an advertised option after checking the value against what
// the engine advertised: "true"/"false" for check, an integer within
// min..max for spin, one of the vars for combo, no value for button. An
// empty string or filename value is sent as "setoption name <id>" without a
// value: fairy-stockfish would take "<empty>" for a file name. It fails with
// ErrBusy during a search, since USI sends setoption only to a waiting
// engine. Follow it with IsReady to know the engine has applied it.
func (e *Engine) SetOption(name, value string) error {
	e.mu.Lock()
	o, ok := e.findOption(name)
	busy := e.search != nil
	e.mu.Unlock()
	if !ok && (name == "USI_Hash" || name == "USI_Ponder") {
		// GUIs send these two reserved options to every engine, advertised
		// or not; an engine that does not know them ignores them.
		o, ok = Option{Name: name, Type: TypeSpin}, true
		if name == "USI_Ponder" {
			o.Type = TypeCheck
		}
	}
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownOption, clip(name))
	}
	if busy {
		return ErrBusy
	}
	value, err := checkOptionValue(o, value)
	if err != nil {
		return err
	}
	line, err := SetOption{Name: o.Name, Value: value}.Line()
	if err != nil {
		return err
	}
	if err := e.write(line); err != nil {
		return err
	}
	if o.Type != TypeButton {
		e.mu.Lock()
		e.values[o.Name] = value
		e.mu.Unlock()
	}
	return nil
}

// checkOptionValue validates v for option o and returns it as it should be
// sent.
func checkOptionValue(o Option, v string) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: option %s (%s): value %q %s", ErrBadCommand, o.Name, o.Type, clip(v), why)
	}
	switch o.Type {
	case TypeButton:
		if v != "" {
			return "", bad("given for a button")
		}
		return "", nil
	case TypeCheck:
		switch strings.ToLower(v) {
		case "true", "false":
			return strings.ToLower(v), nil
		}
		return "", bad("is not true or false")
	case TypeSpin:
		n, ok := parseInt(v)
		if !ok {
			return "", bad("is not an integer")
		}
		if (o.HasMin && n < o.Min) || (o.HasMax && n > o.Max) {
			return "", bad(fmt.Sprintf("is outside %d..%d", o.Min, o.Max))
		}
		return strconv.FormatInt(n, 10), nil
	case TypeCombo:
		for _, w := range o.Vars {
			if strings.EqualFold(w, v) {
				return w, nil
			}
		}
		return "", bad("is not one of " + strings.Join(o.Vars, ", "))
	default: // string, filename
		if v == "" {
			return "", nil
		}
		if err := checkText("option value", v); err != nil {
			return "", err
		}
		return v, nil
	}
}

// ResetOptions sets every option whose value SetOption changed back to its
// default, so that a leased engine goes back to the pool as it came.
func (e *Engine) ResetOptions() error {
	e.mu.Lock()
	var changed []Option
	for _, o := range e.options {
		if o.Type != TypeButton && e.values[o.Name] != o.Default {
			changed = append(changed, o)
		}
	}
	e.mu.Unlock()
	for _, o := range changed {
		if err := e.SetOption(o.Name, o.Default); err != nil {
			return err
		}
	}
	return nil
}
