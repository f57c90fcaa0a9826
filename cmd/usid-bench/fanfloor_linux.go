package main

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/usid/usid/broadcast"
)

// The fan-out floor of (11): the least any server pays to give N viewers
// a line. A child process (this binary, envFanFloor naming the interval)
// that speaks just enough of usid's broadcast API for broadcastRun (POST
// /v1/broadcasts, DELETE, the viewers' WebSocket handshake) and, every
// interval, writes one info frame of usid's shape, built once, to every
// viewer's socket with one non-blocking write(2), over GOMAXPROCS
// goroutines as usid's hub does: no engine, no session, no Redis, no
// per-viewer state but the descriptor. Its CPU per delivered message,
// measured like usid's in the same run, is what the kernel takes for one
// TCP write on this machine (on loopback the receiver's side too).

const envFanFloor = "USID_BENCH_FANFLOOR"

const floorBroadcastID = "f100f100f100f100f100f100f100f100"

// fanFloorChild serves on the address in the environment until killed.
func fanFloorChild(spec string) int {
	iv, addr, _ := strings.Cut(spec, ",")
	interval, err := time.ParseDuration(iv)
	if err != nil || addr == "" {
		fmt.Fprintln(os.Stderr, "fanfloor: want interval,addr:", spec)
		return 2
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanfloor:", err)
		return 1
	}
	var mu sync.Mutex
	var fds []int
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/broadcasts", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":%q}`, floorBroadcastID)
	})
	mux.HandleFunc("DELETE /v1/broadcasts/{id}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for _, fd := range fds {
			syscall.Close(fd)
		}
		fds = nil
		mu.Unlock()
	})
	mux.HandleFunc("GET /v1/broadcasts/{id}/ws", func(w http.ResponseWriter, r *http.Request) {
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close() // the socket lives on in the duplicate
		h := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
			base64.StdEncoding.EncodeToString(h[:]))
		if rw.Flush() != nil {
			return
		}
		f, err := c.(*net.TCPConn).File()
		if err != nil {
			return
		}
		defer f.Close()
		fd, err := syscall.Dup(int(f.Fd()))
		if err != nil || syscall.SetNonblock(fd, true) != nil {
			return
		}
		mu.Lock()
		fds = append(fds, fd)
		mu.Unlock()
	})
	go http.Serve(ln, mux)

	workers := runtime.GOMAXPROCS(0)
	tick := time.NewTicker(interval) // the engine's pace, whatever a fan-out takes
	for depth := 1; ; depth++ {
		<-tick.C
		// usid's info event of the stamped fake engine, as its viewers get it.
		payload := fmt.Appendf(nil, `{"type":"info","id":%q,"search":1,"depth":%d,"nodes":%d,"string":"t=%d"}`,
			floorBroadcastID, depth, depth, time.Now().UnixNano())
		frame := broadcast.AppendFrame(nil, payload) // as usid's hub frames it
		mu.Lock()
		all := fds
		mu.Unlock()
		chunk := (len(all) + workers - 1) / max(workers, 1)
		var wg sync.WaitGroup
		for i := 0; i < len(all); i += max(chunk, 1) {
			part := all[i:min(i+chunk, len(all))]
			wg.Go(func() {
				for _, fd := range part {
					syscall.Write(fd, frame) // a full socket drops the line: the reader counts it
				}
			})
		}
		wg.Wait()
	}
}

// startFanFloor starts the floor's child process. It is measured by
// broadcastRun as a usid would be (its address, its pid), so it is one.
func (b *bench) startFanFloor() (*usidProc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(b.self)
	cmd.Env = append(os.Environ(), envFanFloor+"="+b.bcInterval.String()+","+addr)
	cmd.Stderr = os.Stderr
	if err := startServing(cmd, addr, "the fan-out floor", func(c net.Conn) bool {
		fmt.Fprintf(c, "POST /v1/broadcasts HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		return err == nil && resp.StatusCode == http.StatusCreated
	}); err != nil {
		return nil, err
	}
	return &usidProc{cmd: cmd, addr: addr, http: b.http}, nil
}
