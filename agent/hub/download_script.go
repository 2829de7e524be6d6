package hub

import (
	"errors"
	"net/url"
	"strings"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// InstallParams are the values written into an install script.
type InstallParams struct {
	Server string // the server URL, http(s)://host[:port][/prefix]
	Token  string // the agent token (unpadded base64url), or an enrolment token (wire.EnrolTokenPrefix...)
	Rental string // the rental's name, for the comment only; may be empty (always for an enrolment token)
	SHA256 string // hex SHA-256 of the agent binary
}

// InstallScript returns a POSIX sh script that downloads the agent from
// p.Server, verifies it against p.SHA256, and runs `gpuledger-agent
// install`, which starts it and arranges for it to start again after a
// reboot where the host allows (docs/deploy.md). The script reads
// GPULEDGER_AGENT_DIR (default $HOME/.gpuledger), GPULEDGER_AGENT_ARGS
// (extra agent flags, split like shell words) and GPULEDGER_AGENT_INIT
// (auto, systemd or nohup).
func InstallScript(p InstallParams) (string, error) {
	u, err := url.Parse(p.Server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("hub: install script: the server URL is not an http(s) URL")
	}
	if !validToken(p.Token) {
		return "", errors.New("hub: install script: malformed token")
	}
	if len(p.SHA256) != 64 || strings.Trim(p.SHA256, "0123456789abcdef") != "" {
		return "", errors.New("hub: install script: the checksum is not a hex SHA-256")
	}
	rental := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, p.Rental)
	if rental == "" {
		rental = "(unnamed)"
	}
	what := "for the rental " + rental + ".\n# It holds that rental's agent token: do not share it or keep it."
	if wire.IsEnrolToken(p.Token) {
		what = "with an enrolment token.\n" +
			"# Every instance that runs it is announced to the token's owner, who logs\n" +
			"# it as a rental with one tap; put it in a start-up hook or an image of\n" +
			"# your own only. Do not share it (/agent revoke in the chat revokes it)."
	}
	return strings.NewReplacer(
		"@WHAT@", what,
		"@SERVER@", shQuote(strings.TrimRight(p.Server, "/")),
		"@TOKEN@", shQuote(p.Token),
		"@SHA256@", shQuote(p.SHA256),
	).Replace(installTemplate), nil
}

// installTemplate is the install script. It must stay POSIX sh (dash,
// busybox ash): shellcheck -s sh checks it in scripts/ship-lint.sh.
const installTemplate = `#!/bin/sh
# Installs and starts gpuledger-agent @WHAT@
#
#   GPULEDGER_AGENT_DIR   where the agent lives (default: $HOME/.gpuledger)
#   GPULEDGER_AGENT_ARGS  extra agent flags, e.g. "--release-cmd 'shutdown -h now'"
#   GPULEDGER_AGENT_INIT  auto (default), systemd or nohup
set -eu

server=@SERVER@
token=@TOKEN@
sha256=@SHA256@
dir=${GPULEDGER_AGENT_DIR:-${HOME:-/root}/.gpuledger}
bin=$dir/gpuledger-agent

say() { printf 'gpuledger install: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

case "$(uname -s 2>/dev/null)-$(uname -m 2>/dev/null)" in
Linux-x86_64 | Linux-amd64) ;;
*) die "the agent is built for Linux x86-64; this host is $(uname -sm)" ;;
esac

umask 077
mkdir -p "$dir" || die "cannot create $dir (set GPULEDGER_AGENT_DIR)"
tmp=$dir/.download.$$
trap 'rm -f "$tmp"' EXIT
trap 'exit 1' INT TERM

# A slow or flaky link may cut the download: each try continues the
# partial file where it stopped (an HTTP Range request), and the SHA-256
# check below catches anything that does not add up.
if command -v curl >/dev/null 2>&1; then
	fetch() { curl -fsSL --connect-timeout 30 --retry 3 -C - -o "$tmp" "$server/agent/download"; }
elif command -v wget >/dev/null 2>&1; then
	fetch() { wget -q -T 60 -c -O "$tmp" "$server/agent/download"; }
else
	die "neither curl nor wget is installed"
fi
say "downloading $server/agent/download"
tries=10
try=1
until fetch; do
	[ "$try" -lt "$tries" ] || die "download failed $tries times; run the install command again to continue it"
	have=0
	[ -f "$tmp" ] && have=$(wc -c <"$tmp")
	try=$((try + 1))
	say "download cut off after $have bytes; continuing in 3 s (try $try of $tries)"
	sleep 3
done

if command -v sha256sum >/dev/null 2>&1; then
	got=$(sha256sum "$tmp" | cut -d ' ' -f 1)
elif command -v shasum >/dev/null 2>&1; then
	got=$(shasum -a 256 "$tmp" | cut -d ' ' -f 1)
elif command -v openssl >/dev/null 2>&1; then
	got=$(openssl dgst -sha256 "$tmp" | sed 's/^.*= *//')
else
	die "no sha256sum, shasum or openssl to verify the download with"
fi
if [ "$got" != "$sha256" ]; then
	die "checksum mismatch: got $got, want $sha256 (something between here and the server changed the file)"
fi
chmod 755 "$tmp"
mv -f "$tmp" "$bin"
say "installed $bin (sha256 $sha256)"

GPULEDGER_AGENT_TOKEN=$token
export GPULEDGER_AGENT_TOKEN
# GPULEDGER_AGENT_ARGS is split like shell words, so quoted flags work.
eval "set -- ${GPULEDGER_AGENT_ARGS:-}"
exec "$bin" install --dir "$dir" --init "${GPULEDGER_AGENT_INIT:-auto}" --server "$server" "$@"
`
