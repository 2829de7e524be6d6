//go:build unix

package agent

import (
	"os"
	"syscall"
	"time"
)

// sameSys compares what a file's stat says beyond size and mtime: the
// inode (a file renamed into place) and the ctime.
func sameSys(a, b any) bool {
	x, ok1 := a.(*syscall.Stat_t)
	y, ok2 := b.(*syscall.Stat_t)
	if !ok1 || !ok2 {
		return false
	}
	return x.Dev == y.Dev && x.Ino == y.Ino && x.Ctim == y.Ctim
}

// statAtime is a file's access time, its modification time where the
// system does not say.
func statAtime(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Atim.Sec, st.Atim.Nsec)
	}
	return fi.ModTime()
}
