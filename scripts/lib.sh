# Shared by scripts/start.sh and scripts/test.sh. Sourced, not run.

say() { printf 'switchboard: %s\n' "$*" >&2; }

# Installs dependencies on a fresh clone, and again whenever package-lock.json changed.
ensure_deps() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    say "Node.js 20.19+ and npm are required: install them first (https://nodejs.org)"
    exit 1
  fi
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    # `npm install` rather than `npm ci`: it installs the locked versions too, and some npm 11
    # releases refuse `npm ci` on a lock that omits other platforms' optional binaries.
    say "installing dependencies (npm install)..."
    npm install --no-audit --no-fund >&2
  fi
}

# Loads .env (created on first run with fresh random secrets) without overriding variables
# already set in the environment.
load_env() {
  if [ ! -f .env ]; then
    say "creating .env with fresh development secrets"
    node -e '
      const c = require("node:crypto");
      const lines = [
        "# Local development settings, created by scripts/start.sh. Not committed.",
        "INGEST_TOKEN=" + c.randomBytes(24).toString("hex"),
        "CURSOR_SECRET=" + c.randomBytes(24).toString("hex"),
        "SECRET_ENCRYPTION_KEY=" + c.randomBytes(32).toString("base64"),
        "# Lets the demo deliver webhooks to a receiver on this machine. Never in production.",
        "WEBHOOK_ALLOW_PRIVATE_TARGETS=true",
      ];
      require("node:fs").writeFileSync(".env", lines.join("\n") + "\n", { mode: 0o600 });
    '
  fi
  local line name
  while IFS= read -r line; do
    case "$line" in ''|\#*) continue ;; esac
    name=${line%%=*}
    if [ -z "${!name:-}" ]; then export "$name=${line#*=}"; fi
  done < .env
}
