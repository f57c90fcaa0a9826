package etag

import "testing"

// The tag is quoted, 32 hex digits, the same for the same bytes and not
// for others.
func TestOf(t *testing.T) {
	a, b := Of([]byte(`{"a":1}`)), Of([]byte(`{"a":2}`))
	if len(a) != 34 || a[0] != '"' || a[33] != '"' || a == b || a != Of([]byte(`{"a":1}`)) {
		t.Errorf("got %s and %s", a, b)
	}
	if got := Of(nil); got != `"e3b0c44298fc1c149afbf4c8996fb924"` { // SHA-256 of nothing
		t.Errorf("Of(nil) = %s", got)
	}
}
