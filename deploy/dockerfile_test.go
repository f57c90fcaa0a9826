package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// No Docker engine runs on the project's machines, so the image is never
// built here. These tests read the Dockerfile as text and check it against
// what it must agree with: go.mod, usid's default configuration and every
// ConfigMap's, the engines' Debian packages (asked of dpkg on this Debian
// machine), the Deployment and .dockerignore.

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case
	args string
	line int
}

type stage struct {
	from, name string
	instrs     []instruction
}

// parseDockerfile reads instructions and stages, substituting the ARG
// defaults declared before the first FROM (as docker does in FROM lines).
func parseDockerfile(text string) (args map[string]string, stages []*stage, err error) {
	args = map[string]string{}
	var cur strings.Builder
	start := 0
	var instrs []instruction
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(trimmed, "#") {
			continue // a comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if s, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, rest, _ := strings.Cut(cur.String(), " ")
		instrs = append(instrs, instruction{strings.ToUpper(cmd), strings.TrimSpace(rest), start})
		cur.Reset()
	}
	if cur.Len() > 0 {
		return nil, nil, fmt.Errorf("the last instruction ends in a continuation")
	}
	expand := func(s string) string {
		return os.Expand(s, func(k string) string { return args[k] })
	}
	for _, in := range instrs {
		switch {
		case in.cmd == "ARG" && len(stages) == 0:
			k, v, _ := strings.Cut(in.args, "=")
			args[k] = v
		case in.cmd == "FROM":
			f := strings.Fields(expand(in.args))
			st := &stage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
		case len(stages) == 0:
			if in.cmd != "ARG" {
				return nil, nil, fmt.Errorf("line %d: %s before FROM", in.line, in.cmd)
			}
		default:
			st := stages[len(stages)-1]
			st.instrs = append(st.instrs, in)
		}
	}
	return args, stages, nil
}

func (s *stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// execForm decodes a JSON-array (exec form) instruction argument.
func execForm(t *testing.T, in instruction) []string {
	t.Helper()
	var v []string
	if err := json.Unmarshal([]byte(in.args), &v); err != nil {
		t.Errorf("Dockerfile line %d: %s %s: want the exec (JSON array) form: %v", in.line, in.cmd, in.args, err)
	}
	return v
}

// aptPackages lists the packages of every `apt-get install` in a RUN.
func aptPackages(run string) []string {
	var pkgs []string
	for _, cmd := range regexp.MustCompile(`&&|;|\|\|`).Split(run, -1) {
		f := strings.Fields(cmd)
		i := slices.Index(f, "install")
		if i < 0 || !slices.Contains(f[:i], "apt-get") {
			continue
		}
		for _, w := range f[i+1:] {
			if !strings.HasPrefix(w, "-") {
				pkgs = append(pkgs, w)
			}
		}
	}
	return pkgs
}

// debianPackage asks dpkg which package installs file, and whether that
// package is Essential (in every Debian image, debian:*-slim included).
func debianPackage(t *testing.T, file string) (pkg string, essential bool) {
	t.Helper()
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		t.Fatal("dpkg-query not found: these checks ask Debian's package database which package installs each engine; run them on Debian (the project's machines and the image are Debian)")
	}
	out, err := exec.Command("dpkg-query", "-S", file).Output()
	if err != nil {
		t.Errorf("%s: no Debian package installs it on this machine (dpkg-query -S: %v); install the engines with scripts/install-deps.sh", file, err)
		return "", false
	}
	for line := range strings.Lines(string(out)) {
		names, f, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if ok && f == file && !strings.HasPrefix(names, "diversion") {
			pkg, _, _ = strings.Cut(names, ",")
			pkg, _, _ = strings.Cut(pkg, ":") // pkg:arch
			break
		}
	}
	if pkg == "" {
		t.Errorf("%s: cannot read dpkg-query -S's answer %q", file, out)
		return "", false
	}
	ess, err := exec.Command("dpkg-query", "-W", "-f=${Essential}", pkg).Output()
	return pkg, err == nil && strings.TrimSpace(string(ess)) == "yes"
}

// configsShipped are usid's default configuration (the repository's
// usid.yaml, embedded in the binary and copied into the image) and every
// overlay's ConfigMap.
func configsShipped(t *testing.T) map[string]*usidConfig {
	t.Helper()
	out := map[string]*usidConfig{}
	b, err := os.ReadFile("../usid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseConfig(b)
	if err != nil {
		t.Fatalf("../usid.yaml: %v", err)
	}
	out["usid.yaml"] = c
	for _, ov := range overlays {
		c, _ := configOf(t, renderDecoded(t, ov.dir))
		out[ov.dir+" ConfigMap"] = c
	}
	return out
}

func readDockerfile(t *testing.T) (map[string]string, []*stage) {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	args, stages, err := parseDockerfile(string(b))
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d stages, want a build stage and a runtime stage", len(stages))
	}
	return args, stages
}

// TestDockerfileBuildStage: a golang image at least as new as go.mod asks,
// and a static, path-free build of ./cmd/usid.
func TestDockerfileBuildStage(t *testing.T) {
	_, stages := readDockerfile(t)
	i := slices.IndexFunc(stages, func(s *stage) bool { return s.name == "build" })
	if i < 0 {
		t.Fatal("no stage named build")
	}
	build := stages[i]
	m := regexp.MustCompile(`^golang:(\d+)\.(\d+)(\.\d+)?-(\w+)$`).FindStringSubmatch(build.from)
	if m == nil {
		t.Fatalf("build stage FROM %q: want golang:MAJOR.MINOR-DEBIAN", build.from)
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	gm := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`).FindSubmatch(gomod)
	imgMajor, _ := strconv.Atoi(m[1])
	imgMinor, _ := strconv.Atoi(m[2])
	modMajor, _ := strconv.Atoi(string(gm[1]))
	modMinor, _ := strconv.Atoi(string(gm[2]))
	if imgMajor < modMajor || (imgMajor == modMajor && imgMinor < modMinor) {
		t.Errorf("build stage Go %s.%s is older than go.mod's go %s.%s", m[1], m[2], gm[1], gm[2])
	}
	built := false
	for _, run := range build.all("RUN") {
		if !strings.Contains(run.args, "go build") {
			continue
		}
		built = true
		for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/usid", "-o /out/usid"} {
			if !strings.Contains(run.args, want) {
				t.Errorf("Dockerfile line %d: %q lacks %s", run.line, run.args, want)
			}
		}
	}
	if !built {
		t.Error("build stage: no RUN go build")
	}
}

// TestDockerfileAgreesWithConfig: the runtime image installs every engine
// that usid's shipped configurations name, at those paths; runs as the
// non-root user the pod expects; reads its configuration from the fixed path
// the ConfigMap is mounted at; listens where the configuration says.
func TestDockerfileAgreesWithConfig(t *testing.T) {
	_, stages := readDockerfile(t)
	rt := stages[len(stages)-1]
	m := regexp.MustCompile(`^debian:(\w+)-slim$`).FindStringSubmatch(rt.from)
	if m == nil {
		t.Fatalf("runtime stage FROM %q: want debian:RELEASE-slim (the engines are Debian packages)", rt.from)
	}
	if osr, err := os.ReadFile("/etc/os-release"); err == nil {
		if c := regexp.MustCompile(`(?m)^VERSION_CODENAME=(\w+)`).FindSubmatch(osr); c != nil && string(c[1]) != m[1] {
			t.Logf("note: the engine paths are checked against this machine's Debian %s; the image is Debian %s", c[1], m[1])
		}
	}

	var installed []string
	for _, run := range rt.all("RUN") {
		installed = append(installed, aptPackages(run.args)...)
	}
	if len(installed) == 0 {
		t.Fatal("runtime stage installs no packages")
	}
	// Files the runtime stage copies in (an engine built in a stage of its
	// own, see deploy/README.md) are the image's own, not Debian's.
	copied := func(file string) bool {
		for _, in := range rt.all("COPY") {
			f := strings.Fields(in.args)
			if dst := f[len(f)-1]; dst == file || (strings.HasSuffix(dst, "/") && strings.HasPrefix(file, dst)) {
				return true
			}
		}
		return false
	}
	used := map[string]bool{}
	for name, cfg := range configsShipped(t) {
		for _, e := range cfg.Engines {
			run, err := resolveEngine(e)
			if err != nil && !strings.Contains(err.Error(), "no measured memory overhead") {
				t.Errorf("%s: %v", name, err) // usid.yaml's gpsusi needs no memory cap on a workstation
			}
			for _, file := range []string{run.wrapper, run.exe} {
				if file == "" {
					continue
				}
				if !path.IsAbs(file) {
					t.Errorf("%s: engine %s: %s: want an absolute path (the image has no PATH lookups to rely on)", name, e.Name, file)
					continue
				}
				if copied(file) {
					continue
				}
				if fi, err := os.Stat(file); err != nil || fi.Mode()&0o111 == 0 {
					t.Errorf("%s: engine %s: %s is not an executable on this machine", name, e.Name, file)
				}
				pkg, essential := debianPackage(t, file)
				switch {
				case pkg == "":
				case slices.Contains(installed, pkg):
					used[pkg] = true
				case essential:
				default:
					t.Errorf("%s: engine %s runs %s from Debian package %s, which the Dockerfile does not install (it installs %v)", name, e.Name, file, pkg, installed)
				}
			}
		}
	}
	for _, p := range installed {
		if !used[p] {
			t.Errorf("the Dockerfile installs %s, which no shipped configuration runs", p)
		}
	}

	// The binary, the configuration and how it is started.
	copies := rt.all("COPY")
	has := func(want string) bool {
		return slices.ContainsFunc(copies, func(in instruction) bool { return strings.Join(strings.Fields(in.args), " ") == want })
	}
	if !has("--from=build /out/usid /usr/local/bin/usid") {
		t.Error("runtime stage: want COPY --from=build /out/usid /usr/local/bin/usid")
	}
	if !has("usid.yaml " + configFile) {
		t.Errorf("runtime stage: want COPY usid.yaml %s (the default configuration at the fixed path)", configFile)
	}
	last := func(cmd string) []string {
		all := rt.all(cmd)
		if len(all) == 0 {
			t.Fatalf("runtime stage: no %s", cmd)
		}
		return execForm(t, all[len(all)-1])
	}
	if ep := last("ENTRYPOINT"); !slices.Equal(ep, []string{"/usr/local/bin/usid"}) {
		t.Errorf("ENTRYPOINT %q, want [/usr/local/bin/usid]", ep)
	}
	cmd := last("CMD")
	if !slices.Equal(cmd, []string{"--config", configFile}) {
		t.Errorf("CMD %q, want [--config %s]", cmd, configFile)
	}

	// The Deployment runs the image the same way, as the image's user, with
	// the ConfigMap where the image keeps its default.
	for _, ov := range overlays {
		r := renderDecoded(t, ov.dir)
		d := usidDeployment(t, r)
		c := usidContainer(t, d)
		if len(c.Command) != 0 || !slices.Equal(c.Args, cmd) {
			t.Errorf("%s: container command %q args %q, want the image's ENTRYPOINT with its CMD %q", ov.dir, c.Command, c.Args, cmd)
		}
		if u := d.Spec.Template.Spec.SecurityContext.RunAsUser; u == nil || *u != nonRootUID {
			t.Errorf("%s: runAsUser %v, want the image's USER %d", ov.dir, u, nonRootUID)
		}
	}

	users := rt.all("USER")
	if len(users) == 0 {
		t.Fatal("runtime stage: no USER (it would run as root)")
	}
	uid, gid, _ := strings.Cut(users[len(users)-1].args, ":")
	if uid != strconv.Itoa(nonRootUID) || (gid != "" && gid == "0") {
		t.Errorf("USER %q: want the numeric non-root %d (runAsNonRoot can only check a number)", users[len(users)-1].args, nonRootUID)
	}
	if !slices.ContainsFunc(rt.all("RUN"), func(in instruction) bool {
		return strings.Contains(in.args, "useradd") && strings.Contains(in.args, "--uid "+uid)
	}) {
		t.Errorf("runtime stage: no useradd --uid %s (the user should exist in /etc/passwd)", uid)
	}
	if !slices.ContainsFunc(rt.all("ENV"), func(in instruction) bool { return in.args == "HOME=/tmp" }) {
		t.Error("runtime stage: want ENV HOME=/tmp (the only writable place with a read-only root)")
	}

	root := configsShipped(t)["usid.yaml"]
	port := listenPort(t, root)
	if !slices.ContainsFunc(rt.all("EXPOSE"), func(in instruction) bool { return in.args == strconv.Itoa(int(port)) }) {
		t.Errorf("runtime stage: want EXPOSE %d (usid.yaml's listen)", port)
	}
}

// dockerignored reports whether rel (slash-separated, relative to the
// repository) is excluded by the patterns, in .dockerignore's semantics for
// the forms used there: a path excludes itself and everything below it,
// "**/" matches any number of directories, and * and ? match within a name.
func dockerignored(patterns []string, rel string) bool {
	ignored := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(strings.TrimPrefix(p, "!"), "/")
		if matchIgnore(p, rel) {
			ignored = !neg
		}
	}
	return ignored
}

func matchIgnore(pattern, rel string) bool {
	parts := strings.Split(rel, "/")
	pp := strings.Split(pattern, "/")
	var match func(pp, parts []string) bool
	match = func(pp, parts []string) bool {
		if len(pp) == 0 {
			return true // the pattern matched a parent directory
		}
		if pp[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if match(pp[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		ok, _ := filepath.Match(pp[0], parts[0])
		return ok && match(pp[1:], parts[1:])
	}
	return match(pp, parts)
}

func TestDockerignoreKeepsTheBuildInputs(t *testing.T) {
	b, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for line := range strings.Lines(string(b)) {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}
	for _, tc := range []struct {
		rel  string
		want bool
	}{
		{".git/config", true}, {"web/e2e/node_modules/x/y.js", true}, {"deploy/base/usid.yaml", true},
		{"usid.test", true}, {"web/static/app.js", false}, {"cmd/usid/main.go", false},
	} {
		if got := dockerignored(patterns, tc.rel); got != tc.want {
			t.Errorf("dockerignored(%s) = %v, want %v", tc.rel, got, tc.want)
		}
	}

	// What the build reads: go.mod, go.sum, usid.yaml (COPY), and every
	// source and embedded file of the packages ./cmd/usid is built from.
	need := []string{"go.mod", "go.sum", "usid.yaml"}
	out, err := exec.Command(goTool(t), "list", "-deps", "-json=Dir,GoFiles,EmbedFiles,Module", "github.com/usid/usid/cmd/usid").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	abs, _ := filepath.Abs("..")
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			Dir        string
			GoFiles    []string
			EmbedFiles []string
			Module     *struct{ Path string }
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Module == nil || p.Module.Path != "github.com/usid/usid" {
			continue
		}
		rel, err := filepath.Rel(abs, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(p.GoFiles, p.EmbedFiles...) {
			need = append(need, filepath.ToSlash(filepath.Join(rel, f)))
		}
	}
	if len(need) < 10 {
		t.Fatalf("go list found only %v", need)
	}
	for _, f := range need {
		if dockerignored(patterns, f) {
			t.Errorf(".dockerignore excludes %s, which the image build needs", f)
		}
	}
}
