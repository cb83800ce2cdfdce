package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	CloseShared()
	os.Exit(code)
}

// A page that writes an error, throws, opens an alert and loads an image:
// the tab records each, and the page goes on (the alert is dismissed).
func TestPageRecords(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>t</title><p class="x">one</p><p class="x">two</p>
<img src="/pixel.png"><script src="/page.js"></script>`)
	})
	mux.HandleFunc("/page.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `console.error("drawn badly", 3); alert("hello");
document.body.append(Object.assign(document.createElement("div"), {id: "after"}));
setTimeout(() => { throw new Error("late") }, 0);`)
	})
	mux.HandleFunc("/pixel.png", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	p := NewPage(t)
	if err := p.Open(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait("#after", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n, err := p.Count("p.x"); err != nil || n != 2 {
		t.Fatalf("Count(p.x) = %d, %v; want 2", n, err)
	}
	if s, err := p.Text("p.x"); err != nil || s != "one" {
		t.Fatalf("Text(p.x) = %q, %v; want one", s, err)
	}
	// The exception is thrown after the load; wait for it to be recorded.
	deadline := time.Now().Add(5 * time.Second)
	for !slices.ContainsFunc(p.Errors(), func(e string) bool { return strings.Contains(e, "late") }) {
		if time.Now().After(deadline) {
			t.Fatalf("errors %q: no exception late", p.Errors())
		}
		time.Sleep(20 * time.Millisecond)
	}
	errs := strings.Join(p.Errors(), "\n")
	for _, want := range []string{"console.error: drawn badly 3", "Error: late", "404"} {
		if !strings.Contains(errs, want) {
			t.Errorf("errors %q: no %q", errs, want)
		}
	}
	if d := p.Dialogs(); len(d) != 1 || d[0] != "alert: hello" {
		t.Errorf("dialogs %q, want [alert: hello]", d)
	}
	reqs := p.Requests()
	for _, want := range []string{"/", "/page.js", "/pixel.png"} {
		if !slices.Contains(reqs, srv.URL+want) {
			t.Errorf("requests %q: no %s", reqs, want)
		}
	}
	shot := filepath.Join(t.TempDir(), "page.png")
	if err := p.Screenshot(shot); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(shot); err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Fatalf("screenshot: %v, %d bytes, not a PNG", err, len(b))
	}
	p.Reset()
	if len(p.Errors())+len(p.Dialogs())+len(p.Requests()) != 0 {
		t.Error("Reset left records")
	}
}

// Without a Chromium, Start says how to get one.
func TestNoChromium(t *testing.T) {
	t.Setenv("QUIRE_CHROMIUM", filepath.Join(t.TempDir(), "none"))
	_, err := Start()
	if err == nil || !strings.Contains(err.Error(), "QUIRE_CHROMIUM") {
		t.Fatalf("Start with no Chromium: %v", err)
	}
}
