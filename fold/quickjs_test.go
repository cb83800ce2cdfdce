package fold

import (
	"bytes"
	"testing"
)

// sections lists a module's sections as withoutDebugSections reads them:
// each one's bytes, and the custom ones' names.
func sections(t *testing.T, b []byte) (all [][]byte, names []string) {
	t.Helper()
	for i := 8; i < len(b); {
		size, n := uleb(b[i+1:])
		if n == 0 {
			t.Fatalf("a section at %d with no size", i)
		}
		end := i + 1 + n + int(size)
		if b[i] == 0 {
			l, m := uleb(b[i+1+n:])
			names = append(names, string(b[i+1+n+m:i+1+n+m+int(l)]))
		}
		all = append(all, b[i:end])
		i = end
	}
	return all, names
}

// The workers' QuickJS is qjs's module with its .debug_* sections left
// out and every other section as it lies, in order; qjs's has some, so
// the workers' is smaller.
func TestTheWorkersQuickJSIsQjssWithoutDWARF(t *testing.T) {
	orig, mod := qjsWasm, quickJS()
	if len(orig) < 1<<20-100<<10 || !bytes.HasPrefix(orig, []byte("\x00asm")) {
		t.Fatalf("qjs's module: %d bytes, %q", len(orig), orig[:min(8, len(orig))])
	}
	was, wasNames := sections(t, orig)
	got, names := sections(t, mod)
	var want [][]byte
	for _, s := range was {
		if s[0] == 0 {
			_, n := uleb(s[1:])
			l, m := uleb(s[1+n:])
			if bytes.HasPrefix(s[1+n+m:1+n+m+int(l)], []byte(".debug_")) {
				continue
			}
		}
		want = append(want, s)
	}
	if len(want) == len(was) {
		t.Fatalf("qjs's module has no DWARF sections (%q): nothing left out", wasNames)
	}
	if len(got) != len(want) || !bytes.Equal(mod[:8], orig[:8]) {
		t.Fatalf("sections %q, want those of %q but .debug_*", names, wasNames)
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("section %d differs", i)
		}
	}
}

// A module that is not one whole is left as it is; sections are read
// within the module's bounds, whatever their sizes say.
func TestWithoutDebugSectionsOfNoModule(t *testing.T) {
	for _, b := range [][]byte{
		nil,
		[]byte("\x00asm"),
		[]byte("not wasm at all"),
		[]byte("\x00asm\x01\x00\x00\x00\x01\x05ab"),                   // a section past the end
		[]byte("\x00asm\x01\x00\x00\x00\x00\x03\x09.de"),              // a name past its section
		[]byte("\x00asm\x01\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff"), // a size of more than 32 bits
	} {
		if got := withoutDebugSections(b); !bytes.Equal(got, b) {
			t.Errorf("%q: %q", b, got)
		}
	}
	m := []byte("\x00asm\x01\x00\x00\x00" + "\x00\x08\x07.debug_" + "\x01\x01\x00" + "\x00\x05\x04name")
	if got, want := withoutDebugSections(m), []byte("\x00asm\x01\x00\x00\x00"+"\x01\x01\x00"+"\x00\x05\x04name"); !bytes.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzWithoutDebugSections(f *testing.F) {
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x00\x08\x07.debug_\x01\x01\x00"))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x00\x05\x04name"))
	f.Add(qjsWasm[:4096])
	f.Fuzz(func(t *testing.T, b []byte) {
		got := withoutDebugSections(b)
		if bytes.Equal(got, b) {
			return
		}
		// Something was left out: what is left is a module whose
		// sections are b's but the .debug_* ones, and none of those.
		_, names := sections(t, got)
		for _, n := range names {
			if len(n) >= 7 && n[:7] == ".debug_" {
				t.Fatalf("%q left in", n)
			}
		}
		if len(got) >= len(b) || !bytes.Equal(got[:8], b[:8]) {
			t.Fatalf("%q from %q", got, b)
		}
	})
}
