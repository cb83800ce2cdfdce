package serve

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"quire/ledger"
	"quire/ledger/address"
	"quire/ledger/refusal"
	"quire/vault"
)

// Scopes. A token holds one or more; admin implies playbook:write, which
// implies playbook:read. A scope may name one playbook,
// playbook:read:finance or playbook:write:finance, and then grants only
// calls whose playbook argument is that playbook.
const (
	ScopeRead  = "playbook:read"
	ScopeWrite = "playbook:write"
	ScopeAdmin = "admin"
)

// tokenPrefix marks quire's bearer tokens, so a leaked one is recognised.
const tokenPrefix = "quire_"

func scopeLevel(s string) int {
	switch s {
	case ScopeRead:
		return 1
	case ScopeWrite:
		return 2
	case ScopeAdmin:
		return 3
	}
	return 0
}

// checkScope says whether a token's scopes grant an operation needing
// need, on the given playbook ("" when the call names none).
func checkScope(have []string, need, playbook string) bool {
	want := scopeLevel(need)
	if want == 0 {
		want = 3 // an operation with an unknown scope is for admins
	}
	for _, s := range have {
		base, only := s, ""
		if strings.Count(s, ":") == 2 {
			i := strings.LastIndexByte(s, ':')
			base, only = s[:i], s[i+1:]
		}
		if only != "" && only != playbook {
			continue
		}
		if scopeLevel(base) >= want {
			return true
		}
	}
	return false
}

// validScope checks a scope as CreateToken takes it.
func validScope(s string) error {
	if scopeLevel(s) > 0 {
		return nil
	}
	for _, base := range []string{ScopeRead, ScopeWrite} {
		if p, ok := strings.CutPrefix(s, base+":"); ok {
			if !address.ValidPlaybookID(p) {
				return refusal.Invalid("/scopes", "%q names %q, which is not a playbook id", s, p)
			}
			return nil
		}
	}
	return refusal.Invalid("/scopes", "%q is not a scope: use playbook:read, playbook:write or admin, or playbook:read:<playbook> and playbook:write:<playbook> for one playbook", s)
}

func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a bearer token for principal with the given scopes:
// 32 random bytes, answered once and never stored; quire.yaml keeps only
// its SHA-256 (hex) with an id, the principal, the scopes and the time, in
// a commit. A running server takes the new token at its next request.
func CreateToken(l *ledger.Ledger, principal string, scopes []string) (string, error) {
	principal = strings.TrimSpace(principal)
	if principal == "" || len(principal) > 200 || strings.ContainsAny(principal, "\n\r<>") {
		return "", refusal.Invalid("/principal", "a token's principal is 1 to 200 characters on one line, without < or >")
	}
	if len(scopes) == 0 {
		return "", refusal.Invalid("/scopes", "a token needs at least one scope: playbook:read, playbook:write or admin")
	}
	for _, s := range scopes {
		if err := validScope(s); err != nil {
			return "", err
		}
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	var idb [6]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return "", err
	}
	now := l.Now()
	t := vault.Token{ID: "tok-" + hex.EncodeToString(idb[:]), Principal: principal, Scopes: slices.Clone(scopes),
		SHA256: hashToken(tok), Created: now.UTC().Format(time.RFC3339)}
	err := l.V.Locked(func() error {
		c, err := l.V.Config()
		if err != nil {
			return err
		}
		c.Tokens = append(c.Tokens, t)
		if err := l.V.WriteConfig(c); err != nil {
			return err
		}
		_, err = l.V.Commit([]string{vault.ConfigFile}, vault.Signature{Name: "quire", When: now},
			fmt.Sprintf("Make the token %s for %s (%s)", t.ID, principal, strings.Join(scopes, " ")))
		return err
	})
	if err != nil {
		return "", err
	}
	return tok, nil
}

// TokenInfo is a token as ListTokens shows it: never the token itself.
type TokenInfo struct {
	ID        string   `json:"id"`
	Principal string   `json:"principal"`
	Scopes    []string `json:"scopes"`
	Created   string   `json:"created"`
}

// ListTokens lists the tokens of quire.yaml, without their hashes.
func ListTokens(l *ledger.Ledger) ([]TokenInfo, error) {
	c, err := l.V.Config()
	if err != nil {
		return nil, err
	}
	out := []TokenInfo{}
	for _, t := range c.Tokens {
		out = append(out, TokenInfo{ID: t.ID, Principal: t.Principal, Scopes: t.Scopes, Created: t.Created})
	}
	return out, nil
}

// RevokeToken removes the token with the given id from quire.yaml and
// commits; a running server refuses it from its next request.
func RevokeToken(l *ledger.Ledger, id string) error {
	return l.V.Locked(func() error {
		c, err := l.V.Config()
		if err != nil {
			return err
		}
		i := slices.IndexFunc(c.Tokens, func(t vault.Token) bool { return t.ID == id })
		if i < 0 {
			return refusal.New(refusal.NotFound, "no token %q; quire token list shows them", id)
		}
		who := c.Tokens[i].Principal
		c.Tokens = slices.Delete(c.Tokens, i, i+1)
		if err := l.V.WriteConfig(c); err != nil {
			return err
		}
		_, err = l.V.Commit([]string{vault.ConfigFile}, vault.Signature{Name: "quire", When: l.Now()},
			fmt.Sprintf("Revoke the token %s of %s", id, who))
		return err
	})
}

// principal is who a request acts as: the token's principal and scopes.
// The zero principal (open) is a server without tokens on a loopback
// address, or stdio: every scope, and no actor to record.
type principal struct {
	Name   string
	Scopes []string
	open   bool
}

var openPrincipal = &principal{open: true}

func (p *principal) may(op *ledger.Op, playbook string) bool {
	return p.open || checkScope(p.Scopes, op.Scope, playbook)
}

// keyring reads the tokens of quire.yaml, again whenever the file changes.
type keyring struct {
	v *vault.Vault

	mu     sync.Mutex
	stamp  string
	org    string
	tokens []vault.Token
}

func (k *keyring) load() (org string, tokens []vault.Token, err error) {
	fi, err := os.Stat(k.v.Abs(vault.ConfigFile))
	if err != nil {
		return "", nil, err
	}
	stamp := fmt.Sprintf("%d/%d", fi.ModTime().UnixNano(), fi.Size())
	k.mu.Lock()
	defer k.mu.Unlock()
	if stamp != k.stamp {
		c, err := k.v.Config()
		if err != nil {
			return "", nil, err
		}
		k.stamp, k.org, k.tokens = stamp, c.Org, c.Tokens
	}
	return k.org, k.tokens, nil
}

// lookup finds the token tok, comparing hashes in constant time.
func (k *keyring) lookup(tok string) (*principal, bool, error) {
	_, tokens, err := k.load()
	if err != nil {
		return nil, false, err
	}
	h := []byte(hashToken(tok))
	for _, t := range tokens {
		if subtle.ConstantTimeCompare(h, []byte(strings.ToLower(t.SHA256))) == 1 {
			return &principal{Name: t.Principal, Scopes: t.Scopes}, true, nil
		}
	}
	return nil, false, nil
}
