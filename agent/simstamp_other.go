//go:build !unix

package agent

// sameSys reports false where stat carries no inode: the simulate file is
// then parsed at every read.
func sameSys(a, b any) bool { return false }
