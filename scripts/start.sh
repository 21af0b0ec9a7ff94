#!/usr/bin/env bash
# One command from a fresh clone to a running Switchboard: dependencies, Postgres and Redis,
# compiled services, migrations, demo data, one API process and one worker process. Ctrl-C
# stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ensure_deps
load_env
bash scripts/ensure-services.sh
say "compiling (npm run build)..."
npm run --silent build -- services
node packages/db/dist/migrate-cli.js
# A development certificate for the demo webhook receiver (npm run demo:receiver); the worker
# trusts it through Node's NODE_EXTRA_CA_CERTS, as any private CA would be trusted.
if [ ! -f .dev/demo-receiver.pem ] && command -v openssl >/dev/null 2>&1; then
  mkdir -p .dev
  openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout .dev/demo-receiver.key -out .dev/demo-receiver.pem 2>/dev/null
fi
if [ -f .dev/demo-receiver.pem ]; then export NODE_EXTRA_CA_CERTS="$PWD/.dev/demo-receiver.pem"; fi
say "building the portal..."
npm run --silent portal:build >/dev/null
say "seeding the demo tenant..."
seed_json=$(node apps/cli/dist/main.js seed-demo)
api_key=$(node -e 'process.stdout.write(JSON.parse(process.argv[1]).api_key.key)' "$seed_json")
tenant_id=$(node -e 'process.stdout.write(JSON.parse(process.argv[1]).tenant.id)' "$seed_json")
port=${PORT:-3000}
base="http://127.0.0.1:${port}"
# A portal link for the demo tenant (one use, one hour; the page needs no API key), with every
# capability: secret rotation (manage_secrets) included, which the API's default link lacks.
portal_json=$(node apps/cli/dist/main.js portal link --tenant "$tenant_id" --base-url "$base" \
  --capabilities view,manage_endpoints,manage_secrets,recover)
portal_url=$(node -e 'process.stdout.write(JSON.parse(process.argv[1]).url)' "$portal_json")

# Development only (never in .env; refused with NODE_ENV=production): lets the demo deliver
# webhooks to a receiver on this machine. Set only for the API and worker started below.
if [ "${NODE_ENV:-}" != production ]; then
  export WEBHOOK_ALLOW_PRIVATE_TARGETS="${WEBHOOK_ALLOW_PRIVATE_TARGETS:-true}"
fi

pids=()
stop() {
  trap - INT TERM EXIT
  say "stopping..."
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait || true
  say "stopped"
}
trap stop INT TERM EXIT

# The compiled services (npm run start:api / start:worker), started by node itself so the pid
# we signal is the service.
node --enable-source-maps apps/api/dist/server.js & pids+=($!)
node --enable-source-maps apps/worker/dist/main.js & pids+=($!)

for _ in $(seq 1 100); do
  if node -e "fetch('${base}/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"; then break; fi
  sleep 0.2
done

cat <<MSG

  Switchboard is running.
    API      ${base}/api/v1   (OpenAPI: ${base}/api/v1/openapi.json)
    API key  ${api_key}   (demo tenant, scope admin)
    Portal   ${portal_url}   (opens once, for an hour)
             another: npm run --silent cli -- portal link --tenant ${tenant_id} --base-url ${base}

  Paste into a second terminal (the README's examples use \$B and \$KEY):
B=${base}/api/v1
KEY=${api_key}

  Try:
    curl -s "\$B/receptionists" -H "Authorization: Bearer \$KEY"
    curl -s "\$B/calls?limit=5" -H "Authorization: Bearer \$KEY"

  Ctrl-C stops the API and the worker.

MSG
# Exit (and stop the other process) as soon as either process ends.
wait -n "${pids[@]}"
