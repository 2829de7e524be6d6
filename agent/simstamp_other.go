//go:build !unix

package agent

import (
	"os"
	"time"
)

// sameSys reports false where stat carries no inode: the simulate file is
// then parsed at every read.
func sameSys(a, b any) bool { return false }

// statAtime is a file's modification time: no access time here.
func statAtime(fi os.FileInfo) time.Time { return fi.ModTime() }
