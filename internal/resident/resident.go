// Package resident is what the quire front (cmd/quire-front) and the
// resident engine (`quire-engine resident`, cmd/quire/resident.go) share:
// where a vault's resident listens, what they say to each other, and which
// engine a resident is. It imports the standard library alone, so the
// front, a process per `quire call`, starts in a millisecond where the
// whole program spends some 50 ms in its packages' initialisers before
// main (docs/resident.md, docs/boundary-speed.md).
//
// One connection carries one call. The front sends a Request (one JSON
// line); the resident answers "taken" once it has read the request and
// will make the call, or "stale" when the request names another engine or
// environment than its own (then it exits); after "taken", the Answer: the
// bytes `quire-engine call` would print on standard output and standard
// error and its exit code. A front that gets no "taken" knows the call was
// not made and runs the engine itself; a connection lost after it is a
// failed call, said so, exit 1.
package resident

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"quire/internal/gomod"
	"strings"
)

// EngineName is the whole program's name, beside the front.
const EngineName = "quire-engine"

// Identity is an engine binary as a front and a resident see it: when the
// file at Path is not the one the resident runs (an upgrade), the resident
// is stale.
type Identity struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
}

// IdentityOf stats the engine at path.
func IdentityOf(path string) (Identity, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Path: path, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}, nil
}

// Self is the identity of the running executable, symlinks resolved.
func Self() (Identity, error) {
	exe, err := os.Executable()
	if err != nil {
		return Identity{}, err
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return IdentityOf(exe)
}

// envKeys are the variables a call's answer may depend on in the engine
// (where the TypeScript compiler is found, the cache and temporary
// folders, the Go runtime's settings, the time zone). A resident serves
// only the fronts whose values are its own: they are part of the socket's
// name, and are checked again with each request.
var envKeys = []string{"PATH", "HOME", "XDG_CACHE_HOME", "TMPDIR", "QUIRE_TSC", "GODEBUG", "TZ"}

// Fingerprint is the values of envKeys as getenv gives them, and the Go
// module folder around the working folder wd (the engine looks for the
// TypeScript compiler in the source tree around its working folder, last:
// fold/module's Find). A resident works in that folder (or in /).
func Fingerprint(getenv func(string) string, wd string) string {
	var b strings.Builder
	for _, k := range envKeys {
		b.WriteString(k + "=" + getenv(k) + "\x00")
	}
	b.WriteString("module=" + gomod.Around(wd))
	return b.String()
}

// Request is one `quire call` as the front resolved it.
type Request struct {
	Vault string `json:"vault"` // the vault's absolute folder
	Op    string `json:"op"`
	// Args is the text of --args, read (@FILE, @-, @@) as the engine
	// reads it; From is where it came from, for messages ("" for the
	// flag's value itself).
	Args []byte `json:"args"`
	From string `json:"from,omitempty"`
	JSON bool   `json:"json"`
	// Actor is the front's QUIRE_ACTOR: who acts when the arguments do
	// not say, as the engine's own call reads it from its environment.
	Actor string `json:"actor,omitempty"`
	// Verb is a verb's command line (`run event step_completed --run …`,
	// without --vault) when the request is no call, and Vars the caller's
	// values of VerbVars, which the verb's flags read.
	Verb   []string          `json:"verb,omitempty"`
	Vars   map[string]string `json:"vars,omitempty"`
	Engine Identity          `json:"engine"`
	Env    string            `json:"env"`
}

// Status is the resident's first word on a connection.
type Status struct {
	Status string `json:"status"` // "taken" or "stale"
}

// Answer is what `quire-engine call` would have printed, and its exit code.
type Answer struct {
	Stdout []byte `json:"stdout"`
	Stderr []byte `json:"stderr"`
	Code   int    `json:"code"`
}

// Dir is the folder of the residents' sockets: $XDG_RUNTIME_DIR/quire
// when XDG_RUNTIME_DIR is set, else quire-<uid> in the temporary folder,
// and /tmp/quire-<uid> when either would make a socket's path longer than
// a unix socket takes (108 bytes with its NUL: a deep TMPDIR); made 0700
// when missing, refused when it is not a folder of this user's that only
// this user can enter (a symlink, another owner, open to others).
func Dir() (string, error) {
	var dir string
	if base := os.Getenv("XDG_RUNTIME_DIR"); base != "" {
		dir = filepath.Join(base, "quire")
	} else {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("quire-%d", os.Getuid()))
	}
	if len(dir)+1+socketNameLen >= maxSocketPath {
		dir = filepath.Join("/tmp", fmt.Sprintf("quire-%d", os.Getuid()))
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder", dir)
	}
	if err := ownedBySelf(fi); err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is open to other users (mode %v); it must be 0700", dir, fi.Mode().Perm())
	}
	return dir, nil
}

const (
	socketNameLen = 32 + len(".sock")
	maxSocketPath = 108 // sun_path on Linux, its NUL included
)

// Socket is the path of the socket of the resident of the vault at root
// (absolute) for the environment fingerprint env and the engine at the
// path engine (two quires installed in two places have a resident each,
// rather than making each other's stale), in dir: named by a hash, since a
// unix socket's path is limited to some 107 bytes.
func Socket(dir, root, env, engine string) string {
	h := sha256.Sum256([]byte(root + "\x00" + env + "\x00" + engine))
	return filepath.Join(dir, hex.EncodeToString(h[:16])+".sock")
}

// LockPath is the lock file beside a socket: the live resident holds it
// for its life (and writes its process id in it), so that two residents
// never serve one socket.
func LockPath(socket string) string {
	return strings.TrimSuffix(socket, ".sock") + ".lock"
}

// ErrLinuxOnly: the resident is Linux only.
var ErrLinuxOnly = errors.New("the resident engine runs on Linux only")
