package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"syscall"
	"time"
)

// The clients of (2) are this file: plain sockets read by one epoll loop on
// one OS thread, so that hundreds of clients cost the machine little and the
// same at every run (no goroutine per connection to wake and schedule, no
// allocation per message beyond the frame itself). It speaks just enough
// RFC 6455 for the measurement: the opening handshake, masked text frames
// out, unmasked frames in (text, ping answered with pong, close).

// rawWS is one client connection.
type rawWS struct {
	fd     int
	buf    []byte // bytes read and not yet parsed
	closed bool
}

// dialRaw opens a WebSocket to ws://addr/path and returns it as a
// non-blocking socket.
func dialRaw(addr, path string, timeout time.Duration) (*rawWS, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close() // the socket lives on in the duplicate below
	c.SetDeadline(time.Now().Add(timeout))
	var key [16]byte
	rand.Read(key[:])
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		path, addr, base64.StdEncoding.EncodeToString(key[:]))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return nil, fmt.Errorf("handshake: %s", resp.Status)
	}
	f, err := c.(*net.TCPConn).File()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	w := &rawWS{fd: fd}
	if n := br.Buffered(); n > 0 { // the server spoke right after the handshake
		rest, _ := br.Peek(n)
		w.buf = append(w.buf, rest...)
	}
	return w, nil
}

// send writes one masked frame (opcode 1 text, 10 pong).
func (w *rawWS) send(opcode byte, payload []byte) error {
	if w.closed {
		return net.ErrClosed
	}
	frame := make([]byte, 0, len(payload)+14)
	frame = append(frame, 0x80|opcode)
	switch n := len(payload); {
	case n < 126:
		frame = append(frame, 0x80|byte(n))
	case n < 1<<16:
		frame = append(frame, 0x80|126)
		frame = binary.BigEndian.AppendUint16(frame, uint16(n))
	default:
		frame = append(frame, 0x80|127)
		frame = binary.BigEndian.AppendUint64(frame, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	frame = append(frame, mask[:]...)
	for i, b := range payload {
		frame = append(frame, b^mask[i%4])
	}
	for len(frame) > 0 {
		n, err := syscall.Write(w.fd, frame)
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		if err != nil {
			return err
		}
		frame = frame[n:]
	}
	return nil
}

func (w *rawWS) close() {
	if !w.closed {
		w.closed = true
		syscall.Close(w.fd)
	}
}

// fill reads what the socket has. It reports false when the peer has gone.
func (w *rawWS) fill() bool {
	for {
		if cap(w.buf)-len(w.buf) < 4096 {
			w.buf = append(w.buf[:len(w.buf):len(w.buf)], make([]byte, 8192)...)[:len(w.buf)]
		}
		n, err := syscall.Read(w.fd, w.buf[len(w.buf):cap(w.buf)])
		if n > 0 {
			w.buf = w.buf[:len(w.buf)+n]
		}
		switch {
		case errors.Is(err, syscall.EAGAIN):
			return true
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil || n == 0:
			return false
		}
	}
}

// frames hands out each complete frame in the buffer (payload valid until
// the next fill), answering pings itself, and keeps a partial one.
func (w *rawWS) frames(each func(opcode byte, payload []byte)) {
	b := w.buf
	for len(b) >= 2 {
		opcode, n, hdr := b[0]&0x0f, uint64(b[1]&0x7f), 2
		switch n {
		case 126:
			if len(b) < 4 {
				goto partial
			}
			n, hdr = uint64(binary.BigEndian.Uint16(b[2:])), 4
		case 127:
			if len(b) < 10 {
				goto partial
			}
			n, hdr = binary.BigEndian.Uint64(b[2:]), 10
		}
		if uint64(len(b)-hdr) < n {
			goto partial
		}
		payload := b[hdr : hdr+int(n)]
		if opcode == 9 {
			w.send(10, payload)
		} else {
			each(opcode, payload)
		}
		b = b[hdr+int(n):]
	}
partial:
	w.buf = append(w.buf[:0], b...)
}

// epollLoop waits on the connections' sockets on a dedicated OS thread and
// calls onFrame for each frame read, with the time the read returned, until
// done says so or the deadline passes. tick runs after every wait.
func epollLoop(conns []*rawWS, deadline time.Time, onFrame func(i int, now time.Time, opcode byte, payload []byte), tick func(now time.Time), done func() bool) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	defer syscall.Close(ep)
	for i, c := range conns {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(i)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			return err
		}
		if len(c.buf) > 0 {
			c.frames(func(op byte, p []byte) { onFrame(i, time.Now(), op, p) })
		}
	}
	events := make([]syscall.EpollEvent, 256)
	for !done() {
		now := time.Now()
		if now.After(deadline) {
			return fmt.Errorf("clients not done by the deadline")
		}
		n, err := syscall.EpollWait(ep, events, 20)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return err
		}
		for _, ev := range events[:max(n, 0)] {
			i := int(ev.Fd)
			c := conns[i]
			if c.closed {
				continue
			}
			alive := c.fill()
			now := time.Now()
			c.frames(func(op byte, p []byte) { onFrame(i, now, op, p) })
			if !alive {
				syscall.EpollCtl(ep, syscall.EPOLL_CTL_DEL, c.fd, nil)
				c.close()
				onFrame(i, now, 8, nil) // gone: as a close frame
			}
		}
		tick(time.Now())
	}
	return nil
}

// dialRawMany opens n connections, par at a time.
func dialRawMany(addr, path string, n, par int) ([]*rawWS, error) {
	conns := make([]*rawWS, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, par)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			c, err := dialRaw(addr, path, 30*time.Second)
			conns[i] = c
			errs <- err
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		for _, c := range conns {
			if c != nil {
				c.close()
			}
		}
		return nil, fmt.Errorf("dialing %d connections: %w", n, first)
	}
	return conns, nil
}

// closeRaw closes the connections without a close handshake.
func closeRaw(conns []*rawWS) {
	for _, c := range conns {
		c.close()
	}
}
