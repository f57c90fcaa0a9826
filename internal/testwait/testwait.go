// Package testwait lets a test wait for the state it needs instead of
// sleeping for a guessed time: For polls a condition until it holds, failing
// the test only when a deadline far beyond the normal case passes. Safe for
// concurrent use; it is imported only by tests.
package testwait

import (
	"testing"
	"time"
)

// For polls cond every few milliseconds (backing off to 50ms) until it
// returns true, and fails the test with what if d passes first. Choose d for
// a busy machine: it bounds a broken run, it is not the expected time.
func For(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}
