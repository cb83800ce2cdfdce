package comments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quire/words/refusal"
)

// The files of testdata are what make_comment and resolve_comment wrote:
// each decodes, and encodes back byte for byte.
func TestDecodeEncodeQuireFiles(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Front
		text string
	}{
		{"resolved.md", Front{ID: "01a2329f-69e5-795d-b5eb-6369c74e783c", Address: "finance/runs/019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e/result/2",
			Author: "grace", Created: "2026-12-01T17:20:37.862Z", Resolved: true, How: "acted", ResolvedAt: "2026-12-01T17:20:38.172Z", ResolvedBy: "agent-7"},
			"This total looks off.\n\nCheck March."},
		{"open.md", Front{ID: "01a2329f-6b7c-7d9f-be69-56be838ecf76", Address: "finance/definitions/workflow/close-the-week/4/steps/do/1/review",
			Author: "agent-7", Created: "2026-12-01T17:20:38.269Z"},
			"The prompt should ask for the March ledger.\n---\nIt reads February.\n"},
		{"org.md", Front{ID: "01a2329f-6bae-7cce-b677-af18c9292d99", Address: "org/connections/019a3f10-2b4c-7d5e-8f60-718293a4b5c6",
			Author: "grace", Created: "2026-12-01T17:20:38.318Z", Resolved: true, How: "answered", ResolvedAt: "2026-12-01T17:20:38.716Z", ResolvedBy: "quire"},
			`The CRM stopped answering: "401" since 09:00 — reconnect?`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			f, text, err := Decode(tc.file, data)
			if err != nil {
				t.Fatal(err)
			}
			if f != tc.want || text != tc.text {
				t.Fatalf("decoded %+v %q\nwant    %+v %q", f, text, tc.want, tc.text)
			}
			if back := Encode(f, text); string(back) != string(data) {
				t.Fatalf("encoded:\n%s\nwant:\n%s", back, data)
			}
		})
	}
}

func TestDecodeRefusals(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"no front matter", "Just text.", "c.md: a comment begins with front matter between --- lines"},
		{"blank line first", "\n---\nid: x\n---\n", "c.md: a comment begins with front matter between --- lines"},
		{"not closed", "---\nid: x\n", "c.md: line 1: The front matter is not closed by a line of ---."},
		{"a key twice", "---\nid: x\nauthor: a\nauthor: b\n---\n", `c.md: line 4: The key "author" is written twice in one mapping (first at line 3).`},
		{"a wrong type", "---\nid: x\nresolved: maybe\n---\n", "c.md: line 3: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Decode("c.md", []byte(tc.doc))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Decode: %v, want %q", err, tc.want)
			}
		})
	}
	// A field the front matter does not know is passed over.
	f, text, err := Decode("c.md", []byte("---\nid: x\nmood: cheerful\n---\nhi"))
	if err != nil || f.ID != "x" || text != "hi" {
		t.Fatalf("an unknown field: %+v %q %v", f, text, err)
	}
}

func TestPathAndSelf(t *testing.T) {
	const id = "01a2329f-69e5-795d-b5eb-6369c74e783c"
	for _, tc := range []struct{ playbook, path, self string }{
		{"finance", "playbooks/finance/comments/" + id + ".md", "finance/comments/" + id},
		{"", "org/comments/" + id + ".md", "org/comments/" + id},
		{"org", "playbooks/org/comments/" + id + ".md", "org/comments/" + id},
	} {
		if p, s := Path(tc.playbook, id), Self(tc.playbook, id); p != tc.path || s != tc.self {
			t.Errorf("playbook %q: %s %s, want %s %s", tc.playbook, p, s, tc.path, tc.self)
		}
	}
	c := Front{ID: id, Address: "org", Author: "grace", Created: "2026-12-01T17:20:37.862Z"}.Comment("", Path("", id), "hi")
	if c.Self != "org/comments/"+id || c.Path != "org/comments/"+id+".md" || c.Playbook != "" || c.Text != "hi" || c.Committed != nil {
		t.Errorf("the comment %+v", c)
	}
}

func refused(t *testing.T, err error, code refusal.Code, path, message string) {
	t.Helper()
	r, ok := refusal.As(err)
	if !ok || r.Code != code || len(r.Issues) != 1 || r.Issues[0].Path != path || r.Message != message {
		t.Fatalf("got %v (%+v), want %s at %s: %s", err, r, code, path, message)
	}
}

func TestCheckText(t *testing.T) {
	for _, ok := range []string{"x", " Check March. ", strings.Repeat("é", MaxText), "line\n\nline"} {
		if err := CheckText(ok); err != nil {
			t.Errorf("CheckText(%.20q): %v", ok, err)
		}
	}
	refused(t, CheckText(""), refusal.InvalidInput, "/text", "/text: a comment's text is empty")
	refused(t, CheckText(" \n\t"), refusal.InvalidInput, "/text", "/text: a comment's text is empty")
	refused(t, CheckText("a\xffb"), refusal.InvalidInput, "/text", "/text: a comment's text is UTF-8")
	refused(t, CheckText(strings.Repeat("é", MaxText+1)), refusal.InvalidInput, "/text", "/text: a comment's text holds at most 10,000 characters, not 10001")
}

func TestResolve(t *testing.T) {
	for _, how := range Hows {
		if err := CheckHow(how); err != nil {
			t.Errorf("CheckHow(%s): %v", how, err)
		}
	}
	refused(t, CheckHow("done"), refusal.InvalidInput, "/how", `/how: "done" is not a way to resolve a comment; the ways are acted, declined, answered, obsolete`)
	refused(t, CheckHow(""), refusal.InvalidInput, "/how", `/how: "" is not a way to resolve a comment; the ways are acted, declined, answered, obsolete`)

	f := Front{ID: "c1", Address: "org", Author: "grace", Created: "2026-12-01T17:20:37.862Z"}
	if err := f.CheckOpen("c1"); err != nil {
		t.Fatal(err)
	}
	f.Resolve("declined", "2026-12-01T18:00:00.000Z", "ada")
	if !f.Resolved || f.How != "declined" || f.ResolvedAt != "2026-12-01T18:00:00.000Z" || f.ResolvedBy != "ada" || f.Author != "grace" {
		t.Fatalf("resolved %+v", f)
	}
	refused(t, f.CheckOpen("C1"), refusal.Conflict, "/id", "the comment C1 was resolved (declined) by ada at 2026-12-01T18:00:00.000Z")
	back, _, err := Decode("c.md", Encode(f, "x"))
	if err != nil || back != f {
		t.Fatalf("the resolved front matter reads back as %+v, %v", back, err)
	}
}
