package render

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files of rendered pages")

var (
	readTime = time.Date(2026, 11, 1, 9, 45, 0, 0, time.UTC)
	workflow = func(name string) Subject { return Subject{Type: "workflow", Name: name, Version: 4} }
	done     = Run{Status: "succeeded", Started: "2026-11-01T09:00:00.000Z", Ended: "2026-11-01T09:30:12.345Z", Version: 4}
	going    = Run{Status: "started", Started: "2026-11-01T09:00:00.000Z", Version: 4}
)

func page(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pages", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "pages", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := page(t, name); got != want {
		t.Errorf("%s:\n got: %q\nwant: %q", name, got, want)
	}
}

// The rendered examples of page-format.md, character for character.
func TestGoldenPages(t *testing.T) {
	cases := []struct {
		name, golden string
		render       func() string
	}{
		{"morning result", "morning/result.md", func() string {
			return Result(page(t, "morning/result.liquid"), done, workflow("morning-social-content"), []byte(page(t, "morning/output.json")), readTime, Options{})
		}},
		{"morning waiting", "morning/waiting.md", func() string {
			return Result(page(t, "morning/result.liquid"), going, workflow("morning-social-content"), nil, readTime, Options{})
		}},
		{"morning runs", "morning/runs.md", func() string {
			return Runs(page(t, "morning/runs.liquid"), []byte(page(t, "morning/views.json")), workflow("morning-social-content"), readTime, Options{})
		}},
		{"close result", "close/result.md", func() string {
			return Result(page(t, "close/result.liquid"), done, workflow("close-the-month"), []byte(page(t, "close/output.json")), readTime, Options{})
		}},
		{"close runs", "close/runs.md", func() string {
			return Runs(page(t, "close/runs.liquid"), []byte(page(t, "close/views.json")), workflow("close-the-month"), readTime, Options{})
		}},
		{"fulfill result", "fulfill/result.md", func() string {
			return Result(page(t, "fulfill/result.liquid"), done, workflow("fulfill-order"), []byte(page(t, "fulfill/output.json")), readTime, Options{})
		}},
		{"fulfill runs", "fulfill/runs.md", func() string {
			return Runs(page(t, "fulfill/runs.liquid"), []byte(page(t, "fulfill/views.json")), workflow("fulfill-order"), readTime, Options{})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { golden(t, c.golden, c.render()) })
	}
}

func TestHeadlines(t *testing.T) {
	got := Headline(Result(page(t, "morning/result.liquid"), done, workflow("morning-social-content"), []byte(page(t, "morning/output.json")), readTime, Options{}))
	if got != "3 posts drafted for 2026-11-01." {
		t.Errorf("headline %q", got)
	}
	if got := Headline(Result(page(t, "close/result.liquid"), done, workflow("close-the-month"), []byte(page(t, "close/output.json")), readTime, Options{})); got != "2026-10 closed with $182,450 of revenue." {
		t.Errorf("headline %q", got)
	}
}
