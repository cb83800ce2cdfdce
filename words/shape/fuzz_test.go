package shape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds start FuzzCheck; TestWriteSeeds writes them, with the cases of
// the other tests, to testdata/fuzz/FuzzCheck.
var fuzzSeeds = []struct{ name, doc string }{
	{"series", `{"unit":"sign-ups","period":"month","lines":[{"name":"Sign-ups","points":[{"at":"2026-08","value":40},{"at":"2026-9","value":52}]}],"marks":[{"label":"Monthly average","value":46}]}`},
	{"series", `{"period":"week","origin":"2027-W53","lines":[{"name":"a","points":[{"at":"2026-W53","value":1,"low":2,"high":0},{"at":"2026-W52","value":1e400}]},{"name":"a","points":[]}]}`},
	{"series", `{"lines":[{"name":"a/b~c","points":[{"at":"2026-01-01T10:00:00+02:00","value":1},{"at":"2026-01-01T09:00:00Z","value":-0.5,"x~/":{}}]}],"marks":[1,{"label":""}]}`},
	{"series", `{"period":"day","lines":[{"name":"a","points":[{"at":"2024-02-29","value":1},{"at":"2026-02-29","value":2}]}]}`},
	{"series", `{"period":"quarter","lines":[{"name":"a","points":[{"at":"2026-Q4","value":1},{"at":"2026-Q5","value":2}]}]}`},
	{"series", `{"period":"year","lines":[{"name":"é","points":[{"at":"2026","value":1},{"at":"2026","value":2}]}]}`},
	{"categories", `{"unit":"hours","values":[{"name":"Billing","value":32,"low":24,"high":40},{"name":"Billing","value":1,"low":3}]}`},
	{"categories", `{"values":[]}`},
	{"table", `{"columns":[{"name":"Campaign"},{"name":"Spend","unit":"cents"}],"rows":[["Spring",1250000],[null,true,false],[{}]]}`},
	{"table", `{"columns":[],"rows":{}}`},
	{"text", `{"text":"# Heading\n\nSome *Markdown*.\u00e9\ud83d\ude00"}`},
	{"text", `{"text":1,"other":[]}`},
	{"text", `[1, 2`},
	{"text", `{"text": "a"} {}`},
	{"text", "\xff"},
	{"chart", `{}`},
	{"series", `null`},
	{"series", `{"lines":[{"name":"a","points":[{"at":"2026-10-15T09:30:00.5z","value":0.1}]}],"lines":[]}`},
}

func FuzzCheck(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s.doc), s.name)
	}
	f.Fuzz(func(t *testing.T, doc []byte, name string) {
		issues := Check(name, doc)
		for i, is := range issues {
			if is.Message == "" {
				t.Fatalf("issue %d has no message: %v", i, is)
			}
			if i > 0 {
				a, b := issues[i-1], is
				if a.Path > b.Path || (a.Path == b.Path && a.Message >= b.Message) {
					t.Fatalf("issues not sorted, or repeated: %v before %v", a, b)
				}
			}
		}
		v, ours := decode(doc)
		v = std(v)
		if !utf8.Valid(doc) {
			ours = msgNotUTF8
		} else {
			theirs, err := stdDecode(doc)
			if (ours == "") != (err == nil) {
				t.Fatalf("decode says %q, encoding/json %v", ours, err)
			}
			if err == nil && !reflect.DeepEqual(v, theirs) {
				t.Fatalf("decode gives %#v, encoding/json %#v", v, theirs)
			}
		}
		if !Known(name) || ours != "" {
			if len(issues) != 1 || issues[0].Path != "" {
				t.Fatalf("want one issue at \"\", got %v", issues)
			}
			return
		}
		for _, is := range issues {
			if !resolves(v, is.Path) {
				t.Fatalf("%q is no place in the document: %v", is.Path, is)
			}
		}
		ch := compiled()[name]
		fast, slow := ch.plan.valid(v), ch.schema.Validate(v) == nil
		if fast != slow {
			t.Fatalf("the plan says valid=%v, the validator %v", fast, slow)
		}
	})
}

// stdDecode reads doc as Check reads it, with encoding/json.
func stdDecode(doc []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one value")
	}
	return v, nil
}

// resolves says whether the JSON pointer names a place in v.
func resolves(v any, ptr string) bool {
	if ptr == "" {
		return true
	}
	if ptr[0] != '/' {
		return false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		if strings.Contains(strings.NewReplacer("~0", "", "~1", "").Replace(tok), "~") {
			return false
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || strconv.Itoa(i) != tok {
				return false
			}
			v = x[i]
		default:
			return false
		}
	}
	return true
}

func TestResolves(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"a/b": [0, {"~": 1}], "": 2}`), &v); err != nil {
		t.Fatal(err)
	}
	for ptr, want := range map[string]bool{
		"": true, "/a~1b": true, "/a~1b/1/~0": true, "/": true, "/a~1b/01": false,
		"/a~1b/2": false, "/a/b": false, "/a~1b/1/~": false, "/a~2b": false, "x": false,
	} {
		if got := resolves(v, ptr); got != want {
			t.Errorf("resolves(%q) = %v", ptr, got)
		}
	}
}

// TestDecodeNamesTwice: a member named twice keeps its last value, in a
// small object and a large one.
func TestDecodeNamesTwice(t *testing.T) {
	var large strings.Builder
	large.WriteString(`{"a": 1`)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&large, `, "k%d": [%d, {"a": %d, "a": {}}], "a": %d`, i%7, i, i, i)
	}
	large.WriteString(`}`)
	for _, doc := range []string{`{"a": 1, "b": 2, "a": 3}`, `{"a": 1, "a": 1, "a": {"a": []}}`, large.String()} {
		v, msg := decode([]byte(doc))
		want, err := stdDecode([]byte(doc))
		if msg != "" || err != nil {
			t.Fatalf("%s: %q, %v", doc, msg, err)
		}
		if got := std(v); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %#v, want %#v", doc, got, want)
		}
	}
}

// TestDecodeDepth: as deep as encoding/json reads, and no deeper.
func TestDecodeDepth(t *testing.T) {
	for _, n := range []int{maxDepth, maxDepth + 1} {
		doc := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		_, ours := decode(doc)
		_, err := stdDecode(doc)
		if (ours == "") != (err == nil) {
			t.Errorf("depth %d: decode %q, encoding/json %v", n, ours, err)
		}
	}
}

// TestWriteSeeds writes the seeds of FuzzCheck to testdata/fuzz/FuzzCheck
// when QUIRE_WRITE_SEEDS is set.
func TestWriteSeeds(t *testing.T) {
	if os.Getenv("QUIRE_WRITE_SEEDS") == "" {
		t.Skip("set QUIRE_WRITE_SEEDS=1 to write the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzCheck")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range fuzzSeeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nstring(%q)\n", s.doc, s.name)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
