package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// dieWithParent has the kernel kill cmd if this process dies first, so that
// an interrupted run leaves no server behind (usid's engines then see EOF on
// stdin and quit).
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// rss is a process's resident set size (VmRSS), in bytes.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb int64
			_, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// raiseNoFile raises this process's open-file limit to at least n if it can
// (children started afterwards inherit it: Setrlimit also stops Go from
// restoring the original limit in them), and returns the soft limit now in
// force.
func raiseNoFile(n uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur >= n {
		// Set it anyway, so that children get this limit too.
		return lim.Cur, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	want := lim
	want.Cur = n
	if want.Max < n {
		want.Max = n // only with CAP_SYS_RESOURCE
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		want.Cur, want.Max = lim.Max, lim.Max // the most we may have
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			return lim.Cur, err
		}
	}
	return want.Cur, nil
}
