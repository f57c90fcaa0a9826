package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
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
	wsReadBuffer  = 256 // client messages are small; bigger reads bypass the buffer
	wsWriteBuffer = 256 // frames pass through it into batchConn (held: no syscall)
)

// leanResponse wraps the handler's ResponseWriter for websocket.Accept.
type leanResponse struct {
	http.ResponseWriter
	conn *batchConn // set by Hijack
}

// Hijack takes the connection from net/http and returns it with small
// buffers (hijackLean, leanReadWriter).
func (w *leanResponse) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	bc, left, err := hijackLean(w.ResponseWriter)
	if err != nil {
		return nil, nil, err
	}
	w.conn = bc
	return bc, leanReadWriter(bc, bc, left), nil
}

// hijackLean takes the connection from net/http as a batchConn, with the
// bytes the client sent right after its handshake (already in net/http's
// reader), which the caller must pass on to leanReadWriter.
func hijackLean(rw http.ResponseWriter) (bc *batchConn, left []byte, err error) {
	nc, brw, err := http.NewResponseController(rw).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if brw.Writer.Buffered() > 0 {
		if err := brw.Writer.Flush(); err != nil {
			nc.Close()
			return nil, nil, err
		}
	}
	left, _ = brw.Reader.Peek(brw.Reader.Buffered())
	left = bytes.Clone(left)
	bc = &batchConn{Conn: nc}
	bc.pulled.Store(int64(len(left)))
	return bc, left, nil
}

// leanReadWriter is the small-buffered reader (of bc, the handshake's
// left bytes first: websocket.Accept reads what the reader has buffered
// first) and writer (into w) that websocket.Accept takes.
func leanReadWriter(bc *batchConn, w io.Writer, left []byte) *bufio.ReadWriter {
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(left), bc), max(wsReadBuffer, len(left)))
	if len(left) > 0 {
		br.Peek(len(left)) // into br's buffer, where Accept looks for it
	}
	return bufio.NewReadWriter(br, bufio.NewWriterSize(w, wsWriteBuffer))
}

// batchConn is a net.Conn whose writes can be held and sent as one. Safe
// for concurrent use.
type batchConn struct {
	net.Conn
	mu       sync.Mutex
	held     *[]byte         // non-nil while held: the bytes waiting
	deadline time.Time       // the write deadline set by release, if any
	raw      syscall.RawConn // the socket, for tryRelease's write that does not wait
	// direct counts writes outside a batch under way (a pong, a ping, a
	// close: not held to a deadline): the engine's goroutine does not
	// write inline behind one, which a client that reads nothing can hold
	// up until the ping fails.
	direct atomic.Int32

	// pulled counts the bytes the WebSocket's reader has taken in: from
	// the socket and from the handshake's packet (see waitReadable).
	pulled atomic.Int64
}

func (c *batchConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.pulled.Add(int64(n))
	return n, err
}

// clientFrameSize is the size of a client's message of n bytes sent as one
// masked frame (RFC 6455 5.2): at most what reading it took from the socket.
func clientFrameSize(n int) int64 {
	switch {
	case n < 126:
		return int64(2 + 4 + n)
	case n < 1<<16:
		return int64(4 + 4 + n)
	}
	return int64(10 + 4 + n)
}

// waitReadable returns when the client has sent something (or the
// connection is closed): what the reader goroutine of an idle connection
// waits in, a few frames deep. Blocked inside websocket.Conn.Read instead,
// its stack would keep the size the deep read needed (4 KB rather than the
// 2 KB the runtime shrinks a shallow one to), for every idle connection.
//
// consumed is what the messages read so far took, as clientFrameSize
// counts them; it can only fall short of the truth (a fragmented message,
// the client's pings), never exceed it. When it equals pulled, the reader's
// buffer is empty and waiting on the socket is right; otherwise bytes may
// wait in the buffer, and it returns at once. Only the reader goroutine
// calls it.
func (c *batchConn) waitReadable(consumed int64) {
	if c.pulled.Load() != consumed {
		return
	}
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	waited := false
	var b [1]byte
	rc.Read(func(fd uintptr) bool {
		if waited {
			return true
		}
		// Look first, as the poller wants: it wakes us only for data that
		// arrives after an EAGAIN.
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		if errors.Is(err, syscall.EAGAIN) {
			waited = true
			return false
		}
		return true // data, end of stream or an error: Read will tell
	})
}

var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

func (c *batchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held != nil {
		*c.held = append(*c.held, p...)
		return len(p), nil
	}
	c.direct.Add(1)
	defer c.direct.Add(-1)
	if !c.deadline.IsZero() {
		// A pong, ping or close outside a batch: not held to the batches'
		// deadline, which may have passed while the writer waited.
		c.deadline = time.Time{}
		c.Conn.SetWriteDeadline(time.Time{})
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
		// The write deadline is a timer in the runtime: it is moved only
		// when less than half the timeout is left, not twice per batch.
		// Write clears it before a write outside a batch (a pong, a ping),
		// and noDeadline when the writer goes quiet: only batches are held
		// to it.
		if now := time.Now(); c.deadline.Sub(now) < timeout/2 {
			c.deadline = now.Add(timeout)
			c.Conn.SetWriteDeadline(c.deadline)
		}
		_, err = c.Conn.Write(*b)
	}
	if cap(*b) <= 64<<10 { // an odd huge batch is not kept
		*b = (*b)[:0]
		batchBufs.Put(b)
	}
	return err
}

// tryRelease is release without waiting: it writes what was held as far as
// the socket takes it at once. It reports true when all of it went (or
// nothing was held), and writes are let through again; false when some is
// left, which stays held (later writes join it, in order) for release to
// write. The caller that gets false must see that release is called.
func (c *batchConn) tryRelease() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.held
	if b == nil {
		return true
	}
	if len(*b) > 0 {
		n := c.writeNow(*b)
		if n < len(*b) {
			*b = (*b)[:copy(*b, (*b)[n:])]
			return false
		}
	}
	c.held = nil
	*b = (*b)[:0]
	batchBufs.Put(b)
	return true
}

// writeNow writes p to the socket without waiting for it to take more
// (the socket is non-blocking) and returns how much it took: 0 when it is
// full, errs (release then reports the error) or is not a plain socket.
// c.mu must be held.
func (c *batchConn) writeNow(p []byte) int {
	if c.raw == nil {
		sc, ok := c.Conn.(syscall.Conn)
		if !ok {
			return 0
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return 0
		}
		c.raw = rc
	}
	n := 0
	c.raw.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, err := syscall.Write(int(fd), p[n:])
			if err == syscall.EINTR {
				continue
			}
			if err != nil || m <= 0 {
				break
			}
			n += m
		}
		return true // one attempt: never wait for the socket here
	})
	return n
}

// noDeadline clears the write deadline release set.
func (c *batchConn) noDeadline() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.deadline.IsZero() {
		c.deadline = time.Time{}
		c.Conn.SetWriteDeadline(time.Time{})
	}
}
