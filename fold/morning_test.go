package fold

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	t.Parallel()
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

// mostlySteps is a history of n records in which all but one record in
// every are steps, call records and the like, which no fold sees (no
// JSON), and that one the events of generatedHistory.
func mostlySteps(n, every int) []Event {
	runs := generatedHistory(n/every + 1)
	out := make([]Event, n)
	for i := range n {
		seq := int64(i + 1)
		r := runs[i/every]
		if i%every != every-1 {
			out[i] = Event{Seq: seq, Time: r.Time}
			continue
		}
		out[i] = Event{Seq: seq, JSON: r.JSON, Time: r.Time}
	}
	return out
}

// historySizes are the histories the properties below are held over:
// 2,500 records, and 12,000 with QUIRE_TEST_LONG.
func historySizes() []int {
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		return []int{2500, 12000}
	}
	return []int{2500}
}

// The views and their standing do not depend on where the pages of the
// history begin or end: folded in pages of 1,000, 7 and 1 records, of a
// history whose records are mostly ones no fold sees, they are the same
// byte for byte, and live having read to the newest record.
func TestPageBoundsDoNotMatter(t *testing.T) {
	t.Parallel()
	prog := tsProgram(t, morningTS, 1, morningViews)
	for _, n := range historySizes() {
		hist := mostlySteps(n, 10)
		var want, wantStanding []byte
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
			standing, _ := json.Marshal(s)
			if s.State != StateLive || *s.Checkpoint != strconv.Itoa(n) || s.LagMs != 0 {
				t.Fatalf("%d records in pages of %d: standing %s", n, size, standing)
			}
			if want == nil {
				want, wantStanding = views, standing
				continue
			}
			if !bytes.Equal(views, want) || !bytes.Equal(standing, wantStanding) {
				t.Fatalf("%d records in pages of %d give other views or standing:\n%s\n%s\n%s\n%s", n, size, views, standing, want, wantStanding)
			}
		}
	}
}

// After every fold, not once a page: a view of the wrong shape stalls the
// views at its event even when a later fold of the same page puts it
// right, whatever the page's size; the standing is the same each time.
func TestShapeStallALaterFoldWouldHide(t *testing.T) {
	t.Parallel()
	hist := mostlySteps(60, 5)
	bad := hist[24].Seq // the fifth event a fold sees
	prog := jsProgram(`export function fold(view, event) {
  const n = (view.count?.values[0]?.value ?? 0) + 1;
  // The fifth event leaves a name empty; the sixth puts it right.
  return { count: { values: [{ name: n === 5 ? '' : 'Runs', value: n }] } };
}`, map[string]string{"count": "categories"})
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
		standing, _ := json.Marshal(s)
		if s.State != StateStalled || s.Stalled.Kind != KindShape || s.Stalled.Event.ID != fmt.Sprintf("ev-%d", (bad-1)/5+1) ||
			*s.Checkpoint != strconv.FormatInt(bad-1, 10) || string(views) != `{"count":{"values":[{"name":"Runs","value":4}]}}` ||
			!strings.Contains(s.Stalled.Error, "/count/values/0/name") {
			t.Fatalf("pages of %d: %s %s", size, views, standing)
		}
		if want == nil {
			want = standing
		} else if !bytes.Equal(standing, want) {
			t.Fatalf("pages of %d: standing %s, not %s", size, standing, want)
		}
	}
}
