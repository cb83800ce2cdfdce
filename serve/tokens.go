package serve

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"quire/ledger"
	"quire/words/address"
	"quire/words/event"
	"quire/words/refusal"
)

// Scopes. A token holds one or more; admin implies playbook:write, which
// implies playbook:read. A scope may name one playbook,
// playbook:read:finance or playbook:write:finance, and then grants only
// calls whose playbook argument is that playbook. The ledger declares
// them, with the operations that need them.
const (
	ScopeRead  = ledger.ScopeRead
	ScopeWrite = ledger.ScopeWrite
	ScopeAdmin = ledger.ScopeAdmin
	// ScopeDelegate lets run_definition name another executor or
	// authorized_by than the token's own principal (a person's token
	// starting a run for an agent, a scheduler's for the person who
	// authorized it). It grants no call by itself: run_definition still
	// needs playbook:write. playbook:delegate:<playbook> grants it on one
	// playbook; admin implies it.
	ScopeDelegate = ledger.ScopeDelegate
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
	if scopeLevel(s) > 0 || s == ScopeDelegate {
		return nil
	}
	for _, base := range []string{ScopeRead, ScopeWrite, ScopeDelegate} {
		if p, ok := strings.CutPrefix(s, base+":"); ok {
			if !address.ValidPlaybookID(p) {
				return refusal.Invalid("/scopes", "%q names %q, which is not a playbook id", s, p)
			}
			return nil
		}
	}
	return refusal.Invalid("/scopes", "%q is not a scope: use playbook:read, playbook:write, admin or playbook:delegate, or playbook:read:<playbook>, playbook:write:<playbook> and playbook:delegate:<playbook> for one playbook", s)
}

func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a bearer token for principal with the given scopes
// that never expires; NewToken says more.
func CreateToken(l *ledger.Ledger, principal string, scopes []string) (string, error) {
	tok, _, err := NewToken(l, principal, scopes, 0)
	return tok, err
}

// NewToken makes a bearer token for principal with the given scopes,
// expiring after expires (never when 0): 32 random bytes, answered once
// and never stored; quire.yaml keeps only its SHA-256 (hex) with an id,
// the principal, the scopes, the time and the expiry, in a commit. A
// running server takes the new token at its next request.
func NewToken(l *ledger.Ledger, principal string, scopes []string, expires time.Duration) (string, TokenInfo, error) {
	principal = strings.TrimSpace(principal)
	if !event.IsPrincipal(principal) || strings.ContainsAny(principal, "<>") {
		return "", TokenInfo{}, refusal.Invalid("/principal", "a token's principal is 1 to 200 characters on one line, without < or >")
	}
	if len(scopes) == 0 {
		return "", TokenInfo{}, refusal.Invalid("/scopes", "a token needs at least one scope: playbook:read, playbook:write or admin")
	}
	for _, s := range scopes {
		if err := validScope(s); err != nil {
			return "", TokenInfo{}, err
		}
	}
	if expires < 0 {
		return "", TokenInfo{}, refusal.Invalid("/expires", "a token expires after a positive time, such as 90d or 12h")
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", TokenInfo{}, err
	}
	tok := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	var idb [6]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return "", TokenInfo{}, err
	}
	now := l.Now()
	t := ledger.Token{ID: "tok-" + hex.EncodeToString(idb[:]), Principal: principal, Scopes: slices.Clone(scopes),
		SHA256: hashToken(tok), Created: now.UTC().Format(time.RFC3339)}
	if expires > 0 {
		t.Expires = now.Add(expires).UTC().Format(time.RFC3339)
	}
	err := l.UpdateConfig(func(c *ledger.Config) (string, error) {
		c.Tokens = append(c.Tokens, t)
		return fmt.Sprintf("Make the token %s for %s (%s)", t.ID, principal, strings.Join(scopes, " ")), nil
	})
	if err != nil {
		return "", TokenInfo{}, err
	}
	return tok, infoOf(t, nil), nil
}

// ParseExpiry reads how long a token lasts, as token create --expires
// takes it: a number of days (90d), or a Go duration (12h, 90m).
func ParseExpiry(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days int
		if _, err := fmt.Sscanf(n, "%d", &days); err == nil && fmt.Sprint(days) == n && days > 0 && days <= 36500 {
			return time.Duration(days) * 24 * time.Hour, nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, refusal.Invalid("/expires", "%q is not a time a token lasts: a number of days such as 90d, or hours or minutes such as 12h or 90m", s)
}

// TokenInfo is a token as ListTokens shows it: never the token itself,
// nor its hash.
type TokenInfo struct {
	ID        string   `json:"id"`
	Principal string   `json:"principal"`
	Scopes    []string `json:"scopes"`
	Created   string   `json:"created"`
	// Expires is when it stops being taken; "" never.
	Expires string `json:"expires,omitempty"`
	// LastUsed is when a request last came with it, to the minute; "" never.
	LastUsed string `json:"last_used,omitempty"`
}

func infoOf(t ledger.Token, used map[string]string) TokenInfo {
	return TokenInfo{ID: t.ID, Principal: t.Principal, Scopes: t.Scopes, Created: t.Created, Expires: t.Expires, LastUsed: used[t.ID]}
}

// ListTokens lists the tokens of quire.yaml, without their hashes, with
// when each was last used (kept in .quire/, never committed).
func ListTokens(l *ledger.Ledger) ([]TokenInfo, error) {
	c, err := l.Config()
	if err != nil {
		return nil, err
	}
	used := readUsed(l)
	out := []TokenInfo{}
	for _, t := range c.Tokens {
		out = append(out, infoOf(t, used))
	}
	return out, nil
}

// RevokeToken removes the token with the given id from quire.yaml and
// commits; a running server refuses it from its next request.
func RevokeToken(l *ledger.Ledger, id string) error {
	return l.UpdateConfig(func(c *ledger.Config) (string, error) {
		i := slices.IndexFunc(c.Tokens, func(t ledger.Token) bool { return t.ID == id })
		if i < 0 {
			return "", refusal.At(refusal.NotFound, "/id", "no token %q; quire token list shows them", id)
		}
		who := c.Tokens[i].Principal
		c.Tokens = slices.Delete(c.Tokens, i, i+1)
		return fmt.Sprintf("Revoke the token %s of %s", id, who), nil
	})
}

// usedFile keeps when each token was last used: not part of the vault's
// history (a read would otherwise make a commit), so under .quire/.
const usedFile = "tokens-used.json"

func readUsed(l *ledger.Ledger) map[string]string {
	used := map[string]string{}
	if b, err := l.ReadDerived(usedFile); err == nil {
		json.Unmarshal(b, &used)
	}
	return used
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

// mayDelegate says whether the principal may start a run on playbook for
// another executor or authorized_by.
func (p *principal) mayDelegate(playbook string) bool {
	if p.open {
		return true
	}
	for _, s := range p.Scopes {
		if s == ScopeAdmin || s == ScopeDelegate || (playbook != "" && s == ScopeDelegate+":"+playbook) {
			return true
		}
	}
	return false
}

// keyring reads the tokens of quire.yaml, again whenever the file changes.
type keyring struct {
	l   *ledger.Ledger
	now func() time.Time

	mu     sync.Mutex
	stamp  string
	org    string
	tokens []ledger.Token
	// used is when each token was last used, as written to usedFile.
	used map[string]string
}

func (k *keyring) load() (org string, tokens []ledger.Token, err error) {
	fi, err := os.Stat(filepath.Join(k.l.Root(), ledger.ConfigFile))
	if err != nil {
		return "", nil, err
	}
	stamp := fmt.Sprintf("%d/%d", fi.ModTime().UnixNano(), fi.Size())
	k.mu.Lock()
	defer k.mu.Unlock()
	if stamp != k.stamp {
		c, err := k.l.Config()
		if err != nil {
			return "", nil, err
		}
		k.stamp, k.org, k.tokens = stamp, c.Org, c.Tokens
	}
	return k.org, k.tokens, nil
}

// lookup finds the token tok, comparing hashes in constant time. An
// expired token is not found, as a revoked one. mark records its use.
func (k *keyring) lookup(tok string, mark bool) (*principal, bool, error) {
	_, tokens, err := k.load()
	if err != nil {
		return nil, false, err
	}
	now := k.now()
	h := []byte(hashToken(tok))
	for _, t := range tokens {
		if subtle.ConstantTimeCompare(h, []byte(strings.ToLower(t.SHA256))) != 1 {
			continue
		}
		if t.Expires != "" {
			if exp, err := time.Parse(time.RFC3339, t.Expires); err != nil || !now.Before(exp) {
				return nil, false, nil
			}
		}
		if mark {
			k.markUsed(t.ID, now)
		}
		return &principal{Name: t.Principal, Scopes: t.Scopes}, true, nil
	}
	return nil, false, nil
}

// markUsed records that a token was used, to the minute: usedFile is
// written at most once a minute a token, and a failure to write it
// refuses nothing.
func (k *keyring) markUsed(id string, now time.Time) {
	at := now.UTC().Truncate(time.Minute).Format(time.RFC3339)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.used == nil {
		k.used = readUsed(k.l)
	}
	if k.used[id] == at {
		return
	}
	used := readUsed(k.l) // another process may have written since
	used[id] = at
	k.used = used
	if b, err := json.Marshal(used); err == nil {
		k.l.WriteDerived(usedFile, b)
	}
}
