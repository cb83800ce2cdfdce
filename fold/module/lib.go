package module

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// The sandbox's library is made from the compiler's own lib files, read
// from the directory beside the native tsc at check time, so the library
// always matches the compiler that reads it. Nothing of them is kept in
// this repository: libFiles says which files the sandbox has, and
// filterLib takes out of them every name the sandbox lacks:
//
//   - whole files: Promise, WeakRef/FinalizationRegistry, Intl, async
//     iteration, shared memory, decorators, disposables, Temporal, Float16,
//     the DOM (none of them is listed);
//   - eval and the value Function (the type Function stays, since the
//     compiler needs it);
//   - Math.random;
//   - every local-time method of Date, Date called without new, and a Date
//     from several numbers;
//   - the namespace Intl, every member that takes Intl's options, and every
//     toLocaleString.
//
// The tests type-check a use of each absent name and expect a refusal, so a
// compiler whose lib files moved a declaration fails them rather than
// quietly letting the name through.
var libFiles = []string{
	"lib.es5.d.ts",
	"lib.es2015.core.d.ts", "lib.es2015.collection.d.ts", "lib.es2015.iterable.d.ts",
	"lib.es2015.generator.d.ts", "lib.es2015.symbol.d.ts", "lib.es2015.symbol.wellknown.d.ts",
	"lib.es2015.proxy.d.ts", "lib.es2015.reflect.d.ts",
	"lib.es2016.array.include.d.ts",
	"lib.es2017.object.d.ts", "lib.es2017.string.d.ts", "lib.es2017.date.d.ts",
	"lib.es2017.typedarrays.d.ts", "lib.es2017.arraybuffer.d.ts",
	"lib.es2018.regexp.d.ts",
	"lib.es2019.array.d.ts", "lib.es2019.object.d.ts", "lib.es2019.string.d.ts", "lib.es2019.symbol.d.ts",
	"lib.es2020.bigint.d.ts", "lib.es2020.string.d.ts", "lib.es2020.symbol.wellknown.d.ts",
	"lib.es2021.string.d.ts",
	"lib.es2022.array.d.ts", "lib.es2022.error.d.ts", "lib.es2022.object.d.ts",
	"lib.es2022.regexp.d.ts", "lib.es2022.string.d.ts",
	"lib.es2023.array.d.ts", "lib.es2023.collection.d.ts",
	"lib.es2024.collection.d.ts", "lib.es2024.object.d.ts", "lib.es2024.string.d.ts",
	"lib.es2024.regexp.d.ts", "lib.es2024.arraybuffer.d.ts",
	"lib.es2025.collection.d.ts", "lib.es2025.iterator.d.ts",
}

// libOptional are files a compiler version may lack; the others must be there.
var libOptional = map[string]bool{
	"lib.es2024.collection.d.ts": true, "lib.es2024.object.d.ts": true, "lib.es2024.string.d.ts": true,
	"lib.es2024.regexp.d.ts": true, "lib.es2024.arraybuffer.d.ts": true,
	"lib.es2025.collection.d.ts": true, "lib.es2025.iterator.d.ts": true,
}

// dropMembers names, for an interface, the members taken out of it.
var dropMembers = map[string][]string{
	"Math": {"random"},
	"Date": {"toString", "toDateString", "toTimeString", "toLocaleString", "toLocaleDateString",
		"toLocaleTimeString", "getFullYear", "getMonth", "getDate", "getDay", "getHours", "getMinutes",
		"getSeconds", "getMilliseconds", "getTimezoneOffset", "setMilliseconds", "setSeconds",
		"setMinutes", "setHours", "setDate", "setMonth", "setFullYear", "getYear", "setYear",
		"toTemporalInstant"},
}

var (
	memberName   = regexp.MustCompile(`^\s+(?:readonly\s+)?([A-Za-z_$][\w$]*)\??\s*[(<:]`)
	interfaceTop = regexp.MustCompile(`^(?:declare\s+)?interface\s+([A-Za-z_$][\w$]*)`)
	severalNums  = regexp.MustCompile(`^\s+new\s*\(\s*year\s*:\s*number\s*,`)
	callNoNew    = regexp.MustCompile(`^\s+\(\s*\)\s*:\s*string\s*;`)
)

// filterLib takes out of one lib file what the sandbox lacks.
func filterLib(text string) string {
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	iface := ""
	skipDepth := 0 // >0 while inside a dropped block
	for _, line := range lines {
		trim := strings.TrimSpace(line)
		if skipDepth > 0 {
			skipDepth += strings.Count(line, "{") - strings.Count(line, "}")
			continue
		}
		if strings.HasPrefix(trim, "/// <reference") {
			continue
		}
		if strings.HasPrefix(line, "declare namespace Intl") {
			skipDepth = strings.Count(line, "{") - strings.Count(line, "}")
			continue
		}
		if strings.HasPrefix(line, "declare function eval(") || strings.HasPrefix(line, "declare var Function:") {
			continue
		}
		if m := interfaceTop.FindStringSubmatch(line); m != nil {
			iface = m[1]
		} else if strings.HasPrefix(line, "}") {
			iface = ""
		}
		if iface != "" && line != "" && line[0] == ' ' {
			if strings.Contains(line, "Intl.") {
				continue
			}
			if m := memberName.FindStringSubmatch(line); m != nil {
				if m[1] == "toLocaleString" || contains(dropMembers[iface], m[1]) {
					continue
				}
			}
			if iface == "DateConstructor" && (severalNums.MatchString(line) || callNoNew.MatchString(line)) {
				continue
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type libSet struct {
	names []string
	texts []string
}

var libCache sync.Map // lib dir → *libSet or error

// sandboxLib reads and filters the lib files of the compiler whose lib
// files are in dir, once per process.
func sandboxLib(dir string) (*libSet, error) {
	if v, ok := libCache.Load(dir); ok {
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		return v.(*libSet), nil
	}
	set := &libSet{}
	for _, name := range libFiles {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			if os.IsNotExist(err) && libOptional[name] {
				continue
			}
			err = fmt.Errorf("module: the TypeScript compiler's library %s is missing: %w", name, err)
			libCache.Store(dir, err)
			return nil, err
		}
		set.names = append(set.names, name)
		set.texts = append(set.texts, filterLib(string(raw)))
	}
	libCache.Store(dir, set)
	return set, nil
}
