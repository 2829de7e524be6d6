# free_port prints a TCP port on 127.0.0.1 that nothing listens on now: a
# fixed default fails wherever another program holds it. Sourced by the
# hardware proofs (agent-*.sh, h200-witness.sh); each takes PORT when set.
# It can still lose a race with a program that takes the port after the
# check, so a script that starts a server says which port it used.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		(echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}
