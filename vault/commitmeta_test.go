package vault

import (
	"testing"
	"time"
)

func TestParseCommitMeta(t *testing.T) {
	raw := "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n" +
		"parent 1111111111111111111111111111111111111111\n" +
		"parent 2222222222222222222222222222222222222222\n" +
		"author Ana Lima <ana@example.com> 1764607800 -0230\n" +
		"committer quire <quire@quire.invalid> 1764607801 +0000\n" +
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQ\n -----END PGP SIGNATURE-----\n" +
		"\n" +
		"close: run created\n\nRun-Id: x\n"
	m, err := parseCommitMeta(ZeroHash, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Parents) != 2 || m.Parents[1].String() != "2222222222222222222222222222222222222222" {
		t.Fatalf("parents %v", m.Parents)
	}
	if m.Author != "Ana Lima" || m.Message != "close: run created\n\nRun-Id: x\n" {
		t.Fatalf("%+v", m)
	}
	if _, off := m.When.Zone(); off != -(2*3600+30*60) || !m.When.Equal(time.Unix(1764607800, 0)) {
		t.Fatalf("when %v", m.When)
	}
	for _, bad := range []string{"tree x\n", "tree x\n\nno author\n", "author Ana <a> soon +0000\n\n", "author Ana <a> 1 0000\n\n", "parent nope\nauthor A <a> 1 +0000\n\n"} {
		if _, err := parseCommitMeta(ZeroHash, []byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A commit quire made reads back as it was made.
func TestReadCommit(t *testing.T) {
	v, err := Init(t.TempDir(), "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	head, err := v.HeadCommit()
	if err != nil {
		t.Fatal(err)
	}
	m, err := v.ReadCommit(head)
	if err != nil {
		t.Fatal(err)
	}
	h := v.History()
	defer h.Close()
	m2, err := ReadCommitOf(h, head)
	if err != nil {
		t.Fatal(err)
	}
	if m.Author == "" || m.Message == "" || len(m.Parents) != 0 || m.Author != m2.Author || m.Message != m2.Message || !m.When.Equal(m2.When) {
		t.Fatalf("%+v / %+v", m, m2)
	}
}
