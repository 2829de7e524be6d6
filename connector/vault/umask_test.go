package vault_test

import "syscall"

// umask sets the process umask and returns the old one, so a test can
// show that the key file is 0600 even under a permissive umask.
func umask(m int) int { return syscall.Umask(m) }
