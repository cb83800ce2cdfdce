package ledger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"quire/ledger"
	"quire/vault"
	"quire/words/refusal"
)

// Every write goes through one write transaction, which commits nothing a
// person changed of what was committed: a committed line of run.jsonl
// edited by hand refuses the run's next write, before anything is
// appended, until quire janitor restores the committed part.
func Example_writeTransaction() {
	dir, _ := os.MkdirTemp("", "quire-example-")
	defer os.RemoveAll(dir)
	v, err := vault.Init(dir, "acme", time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	l := ledger.New(v)
	defer l.Close()
	call := func(op, args string) (map[string]any, error) {
		res, err := l.Call(context.Background(), op, json.RawMessage(args))
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(res)
		var out map[string]any
		json.Unmarshal(b, &out)
		return out, nil
	}
	p, _ := call("create_project", `{"name":"Operations"}`)
	call("create_playbook", `{"playbook":"finance","name":"Finance"}`)
	call("create_definition", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)
	run, _ := call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, p["uid"]))
	step := fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/1/a","actor":"agent-7"}`, run["run_id"])
	e, _ := call("record_event", step)
	fmt.Println("recorded", e["type"], "committed", e["committed"])

	// A person rewrites the first, committed line in place.
	log := filepath.Join(dir, run["path"].(string), "run.jsonl")
	data, _ := os.ReadFile(log)
	os.WriteFile(log, []byte(strings.Replace(string(data), "Run initialized", "Run INITIALIZED", 1)), 0o644)

	_, err = call("record_event", step)
	r, _ := refusal.As(err)
	fmt.Println(r.Code)
	fmt.Println(regexp.MustCompile(`close-[0-9a-f-]+`).ReplaceAllString(r.Message, "close-…"))

	rep, _ := call("repair_vault", `{}`)
	fmt.Println(len(rep["repaired"].([]any)) > 0)
	e, _ = call("record_event", step)
	fmt.Println("recorded", e["type"], "committed", e["committed"])
	// Output:
	// recorded step_completed committed true
	// conflict
	// playbook-runs/close-…/run.jsonl: line 1 differs from the commit (HEAD), and quire commits no change to what was committed: its committed lines never change (append a correction instead). Run quire janitor to restore the committed part from HEAD (it keeps the edited copy in .quire/quarantine/ and the lines appended after it)
	// true
	// recorded step_completed committed true
}
