package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// clockTick is the unit of utime and stime in /proc/PID/stat: USER_HZ, 100
// on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// procStat reads a process's parent and its CPU time so far (user and
// system, its threads dead and alive; not its children's).
func procStat(pid int) (ppid int, cpu time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) may hold spaces: fields count from its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
	ppid, _ = strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return ppid, time.Duration(ut+st) * clockTick, nil
}

// cpuOf is the CPU time so far of pid (0 if it has gone).
func cpuOf(pid int) time.Duration {
	_, cpu, _ := procStat(pid)
	return cpu
}

// childrenCPU is the CPU time so far of pid's live children, by pid.
func childrenCPU(pid int) map[int]time.Duration {
	out := map[int]time.Duration{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, cpu, err := procStat(child); err == nil && ppid == pid {
			out[child] = cpu
		}
	}
	return out
}
