package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/config"

	"quire/internal/crashpoint"
	"quire/internal/fsys"
	"quire/words/refusal"
)

// A vault's remotes are git's: kept in .git/config as `git remote add`
// keeps them ([remote "<name>"] url = …, fetch = +refs/heads/*:refs/
// remotes/<name>/*), so git itself pushes and fetches the same ones, and
// nothing of them is committed. quire writes the file as git does, through
// .git/config.lock.

// Remote is one of the vault's git remotes.
type Remote struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// remoteName is what git takes as a remote's name, narrowed to what a
// person types: letters, digits, '.', '_' and '-', not beginning with '-'
// or '.'.
var remoteName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$`)

// CheckRemoteName refuses a name git or a shell would take otherwise.
func CheckRemoteName(name string) error {
	if !remoteName.MatchString(name) || strings.HasSuffix(name, ".lock") || strings.Contains(name, "..") {
		return refusal.Invalid("/name", "%q is not a remote's name: 1 to 64 letters, digits, '.', '_' and '-', beginning with a letter, a digit or '_'", name)
	}
	return nil
}

func (v *Vault) configPath() string { return filepath.Join(v.gitDir, "config") }

func (v *Vault) readConfig() (*config.Config, error) {
	f, err := fsys.Open(v.configPath())
	if errors.Is(err, fs.ErrNotExist) {
		return config.New(), nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := config.New()
	if err := config.NewDecoder(f).Decode(c); err != nil {
		return nil, fmt.Errorf("vault: .git/config: %v", err)
	}
	return c, nil
}

// Remotes lists the vault's git remotes, in the order .git/config holds
// them.
func (v *Vault) Remotes() ([]Remote, error) {
	c, err := v.readConfig()
	if err != nil {
		return nil, err
	}
	out := []Remote{}
	for _, s := range c.Section("remote").Subsections {
		out = append(out, Remote{Name: s.Name, URL: s.Option("url")})
	}
	return out, nil
}

// RemoteNamed answers the remote called name, or not_found at /name.
func (v *Vault) RemoteNamed(name string) (Remote, error) {
	rs, err := v.Remotes()
	if err != nil {
		return Remote{}, err
	}
	for _, r := range rs {
		if r.Name == name {
			return r, nil
		}
	}
	return Remote{}, refusal.At(refusal.NotFound, "/name", "the vault has no remote %q (quire remote list shows them; quire remote add %s URL adds it)", name, name)
}

// AddRemote adds the remote name at url, as git remote add does.
func (v *Vault) AddRemote(name, url string) error {
	if err := CheckRemoteName(name); err != nil {
		return err
	}
	if strings.TrimSpace(url) != url || url == "" || strings.ContainsAny(url, "\n\r\x00") {
		return refusal.Invalid("/url", "%q is not a remote's URL: a URL such as ssh://host/path, https://host/path or file:///path, or a path", url)
	}
	return v.editConfig(func(c *config.Config) error {
		if c.Section("remote").HasSubsection(name) {
			return refusal.At(refusal.Conflict, "/name", "the vault has a remote %q already (quire remote remove %s takes it away)", name, name)
		}
		s := c.Section("remote").Subsection(name)
		s.SetOption("url", url)
		s.SetOption("fetch", "+refs/heads/*:refs/remotes/"+name+"/*")
		return nil
	})
}

// RemoveRemote takes the remote name away, as git remote remove does (its
// remote-tracking branches too).
func (v *Vault) RemoveRemote(name string) error {
	if _, err := v.RemoteNamed(name); err != nil {
		return err
	}
	if err := v.editConfig(func(c *config.Config) error {
		c.Section("remote").RemoveSubsection(name)
		return nil
	}); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(v.gitDir, "refs", "remotes", name))
}

// editConfig changes .git/config under git's lock on it (.git/config.lock,
// taken exclusively and renamed into place, as git does).
func (v *Vault) editConfig(edit func(c *config.Config) error) error {
	lock := v.configPath() + ".lock"
	crashpoint.Hit()
	f, err := fsys.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return refusal.New(refusal.Unavailable, "vault: .git/config.lock is held by another program (a git command?); try again once it ends, or delete it if no git command is running")
	}
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(lock)
		}
	}()
	c, err := v.readConfig()
	if err != nil {
		return err
	}
	if err := edit(c); err != nil {
		return err
	}
	if err := config.NewEncoder(f).Encode(c); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	crashpoint.Hit()
	if err := os.Rename(lock, v.configPath()); err != nil {
		return err
	}
	done = true
	return nil
}

// RemoteHead is the commit the remote name's branch was last seen at
// (refs/remotes/<name>/<branch>, which git fetch and git push keep), or
// "" when it is not known.
func (v *Vault) RemoteHead(name string) string {
	ref := "refs/remotes/" + name + "/" + strings.TrimPrefix(v.branch, "refs/heads/")
	if data, err := fsys.ReadFile(filepath.Join(v.gitDir, filepath.FromSlash(ref))); err == nil {
		return strings.TrimSpace(string(data))
	}
	if data, err := fsys.ReadFile(filepath.Join(v.gitDir, "packed-refs")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if h, r, ok := strings.Cut(line, " "); ok && r == ref {
				return h
			}
		}
	}
	return ""
}

// Branch is the branch the vault commits onto, as a ref (refs/heads/main).
func (v *Vault) Branch() string { return v.branch }

// AttributesFile is the vault's .gitattributes, and UnionAttributes what
// quire declares in it: git's union merge for the files several writers
// append to (the index of things, the members' seen marks), so that two
// writers' lines are both kept whoever merges.
const (
	AttributesFile  = ".gitattributes"
	UnionAttributes = "vault/*.jsonl merge=union\norg/members/*/seen.jsonl merge=union\n"
)

// Node is this vault's node name, the name of the server that writes it
// among those that meet at a remote: [quire] node in .git/config (outside
// the committed tree, as git keeps a repository's own settings), or the
// host's name when it is not set.
func (v *Vault) Node() string {
	if c, err := v.readConfig(); err == nil {
		if n := c.Section("quire").Option("node"); n != "" {
			return n
		}
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// SetNode sets the vault's node name in .git/config.
func (v *Vault) SetNode(name string) error {
	if err := CheckRemoteName(name); err != nil {
		return refusal.Invalid("/node", "%q is not a node's name: 1 to 64 letters, digits, '.', '_' and '-'", name)
	}
	return v.editConfig(func(c *config.Config) error {
		c.Section("quire").SetOption("node", name)
		return nil
	})
}
