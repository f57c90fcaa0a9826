package deploy_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind (the live
// tests' log readers, HTTP and WebSocket clients).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
