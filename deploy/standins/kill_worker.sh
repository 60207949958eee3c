#!/bin/bash
# Ask a question, find the worker that took the run, docker kill it mid-run, and follow the run to its end.
set -u
cd "$(dirname "$0")/../.."
psql() { docker compose exec -T db psql -U verity -d verity -Atc "$1"; }
out=$(python deploy/standins/user_check.py --email kill-check@example.com --password kill-check-password-1 --ask-only | tail -1)
echo "$out"
run=$(echo "$out" | python -c 'import json,sys; print(json.load(sys.stdin)["run"])')
ws=$(echo "$out" | python -c 'import json,sys; print(json.load(sys.stdin)["workspace"])')
echo "asked at $(date -u +%T) run=$run"
worker=""
for i in $(seq 1 600); do
  row=$(psql "select status||'|'||coalesce(worker,'')||'|'||(select count(*) from tool_calls where run_id='$run') from runs where id='$run'")
  worker=$(echo "$row" | cut -d'|' -f2); calls=$(echo "$row" | cut -d'|' -f3)
  if [ -n "$worker" ] && [ "$calls" -ge 2 ]; then break; fi
  sleep 0.3
done
echo "taken by $worker, $calls tool calls recorded, at $(date -u +%T)"
host=${worker%%:*}
victim=$(docker ps --filter "name=deploy-worker" --format '{{.ID}} {{.Names}}' | awk -v h="$host" 'index($1,h)==1 || index(h,$1)==1 {print $2}')
echo "killing $victim (container id starts $host) at $(date -u +%T.%N | cut -c1-12)"
docker kill "$victim"
t0=$(date +%s.%N)
for i in $(seq 1 600); do
  row=$(psql "select status||'|'||coalesce(worker,'') from runs where id='$run'")
  if [ "$(echo "$row" | cut -d'|' -f2)" != "$worker" ]; then break; fi
  sleep 0.2
done
echo "run now: $row; taken over after $(echo "$(date +%s.%N) - $t0" | bc) s"
python deploy/standins/user_check.py --email kill-check@example.com --password kill-check-password-1 --follow "$run" "$ws" | tail -3
echo "tool calls of the run (id, count):"
psql "select id, tool, count(*) over (partition by id) from tool_calls where run_id='$run' order by created_at"
echo "different answers among runs of this question (1 = all the same):"
psql "select count(distinct answer) from runs where question = (select question from runs where id='$run')"
docker ps -a --filter "name=deploy-worker" --format '{{.Names}} {{.Status}}'
