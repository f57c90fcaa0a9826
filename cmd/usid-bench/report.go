package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// report collects the table rows and notes of a run.
type report struct {
	started time.Time
	took    time.Duration
	command string
	load    [2]string // /proc/loadavg at the start and the end: how noisy the machine was
	section string    // the measurement adding rows now
	rows    []row
	notes   []string
}

type row struct {
	section, what, result, target, verdict string
}

func (r *report) add(what, result, target, verdict string) {
	r.rows = append(r.rows, row{r.section, what, result, target, verdict})
}

func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// verdict is PASS or MISS.
func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func (r *report) markdown(b *bench) string {
	var w strings.Builder
	fmt.Fprintf(&w, "## usid-bench results\n\n")
	if b.short {
		fmt.Fprintf(&w, "**Short run (CI smoke test): tiny counts; the numbers and verdicts mean nothing.**\n\n")
	}
	fmt.Fprintf(&w, "- date: %s (took %s)\n", r.started.Format("2006-01-02 15:04 MST"), r.took.Round(time.Second))
	fmt.Fprintf(&w, "- machine: %s; load average (1, 5, 15 min) %s at the start, %s at the end\n", machine(), r.load[0], r.load[1])
	usid := "usid's packages wired as cmd/usid wires them, in a child process of usid-bench"
	if b.usidBin != "" {
		usid = "the binary " + b.usidBin
	}
	fmt.Fprintf(&w, "- usid: %s, on 127.0.0.1\n", usid)
	fmt.Fprintf(&w, "- command: `%s`\n\n", r.command)
	fmt.Fprintf(&w, "| # | measurement | result | target | verdict |\n|---|---|---|---|---|\n")
	for _, x := range r.rows {
		fmt.Fprintf(&w, "| %s | %s | %s | %s | %s |\n", x.section, x.what, x.result, dash(x.target), dash(x.verdict))
	}
	if len(r.notes) > 0 {
		fmt.Fprintf(&w, "\nNotes:\n\n")
		for _, n := range r.notes {
			fmt.Fprintf(&w, "- %s\n", n)
		}
	}
	return w.String()
}

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// pct returns the q-quantile (nearest rank) of samples, sorting them.
func pct(samples []time.Duration, q float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	i := int(math.Ceil(q*float64(len(samples)))) - 1
	return samples[max(0, min(i, len(samples)-1))]
}

func mean(samples []time.Duration) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	var sum time.Duration
	for _, s := range samples {
		sum += s
	}
	return sum / time.Duration(len(samples))
}

// ms formats a duration in milliseconds, with precision that suits its size.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

// signedMS is ms with an explicit sign, for differences.
func signedMS(d time.Duration) string {
	if d >= 0 {
		return "+" + ms(d)
	}
	return ms(d)
}

// rate formats events per second.
func rate(n int, d time.Duration) string {
	return fmt.Sprintf("%s/s", count(float64(n)/d.Seconds()))
}

// count formats a large number with a k or M suffix.
func count(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func mb(bytes int64) string { return fmt.Sprintf("%.1f MB", float64(bytes)/(1<<20)) }

func lookPath(name string) (string, error) { return exec.LookPath(name) }
