package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestThirdPartyCheck runs third-party.sh --check on the real notice, then on
// copies that lack a Go module of the binary or an engine of the image.
func TestThirdPartyCheck(t *testing.T) {
	notice, err := os.ReadFile("../THIRD_PARTY.md")
	if err != nil {
		t.Fatal(err)
	}
	check := func(text string) (bool, string) {
		t.Helper()
		p := filepath.Join(t.TempDir(), "notice.md")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "third-party.sh", "--check")
		cmd.Env = append(os.Environ(), "NOTICE="+p)
		out, err := cmd.CombinedOutput()
		if strings.Contains(string(out), "go-licenses is missing") {
			t.Fatalf("%s", out)
		}
		return err == nil, string(out)
	}
	if ok, out := check(string(notice)); !ok {
		t.Fatalf("the committed THIRD_PARTY.md is stale:\n%s", out)
	}
	cases := []struct{ name, drop, want string }{
		{"a Go module", "| github.com/go-chi/chi/v5 |", "is stale"},
		{"an engine package", "| `gpsshogi` |", "does not name"},
	}
	for _, c := range cases {
		var kept []string
		for _, l := range strings.Split(string(notice), "\n") {
			if !strings.HasPrefix(l, c.drop) {
				kept = append(kept, l)
			}
		}
		if len(kept) == len(strings.Split(string(notice), "\n")) {
			t.Fatalf("THIRD_PARTY.md has no line starting %q", c.drop)
		}
		if ok, out := check(strings.Join(kept, "\n")); ok || !strings.Contains(out, c.want) {
			t.Errorf("without %s: check passed=%v, want a failure saying %q; output:\n%s", c.name, ok, c.want, out)
		}
	}
}
