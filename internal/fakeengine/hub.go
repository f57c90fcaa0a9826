package fakeengine

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// EnvHub names the environment variable that gives a StampHub engine the
// hub's Unix socket.
const EnvHub = "USID_FAKE_ENGINE_HUB"

// A stamp hub takes the per-line work of many StampedInfo-like engines into
// one process, so that a benchmark of usid with hundreds of sessions measures
// usid rather than hundreds of engine processes waking up to print (each a
// Go runtime with its own timers, threads and scheduler on a shared CPU).
//
// Every StampHub engine process is still a real process with its own pipes,
// as usid expects, but it only does the USI conversation (usi, isready, go,
// stop, quit). At start it hands its stdout (the pipe usid reads) to the hub
// over the Unix socket named by EnvHub (SCM_RIGHTS); during a "go infinite"
// the hub writes the stamped info lines into that pipe, and on "stop" the
// bestmove, then tells the engine it may go on. The engine process sleeps in
// read(2) meanwhile. Lines are shorter than PIPE_BUF, so writes by the hub and
// by the engine never interleave within a line.
//
// The protocol on each connection, one line each way:
//
//	engine → hub: "go <bestmove line>"   start stamping
//	engine → hub: "stop"                 write the bestmove line, then answer
//	hub → engine: "ok"                   the bestmove is written

// ServeHub serves StampHub engines on ln until ln is closed: each engine's
// search gets an info line "info depth N nodes N string t=<unix ns>" every
// interval, as StampedInfo prints them. Safe to call once per listener.
func ServeHub(ln *net.UnixListener, interval time.Duration) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		wg.Go(func() { hubEngine(c, interval) })
	}
}

// hubEngine serves one engine process: receives its stdout, then runs its
// searches until the engine hangs up.
func hubEngine(c *net.UnixConn, interval time.Duration) {
	defer c.Close()
	out, err := recvFile(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeengine hub:", err)
		return
	}
	defer out.Close()
	in := bufio.NewScanner(c)
	var stop chan struct{}
	var done chan struct{}
	end := func() {
		if stop != nil {
			close(stop)
			<-done
			stop, done = nil, nil
		}
	}
	defer end()
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		switch cmd {
		case "go":
			end()
			stop, done = make(chan struct{}), make(chan struct{})
			go func(stop, done chan struct{}) {
				defer close(done)
				stampLines(out, interval, arg, stop)
			}(stop, done)
		case "stop":
			end()
			if _, err := c.Write([]byte("ok\n")); err != nil {
				return
			}
		}
	}
}

// stampLines writes a stamped info line every interval until stop, then the
// bestmove line.
func stampLines(out *os.File, interval time.Duration, best string, stop <-chan struct{}) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	buf := make([]byte, 0, 96)
	for depth := 1; ; depth++ {
		select {
		case <-stop:
			out.Write([]byte(best + "\n"))
			return
		case <-tick.C:
			buf = append(buf[:0], "info depth "...)
			buf = strconv.AppendInt(buf, int64(depth), 10)
			buf = append(buf, " nodes "...)
			buf = strconv.AppendInt(buf, int64(depth), 10)
			buf = append(buf, " string t="...)
			buf = strconv.AppendInt(buf, time.Now().UnixNano(), 10)
			buf = append(buf, '\n')
			if _, err := out.Write(buf); err != nil {
				<-stop // usid has gone; wait to be told
				return
			}
		}
	}
}

// recvFile reads the descriptor an engine sent with sendFile.
func recvFile(c *net.UnixConn) (*os.File, error) {
	oob := make([]byte, syscall.CmsgSpace(4))
	buf := make([]byte, 1)
	_, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("no descriptor from the engine (%v)", err)
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("no descriptor from the engine (%v)", err)
	}
	return os.NewFile(uintptr(fds[0]), "engine-stdout"), nil
}

// hubClient is a StampHub engine's end of the hub connection.
type hubClient struct {
	c  *net.UnixConn
	in *bufio.Reader
}

// dialHub connects to the hub and hands it this process's stdout.
func dialHub(socket string) (*hubClient, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return nil, err
	}
	if _, _, err := c.WriteMsgUnix([]byte{0}, syscall.UnixRights(int(os.Stdout.Fd())), nil); err != nil {
		c.Close()
		return nil, err
	}
	return &hubClient{c: c, in: bufio.NewReader(c)}, nil
}

func (h *hubClient) goSearch(best string) error {
	_, err := h.c.Write([]byte("go " + best + "\n"))
	return err
}

// stop asks the hub for the bestmove and waits until it is written.
func (h *hubClient) stop() error {
	if _, err := h.c.Write([]byte("stop\n")); err != nil {
		return err
	}
	line, err := h.in.ReadString('\n')
	if err == nil && line != "ok\n" {
		err = fmt.Errorf("hub answered %q", line)
	}
	return err
}
