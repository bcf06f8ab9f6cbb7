#!/usr/bin/env bash
# The system programs the tests drive, installed from the distribution's packages when
# missing: PostgreSQL's initdb and pg_ctl (the tests start a throwaway cluster) and Chromium
# (Playwright drives it in the viewer's tests; it never downloads a browser of its own).
set -euo pipefail

have_postgres() {
    command -v initdb >/dev/null 2>&1 && return 0
    compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
}
have_chromium() {
    command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1
}

missing=()
have_postgres || missing+=(postgresql)
have_chromium || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "memvault's tests need: ${missing[*]} (install them with your package manager)" >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
        echo "memvault's tests need: ${missing[*]}; run: apt-get install ${missing[*]}" >&2
        exit 1
    }
    sudo=(sudo)
fi
echo "==> installing ${missing[*]} (apt-get), for the tests"
"${sudo[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q "${missing[@]}"
