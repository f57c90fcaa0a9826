package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// What one WebSocket connection costs, and what it holds.
//
// coder/websocket keeps, for the connection's life, the bufio.Reader and
// bufio.Writer that Hijack returns: net/http's 4 KB each, 8 KB per
// connection whether it ever sends a byte or not (most of an idle
// connection's heap). leanResponse hands websocket.Accept a smaller pair
// instead (wsReadBuffer, wsWriteBuffer): a read larger than the buffer goes
// straight into the caller's slice, so client messages cost no extra
// syscalls, and writes go through batchConn, which gathers a batch of
// events into one write.
//
// batchConn: coder/websocket flushes every message, one write(2) per event.
// While the writer sends the events of one batch it holds the connection's
// output (hold), and release writes them all at once with the write
// deadline, so a batch of n events costs one syscall and no timer per
// event. Control frames written meanwhile by the reader (pong, close) join
// the batch in order. The buffer is pooled between batches, so an idle
// connection holds none.

const (
	wsReadBuffer  = 512 // client messages are small; bigger ones bypass the buffer
	wsWriteBuffer = 512 // frames pass through it into batchConn
)

// leanResponse wraps the handler's ResponseWriter for websocket.Accept.
type leanResponse struct {
	http.ResponseWriter
	conn *batchConn // set by Hijack
}

// Hijack takes the connection from net/http and returns it with small
// buffers. Bytes the client sent right after its handshake (already in
// net/http's reader) are kept: websocket.Accept reads what the returned
// reader has buffered first.
func (w *leanResponse) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if brw.Writer.Buffered() > 0 {
		if err := brw.Writer.Flush(); err != nil {
			nc.Close()
			return nil, nil, err
		}
	}
	left, _ := brw.Reader.Peek(brw.Reader.Buffered())
	bc := &batchConn{Conn: nc}
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(left)), bc), max(wsReadBuffer, len(left)))
	if len(left) > 0 {
		br.Peek(len(left)) // into br's buffer, where Accept looks for it
	}
	w.conn = bc
	return bc, bufio.NewReadWriter(br, bufio.NewWriterSize(bc, wsWriteBuffer)), nil
}

// batchConn is a net.Conn whose writes can be held and sent as one. Safe
// for concurrent use.
type batchConn struct {
	net.Conn
	mu   sync.Mutex
	held *[]byte // non-nil while held: the bytes waiting
}

var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

func (c *batchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held != nil {
		*c.held = append(*c.held, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// hold makes writes wait for release.
func (c *batchConn) hold() {
	c.mu.Lock()
	if c.held == nil {
		c.held = batchBufs.Get().(*[]byte)
	}
	c.mu.Unlock()
}

// release writes what was held, within timeout, and lets writes through again.
func (c *batchConn) release(timeout time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.held
	if b == nil {
		return nil
	}
	c.held = nil
	var err error
	if len(*b) > 0 {
		c.Conn.SetWriteDeadline(time.Now().Add(timeout))
		_, err = c.Conn.Write(*b)
		c.Conn.SetWriteDeadline(time.Time{})
	}
	if cap(*b) <= 64<<10 { // an odd huge batch is not kept
		*b = (*b)[:0]
		batchBufs.Put(b)
	}
	return err
}
