// Package docs holds usid's documentation (README.md's long parts) and the
// test that its links resolve.
package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestLinksResolve: every relative link in README.md, the top-level
// documents and docs/*.md names a file of the repository, and its #anchor,
// when it has one, a heading of that file (as GitHub makes heading anchors).
func TestLinksResolve(t *testing.T) {
	files := []string{"../README.md", "../ARCHITECTURE.md", "../SECURITY.md", "../THIRD_PARTY.md", "../deploy/README.md", "../web/README.md"}
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 5 {
		t.Fatalf("docs/ has %d markdown files: %v", len(docs), docs)
	}
	files = append(files, docs...)
	checked := 0
	for _, f := range files {
		n, errs := checkLinks(f)
		checked += n
		for _, e := range errs {
			t.Error(e)
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found: is the link pattern still right?", checked)
	}
}

// TestLinksCheckerFails: the checker finds a missing file, a missing anchor
// and a missing anchor within the same file, and passes good links, in code
// or not.
func TestLinksCheckerFails(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("b.md", "# B\n\n## Sharing engines fairly\n\n### `play.grace` and 千日手\n\n## Sharing engines fairly\n")
	good := write("good.md", "# Good\n\n## Here\n\n[b](b.md), [s](b.md#sharing-engines-fairly), [s1](b.md#sharing-engines-fairly-1),\n"+
		"[g](b.md#playgrace-and-千日手), [h](#here), [w](https://example.com/x.md), ![i](b.md)\n\n"+
		"```sh\n[not a link](missing.md)\n```\n\n`[nor this](missing.md)`\n")
	if n, errs := checkLinks(good); n != 6 || len(errs) != 0 {
		t.Errorf("good.md: %d links checked, errors %v; want 6, none", n, errs)
	}
	bad := write("bad.md", "# Bad\n\n[m](missing.md) [a](b.md#no-such) [h](#nowhere) [d](b.md#sharing-engines-fairly-2)\n")
	if n, errs := checkLinks(bad); n != 4 || len(errs) != 4 {
		t.Errorf("bad.md: %d links checked, errors %v; want 4 and 4", n, errs)
	}
}

var (
	linkRE       = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	inlineCodeRE = regexp.MustCompile("`[^`]*`")
)

// checkLinks reads the markdown file path and returns how many relative
// links it checked and what is wrong with them.
func checkLinks(path string) (int, []string) {
	text, err := os.ReadFile(path)
	if err != nil {
		return 0, []string{err.Error()}
	}
	var errs []string
	n := 0
	for i, line := range proseLines(text) {
		for _, m := range linkRE.FindAllStringSubmatch(inlineCodeRE.ReplaceAllString(line, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			file, anchor, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(filepath.Dir(path), file)
				if _, err := os.Stat(dest); err != nil {
					errs = append(errs, fmt.Sprintf("%s:%d: %s: no such file", path, i+1, target))
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			d, err := os.ReadFile(dest)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if !anchors(d)[anchor] {
				errs = append(errs, fmt.Sprintf("%s:%d: %s: %s has no heading with that anchor", path, i+1, target, dest))
			}
		}
	}
	return n, errs
}

// proseLines is the file's lines with those of fenced code blocks blanked
// (line numbers kept).
func proseLines(text []byte) []string {
	var lines []string
	fence := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			lines = append(lines, "")
			continue
		}
		if fence {
			l = ""
		}
		lines = append(lines, l)
	}
	return lines
}

// anchors is the set of anchors GitHub gives the file's headings: the
// heading's text in lower case, without punctuation, spaces as hyphens,
// a repeated one numbered -1, -2, ...
func anchors(text []byte) map[string]bool {
	set := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(text) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if k := seen[a]; k > 0 {
			set[fmt.Sprintf("%s-%d", a, k)] = true
		} else {
			set[a] = true
		}
		seen[a]++
	}
	return set
}
