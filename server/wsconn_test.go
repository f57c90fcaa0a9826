package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPipelinedFirstMessage: a client may send its first message in the same
// packet as its handshake; leanResponse must hand those bytes, already in
// net/http's buffer, to the WebSocket. Later messages, after the writer has
// gone quiet and returned, are answered too (a new writer starts).
func TestPipelinedFirstMessage(t *testing.T) {
	addr := strings.TrimPrefix(shared.http.URL, "http://")
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var req bytes.Buffer
	req.WriteString("GET /v1/ws HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	req.Write(maskedText(`{"type":"stop","id":"p1"}`))
	if _, err := c.Write(req.Bytes()); err != nil { // one write: handshake and message
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %s", resp.Status)
	}
	expect := func(id string) {
		t.Helper()
		msg := readFrame(t, br)
		if !strings.Contains(msg, `"code":"no_search"`) || !strings.Contains(msg, `"id":"`+id+`"`) {
			t.Fatalf("answer to stop %s: %s", id, msg)
		}
	}
	expect("p1")
	// Two messages in one packet, after a pause (the writer has returned,
	// the reader waits on the socket): both are answered, the second
	// although it sits in the reader's buffer and the socket stays quiet.
	time.Sleep(50 * time.Millisecond)
	if _, err := c.Write(append(maskedText(`{"type":"stop","id":"p2"}`), maskedText(`{"type":"stop","id":"p3"}`)...)); err != nil {
		t.Fatal(err)
	}
	expect("p2")
	expect("p3")
}

// maskedText is a client text frame (RFC 6455 5.2), for payloads under 126 bytes.
func maskedText(payload string) []byte {
	key := [4]byte{1, 2, 3, 4}
	f := []byte{0x81, 0x80 | byte(len(payload)), key[0], key[1], key[2], key[3]}
	for i := range len(payload) {
		f = append(f, payload[i]^key[i%4])
	}
	return f
}

// readFrame reads one unmasked server frame and returns its payload.
func readFrame(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		t.Fatal(err)
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		io.ReadFull(br, b[:])
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		io.ReadFull(br, b[:])
		n = binary.BigEndian.Uint64(b[:])
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		t.Fatal(err)
	}
	if op := h[0] & 0x0f; op != 1 {
		t.Fatalf("frame opcode %d, want text: %q", op, p)
	}
	return string(p)
}

// TestTryReleaseFullSocket: tryRelease writes what the socket takes at once
// and never waits; what a full socket (a client that does not read) leaves
// stays held, later writes join it in order, and release writes it all.
func TestTryReleaseFullSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	srv, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer srv.Close()
	bc := &batchConn{Conn: srv}

	// Small batches go at once while the client's buffers have room.
	var want bytes.Buffer
	bc.hold()
	bc.Write([]byte("first;"))
	want.WriteString("first;")
	if !bc.tryRelease() {
		t.Fatal("tryRelease of 6 bytes to an empty socket: got false, want all written")
	}
	// A batch far bigger than the socket's buffers (loopback's grow to a
	// few MB): tryRelease returns at once with the rest held.
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<21) // 32 MB
	bc.hold()
	bc.Write(big)
	want.Write(big)
	start := time.Now()
	if bc.tryRelease() {
		t.Fatal("tryRelease of 32 MB to a client that does not read: got true, want some held")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("tryRelease waited %v for the socket", d)
	}
	bc.Write([]byte(";after")) // a pong, say: joins the held bytes
	want.WriteString(";after")
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(client, int64(want.Len())))
		got <- b
	}()
	if err := bc.release(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("client read %d bytes, want the %d written, in order", len(b), want.Len())
	}
	// Writes are let through again after release.
	bc.Write([]byte("x"))
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	var one [1]byte
	if _, err := io.ReadFull(client, one[:]); err != nil || one[0] != 'x' {
		t.Fatalf("write after release: got %q, %v", one, err)
	}
}
