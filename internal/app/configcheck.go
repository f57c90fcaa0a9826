package app

import (
	"encoding"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checkKeys walks a parsed YAML document against the Go type it will be
// decoded into and returns one error per key that type does not have,
// saying where it is (line and path), which keys are valid there, and the
// key probably meant. yaml.v3's own strict mode stops at the first unknown
// key and names it by the Go type ("field foo not found in type
// app.Config"), which tells an operator nothing about what to write instead.
//
// It knows the yaml.v3 rules that decide which keys a type takes: yaml tags
// (a field without one is its lower-cased name, "-" is no key, ",inline"
// lays the inner struct's keys into the outer mapping), pointers, slices,
// and maps, whose keys are free (env, options, client_options) but whose
// values are checked. A type that decodes itself (yaml.Unmarshaler,
// encoding.TextUnmarshaler) is left to itself. Anchors and aliases are
// followed; merge keys ("<<") lay their mapping into the one holding them.
// Values of the wrong kind (a list where a mapping is expected) are left to
// the decoder, which reports them.
func checkKeys(doc *yaml.Node, t reflect.Type) error {
	c := &keyChecker{seen: map[visit]bool{}}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		doc = doc.Content[0]
	}
	c.walk(doc, t, "")
	return errors.Join(c.errs...)
}

type visit struct {
	n *yaml.Node
	t reflect.Type
}

type keyChecker struct {
	errs []error
	// seen keeps a node reached again through an alias from being walked
	// again: a document of nested aliases would otherwise cost time
	// exponential in its size (and its errors are reported once anyway).
	seen map[visit]bool
}

var (
	unmarshalerType     = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself reports whether values of t are decoded by their own code.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(unmarshalerType) || p.Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
}

func (c *keyChecker) walk(n *yaml.Node, t reflect.Type, path string) {
	for n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return
		}
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		if decodesItself(t) {
			return
		}
		t = t.Elem()
	}
	if decodesItself(t) {
		return
	}
	v := visit{n, t}
	if c.seen[v] {
		return
	}
	c.seen[v] = true
	null := n.Kind == yaml.ScalarNode && n.Tag == "!!null"
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind == yaml.MappingNode {
			c.mapping(n, t, path)
		} else if !null {
			keys := slices.Sorted(maps.Keys(structKeys(t)))
			c.wrongKind(n, path, "a mapping of keys ("+strings.Join(keys, ", ")+")")
		}
	case reflect.Slice, reflect.Array:
		if n.Kind == yaml.SequenceNode {
			for i, e := range n.Content {
				c.walk(e, t.Elem(), path+"["+strconv.Itoa(i)+"]")
			}
		} else if !null {
			c.wrongKind(n, path, "a list")
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode && !null {
			c.wrongKind(n, path, "a mapping")
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if isMerge(k) {
					c.merged(n.Content[i+1], t, path)
					continue
				}
				c.walk(n.Content[i+1], t.Elem(), join(path, k.Value, false))
			}
		}
	}
}

// wrongKind reports a value of the wrong kind (a number where a mapping
// belongs): yaml.v3 would name the Go type it cannot fill, struct fields
// and all.
func (c *keyChecker) wrongKind(n *yaml.Node, path, want string) {
	where := path
	if where == "" {
		where = "the top level"
	}
	c.errs = append(c.errs, fmt.Errorf("line %d: %s: want %s, not a %s", n.Line, where, want, kindName(n.Kind)))
}

func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Tag == "!!merge"
}

// merged walks the value of a merge key: a mapping, or a list of them.
func (c *keyChecker) merged(v *yaml.Node, t reflect.Type, path string) {
	for v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind == yaml.SequenceNode {
		for _, e := range v.Content {
			c.walk(e, t, path)
		}
		return
	}
	c.walk(v, t, path)
}

func (c *keyChecker) mapping(n *yaml.Node, t reflect.Type, path string) {
	fields := structKeys(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			c.merged(v, t, path)
			continue
		}
		if ft, ok := fields[k.Value]; ok && k.Kind == yaml.ScalarNode {
			c.walk(v, ft, join(path, k.Value, true))
			continue
		}
		c.errs = append(c.errs, unknownKey(k, path, fields))
	}
}

// unknownKey is the error for key k, not one of fields, at path.
func unknownKey(k *yaml.Node, path string, fields map[string]reflect.Type) error {
	valid := make([]string, 0, len(fields))
	for name := range fields {
		valid = append(valid, name)
	}
	slices.Sort(valid)
	name := k.Value
	if k.Kind != yaml.ScalarNode {
		name = "(a " + kindName(k.Kind) + ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "line %d: unknown key %s", k.Line, join(path, name, true))
	if s := closest(name, valid); s != "" {
		fmt.Fprintf(&b, " (did you mean %q?)", s)
	}
	where := path
	if where == "" {
		where = "the top level"
	}
	if len(valid) == 0 {
		fmt.Fprintf(&b, "; %s takes no keys", where)
	} else {
		fmt.Fprintf(&b, "; valid keys at %s: %s", where, strings.Join(valid, ", "))
	}
	return errors.New(b.String())
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

// join appends key to path: "a.b" for a struct field (and map keys that
// read as names), `a["Skill Level"]` for other map keys.
func join(path, key string, field bool) string {
	if !field && !plainKey(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func plainKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// structKeys lists the keys yaml.v3 decodes into struct type t, with the
// type each one's value decodes into.
func structKeys(t reflect.Type) map[string]reflect.Type {
	keys := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if slices.Contains(strings.Split(opts, ","), "inline") {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range structKeys(ft) {
					keys[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		keys[name] = f.Type
	}
	return keys
}

// closest returns the valid key nearest to s, if it is within two edits
// (and fewer edits than s has letters: "x" is no typo of "go") and no other
// key is as near: "base" is two edits from both cache and games, and
// suggesting either would only mislead.
func closest(s string, valid []string) string {
	best, out, tie := 3, "", false
	for _, v := range valid {
		d := editDistance(strings.ToLower(s), v)
		if d >= len(s) {
			continue
		}
		switch {
		case d < best:
			best, out, tie = d, v, false
		case d == best:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes; keys
// are short (a long one is no typo of any valid key, and is cut short).
func editDistance(a, b string) int {
	if len(a) > 64 {
		a = a[:64]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
