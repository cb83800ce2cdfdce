package serve

import (
	"net/http"

	"quire/words/refusal"
)

// POST /v1/orgs/{org}/sync asks a replica (quire serve --follow NAME) to
// fetch its remote now, rather than at its next look: the URL to give a
// forge as the push webhook of the repository the writer pushes to.
//
// It takes no token. A forge's webhook cannot send one (GitHub sends none
// it could carry), and the call needs none: it reads nothing of the
// request's body or headers, answers nothing of the vault, and only
// hastens the fetch the replica makes every interval anyway, from the
// remote and branch it was started with. So a caller learns nothing and
// changes nothing but when the next fetch starts, and fetches asked for
// this way are at most four a second (follow.MinGap), one at a time.
// A server that follows no remote answers not_found.
func (s *server) sync(w http.ResponseWriter, r *http.Request) {
	org, _, err := s.keys.load()
	if err != nil {
		writeError(w, err)
		return
	}
	if got := r.PathValue("org"); got != org {
		writeError(w, refusal.New(refusal.NotFound, "no organization %q here; this vault is %q, under /v1/orgs/%s/", got, org, org))
		return
	}
	remote, err := s.l.Sync()
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	b, _ := answerJSON(map[string]string{"syncing": remote})
	w.Write(append(b, '\n'))
}
