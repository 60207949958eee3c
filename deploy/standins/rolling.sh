#!/bin/bash
# While bench/load.py runs 10 users through the proxy: the README's rolling restart onto a new image.
cd "$(dirname "$0")/../.."
wait_healthy() {
  for i in $(seq 1 60); do s=$(docker inspect -f '{{.State.Health.Status}}' "$(docker compose ps -q "$1" | head -1)"); [ "$s" = healthy ] && break; sleep 3; done
  echo "$(date -u +%T) $1 $s"
}
python bench/load.py --base-urls http://localhost:8000,http://localhost:8000 --users 10 --tokens "${TOKENS:-tokens.txt}" > "${LOG:-/tmp/load-rolling.log}" 2>&1 &
bench=$!
sleep 20
for app in app-a app-b; do
  echo "$(date -u +%T) up -d --no-deps $app"; docker compose up -d --no-deps "$app" 2>&1 | tail -1
  wait_healthy "$app"
done
echo "$(date -u +%T) up -d --no-deps worker"; docker compose up -d --no-deps worker 2>&1 | tail -2
wait_healthy worker
echo "$(date -u +%T) waiting for the bench"; wait $bench; echo "$(date -u +%T) bench done"
cat "${LOG:-/tmp/load-rolling.log}"
docker compose ps --format '{{.Name}} {{.Image}} {{.Status}}'
docker compose exec -T db psql -U verity -d verity -c "select status, count(*) from runs group by status"
