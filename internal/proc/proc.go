// Package proc reads the Linux process table, for tests that check no
// engine process outlives its owner. Its functions only read /proc and are
// safe for concurrent use.
package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Children lists the processes whose parent is pid, zombies included (an
// unreaped child is a leak too).
func Children(pid int) []int {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	var kids []int
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces, so cut at the last ')'.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			kids = append(kids, kid)
		}
	}
	return kids
}

// Comm is the process's command name (at most 15 bytes), or "".
func Comm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}
