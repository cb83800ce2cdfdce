package fold

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/fold/module"
)

// morningTS is data.module of the page of morning-social-content, as
// spec/page-format.md prints it (kept once, in fold/module's testdata).
var morningTS = func() string {
	b, err := os.ReadFile(filepath.Join("module", "testdata", "morning-social-content.ts"))
	if err != nil {
		panic(err)
	}
	return string(b)
}()

var morningViews = map[string]string{"posts_per_day": "series", "by_channel": "categories"}

// tsProgram transpiles a test module with fold/module, keeping its lines.
func tsProgram(t testing.TB, ts string, firstLine int, views map[string]string) *Program {
	t.Helper()
	js, lines, err := module.TranspileMapped(ts)
	if err != nil {
		t.Fatalf("transpile: %v", err)
	}
	return NewProgram(js, lines, firstLine, views)
}

// morningOutput is a run's output with one post for each channel given.
func morningOutput(date string, channels ...string) string {
	posts := make([]string, len(channels))
	for i, c := range channels {
		posts[i] = fmt.Sprintf(`{"channel":%q,"title":"Post %d of %s","url":"https://example.com/drafts/%d"}`, c, i+1, date, 1000+i)
	}
	return fmt.Sprintf(`{"output":{"date":%q,"posts":[%s]}}`, date, strings.Join(posts, ","))
}

// specRuns are the three runs of the spec: 30 October, 31 October and
// 1 November, with 3, 2 and 3 posts.
func specRuns() []Event {
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 7, 30, 0, 0, time.UTC) }
	return []Event{
		event(1, day(10, 30), morningOutput("2026-10-30", "LinkedIn", "X", "Instagram")),
		event(2, day(10, 31), morningOutput("2026-10-31", "LinkedIn", "X")),
		event(3, day(11, 1), morningOutput("2026-11-01", "LinkedIn", "X", "Instagram")),
	}
}

const specViews = `{"posts_per_day":{"unit":"posts","period":"day","lines":[{"name":"Posts","points":[{"at":"2026-10-30","value":3},{"at":"2026-10-31","value":2},{"at":"2026-11-01","value":3}]}]},"by_channel":{"unit":"posts","values":[{"name":"LinkedIn","value":3},{"name":"X","value":3},{"name":"Instagram","value":2}]}}`

func TestMorningSpecViews(t *testing.T) {
	p := newTestPool(t, Limits{})
	prog := tsProgram(t, morningTS, 1, morningViews)
	r := foldAll(t, p, prog, specRuns())
	if r.Stall != nil {
		t.Fatalf("stalled: %+v", r.Stall)
	}
	if string(r.Views) != specViews {
		t.Fatalf("views\n got %s\nwant %s", r.Views, specViews)
	}
}

// generatedHistory is n records: runs of the workflow with 0 to 4 posts
// (0 adds nothing), one run in 7 of another workflow (filtered out), a
// day apart every 3 runs.
func generatedHistory(n int) []Event {
	channels := []string{"LinkedIn", "X", "Instagram", "Mastodon", "Bluesky", "Threads"}
	start := time.Date(2026, 1, 1, 6, 0, 0, 0, time.UTC)
	out := make([]Event, n)
	for i := range n {
		seq := int64(i + 1)
		at := start.Add(time.Duration(i/3) * 24 * time.Hour).Add(time.Duration(i%3) * time.Minute)
		if i%7 == 6 {
			out[i] = Event{Seq: seq, Time: at, JSON: []byte(fmt.Sprintf(`{"specversion":"1.0","id":"ev-%d","type":"run_succeeded","source":"playbooks/social","subject":"workflow/other","time":%q,"data":{"output":{}}}`, seq, at.Format(time.RFC3339Nano)))}
			continue
		}
		var cs []string
		for j := range i % 5 {
			cs = append(cs, channels[(i+j)%len(channels)])
		}
		out[i] = event(seq, at, morningOutput(at.Format("2006-01-02"), cs...))
	}
	return out
}

func TestPageBoundsDoNotMatter(t *testing.T) {
	hist := generatedHistory(1200)
	prog := tsProgram(t, morningTS, 1, morningViews)
	var want []byte
	for _, size := range []int{1000, 7, 1} {
		h := &memHistory{}
		h.add(hist...)
		k := newTestKeeper(t, h, KeeperOptions{PageSize: size})
		registerMorning(t, k, prog, 1, "h1")
		s, err := k.CatchUp(context.Background(), "morning")
		if err != nil {
			t.Fatal(err)
		}
		views, _, _ := k.Views("morning")
		if s.State != StateLive || s.Folded != int64(1200-1200/7) {
			t.Fatalf("size %d: standing %+v", size, s)
		}
		if want == nil {
			want = views
			continue
		}
		if !bytes.Equal(views, want) {
			t.Fatalf("page size %d gives other views:\n%s\n%s", size, views, want)
		}
	}
}
