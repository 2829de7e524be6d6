//go:build linux

package agent

import (
	"fmt"
	"syscall"
)

func statDisk(path string) (Disk, error) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(path, &s); err != nil {
		return Disk{}, fmt.Errorf("agent: statfs %s: %w", path, err)
	}
	bs := uint64(s.Bsize)
	return Disk{Path: path, TotalBytes: s.Blocks * bs, FreeBytes: s.Bavail * bs}, nil
}
