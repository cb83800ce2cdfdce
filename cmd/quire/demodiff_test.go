package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The demo vault itself (testdata/demo.sh, as make demo builds it), diffed
// between two of its commits: quire page diff names fulfill-order's views
// that changed; and quire check --views verifies every page of it. Behind QUIRE_TEST_LONG (make test-long): the demo records
// some 200 commands, each a process.
func TestDemoVaultPageDiffNamesTheChangedViews(t *testing.T) {
	if os.Getenv("QUIRE_TEST_LONG") == "" {
		t.Skip("QUIRE_TEST_LONG=1 builds the demo vault")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// demo.sh runs bin/quire beside its testdata/ and makes demo-vault
	// there: a folder of its own, with this test binary standing in for
	// quire.
	dir := t.TempDir()
	for _, name := range []string{"demo.sh", "vault/morning-social-content.yaml", "vault/close-the-month.yaml", "vault/fulfill-order.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, "testdata", name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	stand := "#!/bin/sh\nQUIRE_TEST_AS_QUIRE=1 exec '" + os.Args[0] + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "quire"), []byte(stand), 0o755); err != nil {
		t.Fatal(err)
	}
	demo := exec.Command("bash", filepath.Join(dir, "testdata", "demo.sh"))
	demo.Env = append(os.Environ(), "QUIRE_DEMO_NO_SERVE=1")
	if tsc, err := findTSCForTest(root); err == nil {
		demo.Env = append(demo.Env, "QUIRE_TSC="+tsc)
	}
	if out, err := demo.CombinedOutput(); err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	v := "--vault=" + filepath.Join(dir, "demo-vault")
	code, out, errs := quire(t, "", v, "page", "diff", "--playbook", "operations", "--name", "fulfill-order", "HEAD~30", "HEAD")
	if code != 0 {
		t.Fatalf("page diff: %d %s %s", code, out, errs)
	}
	for _, view := range []string{"figures", "revenue", "channels"} {
		if !strings.Contains(out, "\nview "+view+":\n") {
			t.Errorf("page diff does not name the view %s:\n%s", view, out)
		}
	}
	code, out, errs = quire(t, "", v, "check", "--views")
	if code != 0 {
		t.Fatalf("check --views: %d %s %s", code, out, errs)
	}
	pages := 0
	for _, ln := range strings.Split(out, "\n") {
		if strings.HasPrefix(ln, "views of ") {
			pages++
			if !strings.HasSuffix(ln, ": verified") {
				t.Errorf("check --views: %s", ln)
			}
		}
	}
	// morning-social-content, close-the-month and fulfill-order.
	if pages < 3 {
		t.Errorf("check --views verified %d pages of the demo vault:\n%s", pages, out)
	}
}
