#!/usr/bin/env bash
# make demo: a sample vault from testdata/ — a playbook holding the spec's
# three example workflows and three weeks of their runs, recorded through
# quire's own operations — then the main job on it.
set -euo pipefail
cd "$(dirname "$0")/.."
Q="$PWD/bin/quire"
V="$PWD/demo-vault"
rm -rf "$V"
"$Q" init "$V" --org acme
export QUIRE_VAULT="$V"
uid() { sed -n 's/^  "uid": "\([^"]*\)".*/\1/p' | head -1; }
runid() { sed -n 's/^  "run_id": "\([^"]*\)".*/\1/p' | head -1; }
json_string() { python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))' 2>/dev/null || node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.stringify(s)))'; }

P=$("$Q" call create_project --args '{"name":"Operations"}' | uid)
"$Q" call create_playbook --args '{"playbook":"operations","name":"Operations","description":"Daily posts, month-end close and order fulfilment."}' >/dev/null
for w in morning-social-content close-the-month fulfill-order; do
  src=$(json_string < "testdata/vault/$w.yaml")
  "$Q" call create_definition --args "{\"playbook\":\"operations\",\"type\":\"workflow\",\"name\":\"$w\",\"source\":$src,\"actor\":\"ana\"}" >/dev/null
  echo "saved workflow $w"
done

start() { # name day
  "$Q" run start --playbook operations --name "$1" --member-of "$P" --executor agent-7 --authorized-by ana --time "$2T07:00:00Z" --json | runid
}
channels=(LinkedIn X Instagram)
for d in $(seq 9 29); do
  day=$(printf '2026-11-%02d' "$d")
  R=$(start morning-social-content "$day")
  "$Q" run event step_started --playbook operations --run "$R" --step do/0/draft --actor agent-7 --time "${day}T07:01:00Z" >/dev/null
  "$Q" run event step_completed --playbook operations --run "$R" --step do/0/draft --detail "Drafted the posts" --actor agent-7 --time "${day}T07:05:00Z" >/dev/null
  n=$(( d % 3 + 1 )); posts=""
  for i in $(seq 1 $n); do
    c=${channels[$(( (d + i) % 3 ))]}
    posts="$posts{\"channel\":\"$c\",\"title\":\"Post $i of $day\",\"url\":\"https://example.com/drafts/$d$i\"},"
  done
  "$Q" run end succeeded --playbook operations --run "$R" --actor agent-7 --time "${day}T09:00:00Z" \
    --output "{\"date\":\"$day\",\"posts\":[${posts%,}]}" >/dev/null
  R=$(start fulfill-order "$day")
  "$Q" run end succeeded --playbook operations --run "$R" --actor agent-7 --time "${day}T08:00:00Z" \
    --output "{\"order\":\"A-10$d\",\"channel\":\"Web\",\"total\":$(( d * 7 )).25}" >/dev/null
done
R=$(start close-the-month 2026-11-02)
"$Q" run event step_completed --playbook operations --run "$R" --step do/0/reconcile --detail "Reconciled 412 entries" --actor agent-7 --time 2026-11-02T08:00:00Z >/dev/null
# A note in the run's thread and a file in its artifacts/, as an agent
# leaves them, so a reviewer sees what they look like in the run folder.
"$Q" call append_thread --args "{\"playbook\":\"operations\",\"run_id\":\"$R\",\"text\":\"Two entries of the Berlin subsidiary were booked twice in October; reversed them before the close.\",\"actor\":\"agent-7\"}" >/dev/null
"$Q" call put_artifact --args "{\"playbook\":\"operations\",\"run_id\":\"$R\",\"name\":\"reconciliation.csv\",\"content\":\"account,booked,bank,difference\\n4000 Revenue,182450.00,182450.00,0.00\\n1200 Receivables,39120.50,39120.50,0.00\\n\",\"actor\":\"agent-7\"}" >/dev/null
"$Q" run end succeeded --playbook operations --run "$R" --actor agent-7 --time 2026-11-02T10:00:00Z --output '{"month":"2026-10","revenue":182450}' >/dev/null
CLOSE_RUN=$R
R=$(start morning-social-content 2026-11-29)
"$Q" run transition paused --playbook operations --run "$R" --reason "waiting for the owner's approval" --actor agent-7 --time 2026-11-29T08:00:00Z >/dev/null

echo
echo "== quire runs (newest first)"
"$Q" runs --playbook operations --limit 8
echo
echo "== quire check"
"$Q" check
echo
echo "== quire page status / render (views folded from the history in the QuickJS sandbox)"
"$Q" page status --playbook operations --name morning-social-content
"$Q" page render --playbook operations --name close-the-month
echo
echo "== a run folder: its thread and an artifact"
CLOSE_DIR=$(ls -d "$V"/playbook-runs/close-the-month-*"$CLOSE_RUN"* 2>/dev/null | head -1)
(cd "$CLOSE_DIR" && find . -type f | sort && echo "-- thread.md" && cat thread.md && echo "-- artifacts/reconciliation.csv" && cat artifacts/reconciliation.csv)
echo
echo "== git log"
git -C "$V" log -12 --format='%h %an  %s'
if "$Q" serve --help >/dev/null 2>&1; then
  echo
  echo "== quire serve"
  # A free port unless QUIRE_ADDR names one: the server prints its address
  # once it listens, so the address printed is this vault's, never another
  # program's that holds a fixed port.
  echo "quire serve prints its address once it listens: open it in a browser for the pages (playbooks, charts, runs, comments);"
  echo "under it, /v1/orgs/acme/playbooks/operations/runs (HTTP), /v1/openapi.json (the API) and /mcp (MCP over streamable HTTP)."
  echo "MCP on standard input and output: give a client the command $Q mcp --vault $V"
  [ -n "${QUIRE_DEMO_NO_SERVE:-}" ] || QUIRE_ADDR="${QUIRE_ADDR:-127.0.0.1:0}" exec "$Q" serve
fi
