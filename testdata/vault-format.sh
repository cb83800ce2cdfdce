#!/usr/bin/env bash
# Makes testdata/vault-format-N.tar.gz, a vault of the format this quire
# writes (N is vault.FormatVersion), through quire's own operations: the
# fixture that the tests of every later quire open and read, so that a
# vault written today stays readable (or is upgraded) when the format moves.
#
# Run it once per format, with the quire of that format (make build), and
# commit the tarball; never make an existing one again: it stands for the
# vaults that quire left behind. It needs the TypeScript compiler that
# saves a page's module (make tools).
set -euo pipefail
cd "$(dirname "$0")/.."
Q="$PWD/bin/quire"
N=$(sed -n 's/^const FormatVersion = \([0-9]*\)$/\1/p' vault/format.go)
OUT="$PWD/testdata/vault-format-$N.tar.gz"
[ ! -e "$OUT" ] || { echo "$OUT exists: a fixture is made once per format"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
V="$WORK/vault"
export QUIRE_VAULT="$V" GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1

"$Q" init "$V" --org acme
field() { sed -n "s/^  \"$1\": \"\\([^\"]*\\)\".*/\\1/p" | head -1; }
json_string() { python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))'; }
call() { "$Q" call "$1" --args "$2"; }

"$Q" token create --principal ana --scope playbook:write --scope playbook:read >/dev/null 2>&1
P=$(call create_project '{"name":"Operations","actor":"ana"}' | field uid)
call create_playbook '{"playbook":"operations","name":"Operations","description":"Month-end close and order fulfilment.","actor":"ana"}' >/dev/null
for w in close-the-month fulfill-order; do
  call create_definition "{\"playbook\":\"operations\",\"type\":\"workflow\",\"name\":\"$w\",\"source\":$(json_string <"testdata/vault/$w.yaml"),\"actor\":\"ana\"}" >/dev/null
done
# Version 2 of close-the-month: version 1 is read back from git by its blob.
call update_definition "{\"playbook\":\"operations\",\"type\":\"workflow\",\"name\":\"close-the-month\",\"source\":$(sed 's/^  summary: .*/  summary: Closes the books of a month./' testdata/vault/close-the-month.yaml | json_string),\"actor\":\"ana\"}" >/dev/null

start() { # name time
  "$Q" run start --playbook operations --name "$1" --member-of "$P" --executor agent-7 --authorized-by ana --time "$2" --json | field run_id
}
run_dir() { ls -d "$V"/playbook-runs/*-"$1"-* | head -1; }

# A run that ended with an output, a thread and an artifact.
A=$(start close-the-month 2026-11-02T07:00:00Z)
"$Q" run event step_completed --playbook operations --run "$A" --step do/0/work --detail "Reconciled 412 entries" --actor agent-7 --time 2026-11-02T08:00:00Z >/dev/null
call append_thread "{\"playbook\":\"operations\",\"run_id\":\"$A\",\"text\":\"Two entries were booked twice in October; reversed them.\",\"actor\":\"agent-7\"}" >/dev/null
call put_artifact "{\"playbook\":\"operations\",\"run_id\":\"$A\",\"name\":\"reconciliation.csv\",\"content\":\"account,booked\\n4000 Revenue,182450.00\\n\",\"actor\":\"agent-7\"}" >/dev/null
"$Q" run end succeeded --playbook operations --run "$A" --actor agent-7 --time 2026-11-02T10:00:00Z --output '{"month":"2026-10","revenue":182450}' >/dev/null

# A run paused, with a line written by hand (the capsule's minimal form)
# that quire numbered when it next wrote to the run.
B=$(start fulfill-order 2026-11-03T07:00:00Z)
printf '%s\n' '{"event":"step_started","timestamp":"2026-11-03T07:01:00Z","step":"do/0/pick","detail":"Picking the order by hand"}' >>"$(run_dir "$B")/run.jsonl"
"$Q" run event step_completed --playbook operations --run "$B" --step do/0/pick --actor agent-7 --time 2026-11-03T07:30:00Z >/dev/null
"$Q" run transition paused --playbook operations --run "$B" --reason "waiting for stock" --actor agent-7 --time 2026-11-03T08:00:00Z >/dev/null

# A run that failed and was archived.
C=$(start fulfill-order 2026-11-04T07:00:00Z)
"$Q" run end failed --playbook operations --run "$C" --actor agent-7 --time 2026-11-04T07:10:00Z --detail "the order was withdrawn" >/dev/null
"$Q" run transition archived --playbook operations --run "$C" --reason "withdrawn orders are not kept open" --actor ana --time 2026-11-04T07:20:00Z >/dev/null

# Comments, one resolved, one of the organization's; activity seen.
K=$(call make_comment "{\"playbook\":\"operations\",\"address\":\"operations/runs/$A\",\"text\":\"Which entries were booked twice?\",\"author\":\"ana\"}" | field id)
call resolve_comment "{\"playbook\":\"operations\",\"id\":\"$K\",\"how\":\"answered\",\"actor\":\"agent-7\"}" >/dev/null
call make_comment '{"address":"org/members/ana","text":"Welcome aboard.","author":"ben"}' >/dev/null
call mark_activity_seen "{\"member\":\"ana\",\"items\":[\"operations/runs/$A\"]}" >/dev/null

# The views of close-the-month's page, folded into .quire/views/.
"$Q" page render --playbook operations --name close-the-month >/dev/null
"$Q" check
git -C "$V" status --porcelain | { ! grep .; } || { echo "the vault is not clean"; exit 1; }
# The vault as quire left it, but for the compiled QuickJS (.quire/qjs-cache,
# made again at the first fold): its derived state in .quire/ included.
tar -C "$WORK" --exclude=vault/.quire/qjs-cache --sort=name --owner=0 --group=0 --numeric-owner -czf "$OUT" vault
echo "wrote $OUT ($(du -h "$OUT" | cut -f1))"
