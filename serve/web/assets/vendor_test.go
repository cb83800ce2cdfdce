package assets

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"strings"
	"testing"
)

// The vendored libraries embedded in the binary are the files vendor.sh
// fetched from npm at their pinned versions: each matches its line of
// static/vendor/SHA256SUMS, and no file stands there without one.
func TestVendoredFilesMatchTheirSums(t *testing.T) {
	sums, err := fs.ReadFile(FS(), "vendor/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{"SHA256SUMS": true}
	sc := bufio.NewScanner(strings.NewReader(string(sums)))
	for sc.Scan() {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: a line that is not a sum and a name: %q", sc.Text())
		}
		listed[name] = true
		b, err := fs.ReadFile(FS(), "vendor/"+name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := sha256.Sum256(b)
		if hex.EncodeToString(got[:]) != want {
			t.Errorf("vendor/%s is not the file vendor.sh fetched (sha256 %x, SHA256SUMS says %s)", name, got, want)
		}
	}
	for _, name := range []string{"d3.min.js", "plot.umd.min.js"} {
		if !listed[name] {
			t.Errorf("SHA256SUMS does not list %s", name)
		}
	}
	fs.WalkDir(FS(), "vendor", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !listed[strings.TrimPrefix(path, "vendor/")] {
			t.Errorf("%s is not in SHA256SUMS", path)
		}
		return nil
	})
}
