package server

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// TestViewerNeverBlocks: Send on a viewer whose client reads nothing
// returns at once every time, queues what the socket does not take, and
// refuses (the hub then drops the viewer) once maxViewerPending bytes wait.
func TestViewerNeverBlocks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	client.(*net.TCPConn).SetReadBuffer(4096) // and never read
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	sc.(*net.TCPConn).SetWriteBuffer(4096)
	rc, err := sc.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	v := &viewer{s: &Server{cfg: Config{WriteTimeout: time.Minute}}, conn: &viewerConn{batchConn: &batchConn{Conn: sc}}, raw: rc}
	frame := make([]byte, 2048)
	refused := -1
	for i := range 1000 {
		start := time.Now()
		ok := v.Send(frame)
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Fatalf("send %d took %v", i, d)
		}
		if !ok {
			refused = i
			break
		}
	}
	if refused < 0 {
		t.Fatalf("1000 frames of 2 KB to a client that reads nothing were all taken")
	}
	v.mu.Lock()
	pending := len(v.pending)
	v.mu.Unlock()
	t.Logf("refused at frame %d, %d bytes pending", refused, pending)
	if pending > maxViewerPending {
		t.Errorf("%d bytes pending, more than %d", pending, maxViewerPending)
	}
	if v.Send([]byte("x")) {
		t.Errorf("a dropped viewer took more")
	}
}
