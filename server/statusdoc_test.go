package server

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestStatusTableDocumented: every code of statusOf is in ARCHITECTURE.md's
// table "Error codes and statuses" in its status's row, and the table names
// no status that statusOf does not give, so a client reading the document
// learns every status a code can have.
func TestStatusTableDocumented(t *testing.T) {
	b, err := os.ReadFile("../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "### Error codes and statuses")
	if start < 0 {
		t.Fatal(`ARCHITECTURE.md has no "### Error codes and statuses"`)
	}
	doc = doc[start:]
	if end := strings.Index(doc[4:], "\n### "); end > 0 {
		doc = doc[:end+4]
	}
	rows := map[int]string{}
	row := regexp.MustCompile("(?m)^\\| ([0-9]{3}) \\| (.*) \\|$")
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		n, _ := strconv.Atoi(m[1])
		rows[n] = m[2]
	}
	given := map[int]bool{}
	for code, status := range statusOf {
		given[status] = true
		if !strings.Contains(rows[status], "`"+code+"`") {
			t.Errorf("code %q (status %d) is not in ARCHITECTURE.md's row %d: %q", code, status, status, rows[status])
		}
	}
	for status := range rows {
		if !given[status] {
			t.Errorf("ARCHITECTURE.md lists status %d, which no code has", status)
		}
	}
}
